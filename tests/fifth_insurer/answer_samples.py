"""Ege's answers as its contract (`sandbox.py`'s wire) shows them, one valid body per kind: the
adapter fuzz finds this module beside the adapter, as it finds a shipped insurer's."""

from __future__ import annotations

from typing import Any

SAMPLES: dict[str, dict[str, Any]] = {
    "quote": {
        "ref": "EG-T-1",
        "premium": "1234.50",
        "currency": "TRY",
        "expires": "2030-01-01T00:00:00Z",
        "covers": [{"code": "KISI_BEDENI", "title": "Kişi bedeni", "limit": "2700000.00"}],
        "plans": [{"n": 1, "total": "1234.50"}],
    },
    "address": {"uavt": "1234567890", "text": "Moda Cad. 1", "building": "B-1"},
    "policy": {"policy": {"no": "EG-P-1", "state": "LIVE", "from": "2030-01-01", "to": "2031-01-01"}},
    "error": {"fault": {"id": "E_INPUT", "text": "owner_id 10000000146 geçersiz", "field": "owner_id"}},
}


def kinds(request: Any) -> list[str]:
    """The kinds of answer this request can get, its success first."""
    path = request.path_url
    return ["address" if "/addresses/" in path else "policy" if "/policies" in path else "quote", "error"]
