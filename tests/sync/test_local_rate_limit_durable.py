"""A durable record whose call is refused locally for want of a send slot waits; it never fails.

The nightly sync's real path (`sync_item_process` -> `work_try` -> the engine with
`attempt_limit=1`) against the sandbox; the account's send slots are taken far ahead in the
shared state, as a crowd of workers on the same account would leave them (issue 14, target 8).
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from integrations.models import Attempt, InsurerAccount, SendRateState
from integrations.retry_policies import default_policy
from sync.models import SyncRun
from sync.services import sync_item_process, sync_run_start
from work.item import WorkState
from work.services import SEND_SLOT_WAIT_MESSAGE

pytestmark = pytest.mark.django_db

SLOT_IN = 1000.0  # seconds: beyond the status call's deadline


@pytest.mark.parametrize(
    "slot_in",
    [
        SLOT_IN,
        # Inside the status call's deadline (600 s) but longer than one attempt may take: a
        # durable try does not hold its worker (and outlive its lease) waiting for it.
        3 * default_policy("policy_status").attempt_timeout,
    ],
)
def test_a_sync_item_refused_locally_goes_pending_until_its_slot_not_failed(sandbox, make_policies, slot_in):
    make_policies("anka", ["ANKA-LOCAL-1"])
    account = InsurerAccount.objects.select_related("insurer").get(insurer__code="anka", agency__code="ACENTE1")
    now = time.time()
    SendRateState.objects.update_or_create(
        account_key=account.rate_key,
        defaults={"rate": 5.0, "known_good": 5.0, "tat": now + slot_in, "window_started": now},
    )
    run = sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    item = run.items.get()
    before = timezone.now()

    state = sync_item_process(item.pk)

    item.refresh_from_db()
    assert state == WorkState.PENDING == item.state
    assert item.error_message == SEND_SLOT_WAIT_MESSAGE
    # Back when its slot comes, not at a backoff.
    assert item.next_attempt_at >= before + timedelta(seconds=slot_in - 5)
    # No try at all: nothing reached the insurer, so nothing for the caps over tries to count.
    assert (item.attempts, item.throttled_attempts) == (0, 0)
    assert sandbox["anka"].state.counts()["total_received"] == 0
    assert not Attempt.objects.filter(insurer_code="anka").exists()


def test_a_record_refused_again_and_again_for_its_slot_is_not_worn_out(sandbox, make_policies):
    """Many workers on one tight contract refuse each other's calls for want of slots: a record
    refused twenty times over is still PENDING with all its tries (it used to count each refusal
    as a throttled try, and end DEFERRED past four times the cap without the insurer seeing it)."""
    make_policies("anka", ["ANKA-LOCAL-2"])
    account = InsurerAccount.objects.select_related("insurer").get(insurer__code="anka", agency__code="ACENTE1")
    run = sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    item = run.items.get()
    for _ in range(4 * default_policy("policy_status").max_attempts + 1):
        now = time.time()
        SendRateState.objects.update_or_create(
            account_key=account.rate_key,
            defaults={"rate": 5.0, "known_good": 5.0, "tat": now + SLOT_IN, "window_started": now},
        )
        run.items.filter(pk=item.pk).update(state=WorkState.QUEUED)  # its wait over, as the pump makes it
        assert sync_item_process(item.pk) == WorkState.PENDING
    item.refresh_from_db()
    assert (item.state, item.attempts, item.throttled_attempts) == (WorkState.PENDING, 0, 0)
    assert sandbox["anka"].state.counts()["total_received"] == 0
