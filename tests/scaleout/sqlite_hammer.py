"""One worker process of `test_sqlite_workers`: hammers the shared SQLite file, counts what failed.

Run as `python -c "from tests.scaleout.sqlite_hammer import main; main()" <threads> <key>` with
INSUREHUB_USE_TEST_DB=1. For every sync item of the run it competes with the other processes for
the claim, then walks the record through IN_FLIGHT -> PENDING -> QUEUED -> IN_FLIGHT -> SUBMITTED,
writing an `Attempt` row and the shared send-rate and retry-budget state at every step, as a
worker does. Prints one JSON line: {"claimed", "submitted", "operational_errors", "other_errors", "first"}.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
from typing import TypedDict


class Totals(TypedDict):
    """What the hammer counts, printed as JSON for the test to read."""

    claimed: int
    submitted: int
    operational_errors: int
    other_errors: int
    first: str  # the first error's text


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "insurehub.settings.test")
    import django

    django.setup()
    from django.db import OperationalError, connection
    from django.utils import timezone

    from integrations.answers.taxonomy import ErrorKind, InsurerError
    from integrations.models import Attempt
    from integrations.pacing.shared_state import DatabaseSharedState
    from integrations.retry_policies import default_policy
    from sync.models import SyncItem
    from work.services import (
        work_claim,
        work_mark_retry,
        work_mark_submitted,
        work_promote_one,
    )

    threads, key = int(sys.argv[1]), sys.argv[2]
    policy = default_policy("policy_status").with_overrides(base_delay=0.0, max_delay=0.0, max_attempts=5)
    state = DatabaseSharedState()
    ids = list(SyncItem.objects.order_by("pk").values_list("pk", flat=True))
    connection.close()
    totals: Totals = {"claimed": 0, "submitted": 0, "operational_errors": 0, "other_errors": 0, "first": ""}
    lock = threading.Lock()

    def attempt_row(item_id: int, ok: bool) -> None:
        now = timezone.now()
        Attempt.objects.create(
            insurer_code="anka",
            account_key=f"anka:{key}",
            operation="policy_status",
            attempt_no=1,
            reference=f"sqlite-{item_id}",
            ok=ok,
            latency_ms=1.0,
            started_at=now,
            finished_at=now,
        )

    def shared_state(ok: bool) -> None:
        state.reserve_send_slot("anka:SQLITE", initial_rate=10_000.0, ceiling=10_000.0, max_wait=0.0)
        state.record_outcome("anka:SQLITE", throttled=not ok)
        state.budget_record_first("anka", ok=ok, ratio=0.2)
        if not ok:
            state.budget_try_spend("anka")

    def walk(item_id: int) -> None:
        if not work_claim(SyncItem, item_id, lease_seconds=60):
            return
        with lock:
            totals["claimed"] += 1
        item = SyncItem.objects.get(pk=item_id)
        shared_state(ok=False)
        attempt_row(item_id, ok=False)
        error = InsurerError(ErrorKind.UNAVAILABLE, provider_code="503", message="hammer")
        work_mark_retry(item, error=error, policy=policy, attempt_cap=5)
        work_promote_one(SyncItem, item_id)
        if not work_claim(SyncItem, item_id, lease_seconds=60):
            return
        item.refresh_from_db()
        shared_state(ok=True)
        attempt_row(item_id, ok=True)
        if work_mark_submitted(item, previous_status="ACTIVE", observed_status="ACTIVE"):
            with lock:
                totals["submitted"] += 1

    def run(offset: int) -> None:
        # Each thread walks every item, from its own starting point: all of them compete for each claim.
        order = ids[offset:] + ids[:offset]
        for item_id in order:
            try:
                walk(item_id)
            except OperationalError as exc:
                with lock:
                    totals["operational_errors"] += 1
                    totals["first"] = totals["first"] or f"{exc}"
            except Exception:  # counted and reported: the test fails on it
                with lock:
                    totals["other_errors"] += 1
                    totals["first"] = totals["first"] or traceback.format_exc(limit=3)
        connection.close()

    workers = [threading.Thread(target=run, args=(i * len(ids) // max(threads, 1),)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(json.dumps(totals))


if __name__ == "__main__":
    main()
