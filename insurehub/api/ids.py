"""Ids in API paths are taken as text and checked here, so a malformed id answers the same JSON
404 as an unknown one (or another agency's), never Django's HTML page or a 500."""

from __future__ import annotations

import re
import uuid

from rest_framework import exceptions, serializers

_MAX_PK = 2**63 - 1
_PK_RE = re.compile(r"[0-9]{1,19}")


def pk_filter(**kwargs) -> serializers.IntegerField:
    """A filter by a row's id: a number no database id can be is a field error, not an overflow."""
    return serializers.IntegerField(min_value=1, max_value=_MAX_PK, **kwargs)


def pk_or_404(value: str) -> int:
    if not _PK_RE.fullmatch(value) or not 0 < int(value) <= _MAX_PK:
        raise exceptions.NotFound()
    return int(value)


def uuid_or_404(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise exceptions.NotFound() from None
