"""The application's errors: one family, one meaning per kind, answered the same way everywhere.

A service says *what* went wrong by the kind it raises; it never knows whether a desk page or the
API is asking. The two translations live in one place each: `insurehub.api_errors` (the DRF
exception handler: JSON and a status) and `insurehub.desk_errors` (form errors on the
named fields, a message on the page, 404 or 403). A view lists no exception types.

Every message is Turkish and meant for the agent. Kinds and their HTTP status:

- `Invalid` (400): the input has errors; `field_errors` names each bad field.
- `Forbidden` (403): the user may not do this (no agency, a deactivated one, not its admin).
- `NotFound` (404): nothing the user may reach has that id (Django's `DoesNotExist` means the same).
- `Conflict` (409): the request is fine, but the record's state refuses it now (an expired quote).
- `Unavailable` (503): the platform cannot do it now, through no fault of the request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

FieldErrors = dict[str, list[str]]


class AppError(Exception):
    """Base of the family: a Turkish `message`, optional `field_errors`, an HTTP `status` by kind."""

    status: ClassVar[int] = 400
    default_message: ClassVar[str] = "İşlem yapılamadı."

    def __init__(self, message: str = "", *, field_errors: Mapping[str, str | Sequence[str]] | None = None) -> None:
        self.field_errors: FieldErrors = {
            field: [messages] if isinstance(messages, str) else list(messages)
            for field, messages in (field_errors or {}).items()
        }
        self.message = message or self.default_message
        super().__init__(self.message)


class Invalid(AppError):
    """The input has errors; nothing was saved. `errors` maps each field to its message(s), as
    given (services have long passed one message per field); `field_errors` always holds lists."""

    status = 400
    default_message = "Girilen bilgilerde hata var."

    def __init__(self, errors: Mapping[str, str | Sequence[str]], message: str = "") -> None:
        self.errors = dict(errors)
        summary = "; ".join(f"{field}: {_text(value)}" for field, value in self.errors.items())
        super().__init__(message or summary, field_errors=self.errors)


class Forbidden(AppError):
    status = 403
    default_message = "Bu işlem için yetkiniz yok."


class NotFound(AppError):
    status = 404
    default_message = "Kayıt bulunamadı."


class Conflict(AppError):
    status = 409
    default_message = "İşlem şu anda yapılamıyor."


class Unavailable(AppError):
    status = 503
    default_message = "Hizmet şu anda kullanılamıyor; biraz sonra yeniden deneyin."


class NoActiveAgency(Forbidden, PermissionError):
    """The user acts for no agency, or for a deactivated one: they write nothing.

    Also a `PermissionError`, which these services raised before the family existed; callers
    and tests that catch that keep working."""


def _text(value: str | Sequence[str]) -> str:
    return value if isinstance(value, str) else " ".join(value)
