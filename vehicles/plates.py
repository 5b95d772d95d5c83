"""A Turkish plate in the one form insurers and TRAMER match: what the desk's forms, the API and a
portfolio file all pass through, so the same car is one plate everywhere."""

from __future__ import annotations

import re

from insurehub.identity_numbers import FieldError, require_text, without_whitespace

__all__ = ["PLATE_MESSAGE", "ascii_upper", "normalize_plate"]

# Latin letters used on Turkish plates: the Turkish-only letters (Ç Ş İ Ö Ü Ğ) and Q W X are
# never issued, so a plate containing them is certainly a typo.
_PLATE_LETTERS = "ABCDEFGHIJKLMNOPRSTUVYZ"
_L = f"[{_PLATE_LETTERS}]"
_PLATE_RE = re.compile(rf"(?:0[1-9]|[1-7][0-9]|8[01])(?:{_L}[0-9]{{4}}|{_L}{{2}}[0-9]{{3,4}}|{_L}{{3}}[0-9]{{2,3}})")

PLATE_MESSAGE = "Geçerli bir plaka girin (ör. 34 ABC 123)."


def ascii_upper(value: str) -> str:
    """Upper-case only a-z, and read a dotless "ı" as "I".

    str.upper() is unsafe here: it expands characters ("ß" -> "SS", "ﬁ" -> "FI") and would let
    non-Latin look-alikes through the regex afterwards. An agent on a Turkish keyboard typing the
    plate letter I in lower case types "ı", so that one is mapped; a dotted "İ" is left alone and
    refused, since no plate carries it.
    """
    return "".join(chr(ord(ch) - 32) if "a" <= ch <= "z" else "I" if ch == "ı" else ch for ch in value)


def normalize_plate(value: object) -> str:
    """Insurers and TRAMER match plates textually, so "34 abc 123" and "34-ABC-123" must reach
    them as the one stored form, "34ABC123"."""
    text = require_text("plate", value, PLATE_MESSAGE)
    plate = ascii_upper(without_whitespace(text).replace("-", ""))
    if not _PLATE_RE.fullmatch(plate):
        raise FieldError("plate", PLATE_MESSAGE)
    return plate
