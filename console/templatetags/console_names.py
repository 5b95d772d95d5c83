"""The dashboard names insurers as agents and operators know them (Insurer.name), not by code."""

from __future__ import annotations

from collections.abc import Mapping

from django import template

register = template.Library()


@register.filter
def insurer_name(code: str, names: Mapping[str, str] | None) -> str:
    """ "anka" -> "Anka Sigorta"; a code no insurer row has (a deleted one) is shown as it is."""
    return (names or {}).get(code) or code
