"""Anka's answers as its contract shows them, one valid body per kind: the adapter fuzz
(`tests/hardening/test_adapter_fuzz.py`) breaks a few fields of each and checks the adapter
still ends in a result or a taxonomy error. Kept beside the adapter so that the insurer's own
words live in one package."""

from __future__ import annotations

from typing import Any

SAMPLES: dict[str, dict[str, Any]] = {
    "quote": {"quote_no": "AK-T-1", "premium": "1234.50", "currency": "TRY", "valid_until": "2030-01-01T00:00:00Z"},
    "address": {"uavt_code": "1234567890", "address": "Moda Cad. 1", "building_id": "B-1"},
    "policy": {"policy_no": "AK-P-1", "status": "ACTIVE"},
    "error": {"error": {"code": "VALIDATION", "message": "KimlikNo 10000000146 geçersiz", "field": "owner_id"}},
}


def kinds(request: Any) -> list[str]:
    """The kinds of answer this request can get, its success first."""
    path = request.path_url
    return ["address" if "/addresses/" in path else "policy" if "/policies" in path else "quote", "error"]
