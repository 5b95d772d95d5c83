"""django-q2 task entry points: thin, each calls one service."""

from __future__ import annotations


def cancellation_process(cancellation_id: int) -> str:
    from policies.services.cancellations import cancellation_process as process

    return process(cancellation_id)
