"""The retry budget in background work: a dead insurer gets barely more than one call per item."""

from __future__ import annotations

import pytest
from django.utils import timezone

from integrations.pacing.arithmetic import RETRY_BUDGET_RESERVE
from sync import services as svc
from sync.models import SyncItem, SyncRun
from work.services import BUDGET_SPENT_MESSAGE, work_promote_due

pytestmark = pytest.mark.django_db


def test_dead_insurer_gets_retries_only_within_its_budget(make_policies, sandbox, quick_status_policy):
    """With no successful first attempts, only the budget's reserve of retries goes out; the rest wait.

    (The reserve refills at a fifth of a token a second, so a slow run may let one more through.)
    """
    make_policies("deniz", [f"DZ-P-{i:04d}" for i in range(20)])
    sandbox["deniz"].state.add_faults(
        [{"operation": "policy_status", "fault": "html", "http_status": 503, "rate": 1.0}]
    )
    svc.sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    ids = list(SyncItem.objects.values_list("pk", flat=True))
    for item_id in ids:  # first attempts: one call each
        assert svc.sync_item_process(item_id) == "PENDING"
    SyncItem.objects.update(next_attempt_at=timezone.now())
    work_promote_due(SyncItem)
    for item_id in ids:  # every item is due for its retry
        svc.sync_item_process(item_id)

    retries = sandbox["deniz"].state.counts()["received"]["policy_status"] - len(ids)
    assert RETRY_BUDGET_RESERVE <= retries <= RETRY_BUDGET_RESERVE + 1
    waiting = SyncItem.objects.filter(state="PENDING", error_message=BUDGET_SPENT_MESSAGE)
    assert waiting.count() == len(ids) - retries
    # Waiting on the budget does not use up a try: those items still had only their first attempt.
    assert set(waiting.values_list("attempts", flat=True)) == {1}


def test_backlog_drains_once_the_insurer_is_back(make_policies, sandbox, quick_status_policy):
    """Retries that succeed are refunded, so after an outage the whole backlog goes, not a trickle."""
    make_policies("deniz", [f"DZ-P-{i:04d}" for i in range(20)])
    sandbox["deniz"].state.add_faults(
        [{"operation": "policy_status", "fault": "html", "http_status": 503, "times": 20}]
    )
    svc.sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    ids = list(SyncItem.objects.values_list("pk", flat=True))
    for item_id in ids:  # the outage: every first attempt fails
        svc.sync_item_process(item_id)
    SyncItem.objects.update(next_attempt_at=timezone.now())
    work_promote_due(SyncItem)
    for item_id in ids:  # the insurer is back: each paid retry succeeds and is refunded
        svc.sync_item_process(item_id)
    assert SyncItem.objects.filter(state="SUBMITTED").count() == len(ids)
    assert sandbox["deniz"].state.counts()["received"]["policy_status"] == 2 * len(ids)
