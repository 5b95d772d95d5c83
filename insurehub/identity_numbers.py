"""The field error every input check raises, and the identity-number check several apps share.

A customer's record, a quote's owner and an imported policy all carry a TCKN or VKN and must
refuse the same typos with the same Turkish words, so the check lives below every app that
takes one (`quotes.validation`, `customers.validators`, `policies.services.imports`) and none
of them imports another for it. Plain Python: the callers turn `FieldError` into their own
error types (a form error, a serializer error, an import row's problem).
"""

from __future__ import annotations

import re

from stdnum.exceptions import ValidationError as StdnumValidationError
from stdnum.tr import tckimlik, vkn

REQUIRED_MESSAGE = "Bu alan zorunludur."
_OWNER_ID_FORMAT_MESSAGE = "T.C. kimlik numarası 11, vergi kimlik numarası 10 haneli olmalıdır; yalnızca rakam girin."
_OWNER_ID_INVALID_MESSAGE = "Geçersiz T.C. kimlik / vergi numarası."
# [0-9] rather than \d: \d also matches Arabic-Indic and other Unicode digits, which no insurer
# accepts.
DIGITS_RE = re.compile(r"[0-9]+")


class FieldError(ValueError):
    """A bad value for one named input field, with a message fit to show an agent (Turkish)."""

    def __init__(self, field: str, message: str) -> None:
        # Both go into args so the exception survives pickling (task queues, multiprocessing).
        super().__init__(field, message)
        self.field = field
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"FieldError({self.field!r}, {self.message!r})"


def is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def without_whitespace(value: str) -> str:
    return "".join(value.split())


def require_text(field: str, value: object, non_text_message: str) -> str:
    """Text, or the field's error: a number where text belongs has already lost what it was."""
    if is_blank(value):
        raise FieldError(field, REQUIRED_MESSAGE)
    if not isinstance(value, str):
        raise FieldError(field, non_text_message)
    return value


def validate_owner_id(value: object) -> str:
    """A wrong identity number is the most common reason an insurer refuses a quote, and the
    checksums catch nearly every typo before the round trip. Identity numbers must arrive as
    text: an int would silently drop a VKN's leading zero."""
    text = require_text("owner_id", value, _OWNER_ID_FORMAT_MESSAGE)
    number = without_whitespace(text)
    if not DIGITS_RE.fullmatch(number) or len(number) not in (10, 11):
        raise FieldError("owner_id", _OWNER_ID_FORMAT_MESSAGE)
    module = tckimlik if len(number) == 11 else vkn
    try:
        return module.validate(number)
    except StdnumValidationError:
        raise FieldError("owner_id", _OWNER_ID_INVALID_MESSAGE) from None


def owner_id_kind(value: str) -> str:
    """Some insurers take persons and companies in different request fields; the length of a
    valid number is what tells them apart."""
    return "tckn" if len(validate_owner_id(value)) == 11 else "vkn"
