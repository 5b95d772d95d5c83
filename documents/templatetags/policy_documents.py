"""`{% document_status policy %}`: a policy's document state, for any page that lists policies."""

from __future__ import annotations

from typing import Any

from django import template

from documents.views import document_status_context

register = template.Library()


@register.inclusion_tag("documents/_document_status.html", takes_context=True)
def document_status(context: template.Context, policy: Any) -> dict[str, Any]:
    # Django copies the CSRF token into an inclusion tag's context itself.
    return document_status_context(context["request"], policy)
