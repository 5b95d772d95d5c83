"""Display helpers for the policy and renewal pages."""

from __future__ import annotations

from datetime import date

from django import template

from policies import periods
from quotes.services.policies import plate_display as _plate_display

register = template.Library()


@register.filter
def plate_display(value: object) -> str:
    """ "34ABC123" -> "34 ABC 123"; an empty plate stays empty (the template shows a dash)."""
    return _plate_display(str(value or ""))


@register.filter
def days_left(ends_on: date | None) -> str:
    """How long until a policy ends, in the agent's words: "bugün", "yarın", "12 gün"."""
    if ends_on is None:
        return ""
    days = (ends_on - periods.today()).days
    if days < 0:
        return f"{-days} gün önce bitti"
    if days == 0:
        return "bugün"
    if days == 1:
        return "yarın"
    return f"{days} gün"
