"""Lira written the Turkish way, "1.234.567,50": one rule for every page, whatever the browser's language."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

_CENTS = Decimal("0.01")


def turkish_amount(value: object) -> str:
    """4312.5 -> "4.312,50"; "" for nothing or for what is not a number (a page shows no "NaN")."""
    if value is None or value == "":
        return ""
    try:
        amount = Decimal(str(value)).quantize(_CENTS, rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return ""
    return f"{amount:,.2f}".replace(",", "\0").replace(".", ",").replace("\0", ".")
