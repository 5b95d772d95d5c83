"""Display helpers for customer pages."""

from __future__ import annotations

import re

from django import template

register = template.Library()

_TURKISH_NUMBER = re.compile(r"^\+90(\d{3})(\d{3})(\d{2})(\d{2})$")


@register.filter
def phone_display(value: object) -> str:
    """ "+905321234567" -> "0532 123 45 67": stored normalised, read the way agents dial it."""
    text = str(value or "")
    match = _TURKISH_NUMBER.match(text)
    return f"0{match[1]} {match[2]} {match[3]} {match[4]}" if match else text
