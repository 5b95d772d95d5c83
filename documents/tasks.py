"""django-q2 task entry points: thin, each calls one service."""

from __future__ import annotations


def document_process(document_id: int) -> str:
    from documents.services import document_process as process

    return process(document_id)
