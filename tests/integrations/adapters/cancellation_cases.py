"""Shared helpers of the adapters' cancellation and production-list tests (`test_<code>_cancellation.py`)."""

from __future__ import annotations

from typing import Any

from integrations.calling.calls import insurer_operation_run, new_reference

PREMIUM, STARTS_ON, ENDS_ON = "1629.27", "2026-06-01", "2027-06-01"
CANCELLED = {"status": "CANCELLED", "refund": "812.40", "cancelled_on": "2026-12-01"}
MAY = {"issued_from": "2026-05-01", "issued_to": "2026-05-31"}


def no_sleep(seconds: float) -> None:
    """The engine's waits, skipped: the sandbox's faults do not depend on time passing."""


def seed(server: Any, policy_no: str, **changes: Any) -> str:
    """A policy of ACENTE1's issued on the insurer's portal on 31 May 2026 (no quote of ours)."""
    policy = {
        "policy_no": policy_no,
        "status": "ACTIVE",
        "agency": "ACENTE1",
        "product": "trafik",
        "premium": PREMIUM,
        "starts_on": STARTS_ON,
        "ends_on": ENDS_ON,
        "issued_on": "2026-05-31",
    }
    server.state.seed_policies([{**policy, **changes}])
    return policy_no


def cancel(endpoint: Any, policy_no: str, *, reference: str | None = None, **changes: Any) -> Any:
    data = {"policy_no": policy_no, "reason": "customer_request", "effective_on": "2026-12-01", **changes}
    return insurer_operation_run(
        endpoint=endpoint, operation="cancel_policy", data=data, reference=reference or new_reference(), sleep=no_sleep
    )


def list_policies(endpoint: Any, data: dict[str, Any] | None = None) -> Any:
    return insurer_operation_run(endpoint=endpoint, operation="policy_list", data=data or MAY, sleep=no_sleep)
