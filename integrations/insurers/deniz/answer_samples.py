"""Deniz's answers as its contract shows them, one valid body per kind (issuance is a request
polled to its end, looked up by our reference): the adapter fuzz breaks a few fields of each."""

from __future__ import annotations

from typing import Any

REQUEST_STATE: dict[str, Any] = {"request_id": "DZ-R-1", "status": "ISSUED", "policy_no": "DZ-P-1"}
SAMPLES: dict[str, dict[str, Any]] = {
    "quote": {
        "quote_id": "DZ-Q-1",
        "gross_premium": {"amount": "1234.50", "currency": "TRY"},
        "expires_at": "2030-01-01T00:00:00Z",
    },
    "address": {"uavt_code": "1234567890", "line": "Moda Cad. 1", "building_ref": "B-1"},
    "policy": {"policy_no": "DZ-P-1", "state": "IN_FORCE"},
    "request": REQUEST_STATE,
    "lookup": {"items": [REQUEST_STATE]},
    "error": {"code": "INVALID_REQUEST", "detail": "owner 10000000146 declined"},
    "duplicate": {"code": "DUPLICATE_REFERENCE", "request_id": "DZ-R-1"},
}


def kinds(request: Any) -> list[str]:
    """The kinds of answer this request can get, its success first."""
    path = request.path_url
    if path.startswith("/policy-requests?"):
        return ["lookup", "error"]
    if path.startswith("/policy-requests"):
        return ["request", "error", "duplicate"]
    return ["address" if "/addresses/" in path else "policy" if "/policies/" in path else "quote", "error"]
