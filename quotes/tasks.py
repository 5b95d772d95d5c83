"""django-q2 task entry points: thin, each calls one service."""

from __future__ import annotations

from quotes.services.quote_requests import quote_request_dispatch as _dispatch


def quote_request_dispatch(request_id: int) -> int:
    return _dispatch(request_id)


def issuance_process(issuance_id: int) -> str:
    from quotes.services.issuance import issuance_process as process

    return process(issuance_id)
