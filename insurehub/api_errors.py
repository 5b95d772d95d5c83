"""The API's one exception handler (`REST_FRAMEWORK["EXCEPTION_HANDLER"]`): application errors
and Django's `DoesNotExist` in the shapes the API has always answered, so no API view maps them.

- `Invalid` → 400 `{"field": ["message", ...]}`; a view whose body nests fields (the quote
  request's `data`) says so with a `field_errors_shape(field_errors) -> dict` attribute.
  An `Invalid` that names no field answers `{"non_field_errors": ["message"]}`, DRF's own shape.
- every other kind → its status and `{"detail": "message"}`.
- `DoesNotExist` → 404 `{"detail": ...}` with DRF's own text, the same for every model: an
  object of another agency must answer exactly like an unknown id.
- a body no parser could read → 400 `{"detail": ...}` in Turkish (`insurehub.api_input`).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

from insurehub.api_input import BODY_UNREADABLE_MESSAGE, BodyUnreadable
from insurehub.errors import AppError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, AppError):
        exc = api_exception(exc, view=context.get("view"))
    elif isinstance(exc, ObjectDoesNotExist):
        exc = exceptions.NotFound()
    elif isinstance(exc, exceptions.ParseError) and not isinstance(exc, BodyUnreadable):
        # A multipart or form body DRF could not read says so in English: in Turkish, like JSON's.
        exc = BodyUnreadable(BODY_UNREADABLE_MESSAGE)
    # DRF's handler adds the headers (Retry-After, WWW-Authenticate) and rolls back the transaction.
    return drf_exception_handler(exc, context)


def api_exception(error: AppError, *, view: Any = None) -> exceptions.APIException:
    """The DRF exception an application error answers as."""
    if error.status == 400:
        if not error.field_errors:
            return exceptions.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [error.message]})
        shape = getattr(view, "field_errors_shape", None)
        return exceptions.ValidationError(shape(error.field_errors) if shape else error.field_errors)
    answer = exceptions.APIException(error.message)
    answer.status_code = error.status
    return answer
