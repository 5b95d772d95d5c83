"""What a log line is about: the request, the agency, the insurer, the operation, the record.

One `ContextVar` holds these fields for the code running now; the JSON log format
(`integrations.log_json`, `LOG_FORMAT=json`) writes them beside every line, so on-call can follow
one request or one issuance through every logger without each call site passing them.

- `RequestContextMiddleware` binds `request_id` (the caller's `X-Request-ID` when it is a short
  token, else a new one; echoed on the response, so a proxy's and our logs meet) and the user's
  `agency` code.
- `log_context_bound(insurer=…, operation=…, record_id=…)` binds more around a piece of work
  (`work.services.work_try` binds the record and its insurer).

Only identifiers go here: an agency's code, an insurer's code, a record's model and id. Never a
name, an identity number, a phone or an e-mail address.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse

FIELDS = ("request_id", "agency", "insurer", "operation", "record_id")
_context: ContextVar[dict[str, object]] = ContextVar("insurehub_log_context", default={})  # noqa: B039 - never mutated
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def log_context() -> dict[str, str]:
    """The fields bound now, as text; empty ones left out."""
    fields = {name: str(value) for name, value in _context.get().items()}
    return {name: value for name, value in fields.items() if value}


@contextmanager
def log_context_bound(**fields: object) -> Iterator[None]:
    """Bind fields (None ones skipped) for the block; the outer ones come back after it."""
    # Values are kept as given and turned into text when a line is written (the agency is lazy).
    added = {name: value for name, value in fields.items() if value is not None and name in FIELDS}
    token = _context.set({**_context.get(), **added})
    try:
        yield
    finally:
        _context.reset(token)


def request_id_from(request: HttpRequest) -> str:
    given = request.headers.get("X-Request-ID", "")
    return given if _REQUEST_ID.match(given) else uuid.uuid4().hex


class RequestContextMiddleware:
    """After authentication: binds the request id and the user's agency for the request's log lines."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_from(request)
        # Carried on the request for the views and error pages; HttpRequest declares no such attribute.
        request.request_id = request_id  # type: ignore[attr-defined]
        with log_context_bound(request_id=request_id, agency=_agency_code(request)):
            response = self.get_response(request)
        response["X-Request-ID"] = request_id
        return response


class _AgencyOf:
    """The request user's agency code, looked up only when a log line asks for it (most requests
    log nothing: two queries each would be a tax on every page), then kept."""

    def __init__(self, request: HttpRequest) -> None:
        self._request = request
        self._code: str | None = None

    def __str__(self) -> str:
        if self._code is None:
            self._code = ""
            user = getattr(self._request, "user", None)
            if user is not None and user.is_authenticated:
                profile = getattr(user, "agent_profile", None)
                self._code = profile.agency.code if profile is not None else ""
        return self._code


def _agency_code(request: HttpRequest) -> _AgencyOf:
    return _AgencyOf(request)
