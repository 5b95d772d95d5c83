"""Inputs for the cancellation and production-list tests (CONTRACTS.md, "Cancellation" and
"Production list"), and each insurer's `CANCEL` client (`sandbox/insurers/<code>/wire.py`).

Each client speaks its insurer's wire (`cancel_response`, `list_response`) and reads the answer
back into one shape (`sandbox.hand_wire.Cancelled`, `Page`), so that the behaviour every
insurer shares is tested once:

- `cancel(...)` -> `Cancelled(code, result)`: `code` is "OK" for a success, else the insurer's
  own code (`ALREADY_CANCELLED`, `BS-330`, `BIZ_DUPLICATE_REQUEST`, ...); `result` is the
  cancellation an answer carries, as `{"policy_no", "refund", "cancelled_on"}` (ISO date);
- `list_page(...)` -> `Page(code, items, following)`: the items in the platform's words and
  what the next page is asked by (None after the last);
- `status_word(policy_no)`: the policy's status as `policy_status` says it on the wire, which
  reads `cancelled_word` once it is cancelled.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from sandbox.hand_wire import by_code
from sandbox.insurers.anka.wire import AnkaCancel
from sandbox.insurers.bogazici.wire import BogaziciCancel
from sandbox.insurers.cinar.wire import CinarCancel
from sandbox.insurers.deniz.wire import DenizCancel

__all__ = ["AnkaCancel", "BogaziciCancel", "CinarCancel", "DenizCancel"]

# The contract's example: 1629.27 TRY over 2026-06-01 .. 2027-06-01 (365 days), cancelled from
# 2026-12-01 (182 days left): 1629.27 x 182 / 365 = 812.3997, half-up 812.40.
PREMIUM = "1629.27"
STARTS_ON, ENDS_ON = "2026-06-01", "2027-06-01"
EFFECTIVE_ON = "2026-12-01"
REFUND = "812.40"
ISSUED_ON = "2026-05-31"
LIST_FROM, LIST_TO = "2026-05-01", "2026-05-31"


def seeded(policy_no: str, **changes: Any) -> dict[str, Any]:
    """A policy of ACENTE1's issued on the insurer's portal (no quote of ours), as the control API takes it."""
    return {
        "policy_no": policy_no,
        "status": "ACTIVE",
        "agency": "ACENTE1",
        "product": "trafik",
        "premium": PREMIUM,
        "starts_on": STARTS_ON,
        "ends_on": ENDS_ON,
        "issued_on": ISSUED_ON,
        **changes,
    }


CANCEL_CLIENTS = by_code("CANCEL")


def read_list(client: Any, issued_from: str, issued_to: str) -> tuple[list[dict[str, Any]], int]:
    """Every page of a production list, in order, and how many pages were read."""
    items: list[dict[str, Any]] = []
    position, pages = None, 0
    while True:
        page = client.list_page(issued_from, issued_to, position)
        assert page.code == "OK", page
        pages += 1
        items += page.items
        if page.following is None:
            return items, pages
        position = page.following


def today_in_turkiye() -> str:
    """Issue dates are Türkiye's calendar days (UTC+3): a test near midnight UTC must say so."""
    return datetime.now(ZoneInfo("Europe/Istanbul")).date().isoformat()
