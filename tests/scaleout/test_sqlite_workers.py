"""The embedded default: several worker processes share one SQLite file without "database is locked".

Not marked `scaleout`: it runs in phase 1 of `scripts/test.sh`, on SQLite (WAL, IMMEDIATE
transactions, a busy timeout; see `insurehub/settings/base.py`). On PostgreSQL it is skipped.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.django_db(transaction=True)

PROCESSES = 3
THREADS = 4
ITEMS = 200


def test_three_worker_processes_hammer_one_sqlite_file(worker_env, seeded_accounts):
    """3 processes x 4 threads compete for every one of 200 sync items and walk each through
    QUEUED -> IN_FLIGHT -> PENDING -> QUEUED -> IN_FLIGHT -> SUBMITTED, writing an Attempt row and
    the shared send-rate / retry-budget rows at each step. No OperationalError ("database is
    locked") anywhere, and the guarded transitions still let exactly one worker finish each item."""
    from django.db import connection

    from integrations.models import Attempt, RetryBudgetBucket, SendRateState
    from policies.models import Policy
    from sync.models import SyncItem, SyncRun

    if connection.vendor != "sqlite":
        pytest.skip("the embedded default's test: runs on SQLite (phase 1)")
    account = seeded_accounts[0]
    run = SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND)
    policies = Policy.objects.bulk_create(
        Policy(
            agency=account.agency,
            insurer=account.insurer,
            account=account,
            product="trafik",
            policy_no=f"AK-P-SQLITE-{i:04d}",
            owner_id="10000000146",
        )
        for i in range(ITEMS)
    )
    SyncItem.objects.bulk_create(
        SyncItem(run=run, policy=policy, payload={"policy_no": policy.policy_no, "insurer": "anka"})
        for policy in policies
    )

    command = [sys.executable, "-c", "from tests.scaleout.sqlite_hammer import main; main()", str(THREADS)]
    processes = [
        subprocess.Popen(
            [*command, f"P{n}"], cwd=REPO_ROOT, env=worker_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for n in range(PROCESSES)
    ]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=240)
        assert process.returncode == 0, err.decode()[-2000:]
        results.append(json.loads(out.decode().strip().splitlines()[-1]))

    assert sum(r["operational_errors"] for r in results) == 0, [r["first"] for r in results if r["first"]]
    assert sum(r["other_errors"] for r in results) == 0, [r["first"] for r in results if r["first"]]
    states = list(SyncItem.objects.values_list("state", flat=True))
    assert set(states) <= {"SUBMITTED", "DEFERRED"}, set(states)
    # Each item was finished by exactly one worker.
    assert sum(r["submitted"] for r in results) == states.count("SUBMITTED") > 0
    assert Attempt.objects.filter(reference__startswith="sqlite-").count() >= 2 * ITEMS
    assert SendRateState.objects.filter(account_key="anka:SQLITE").exists()
    assert RetryBudgetBucket.objects.filter(insurer_code="anka").exists()
