"""A policy the nightly sync finds cancelled at its insurer (its portal, a phone call: no
cancellation of ours) has its commission reversed through the same reversal, once."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from commissions.models import PolicyCommission
from commissions.services import kurus, policy_commission_reverse, policy_commission_reverse_found
from policies.models import Policy
from policies.services import cancellations as cancellation_service
from sync import services as sync_service
from sync.models import SyncRun
from tests.policies.conftest import run_to_the_end

from .conftest import agreement, issued_by, share

pytestmark = pytest.mark.django_db


def sync_night() -> None:
    run = sync_service.sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    for item in run.items.all():
        assert sync_service.sync_item_process(item.pk) == "SUBMITTED"


def reversals(policy: Policy) -> list[PolicyCommission]:
    return list(PolicyCommission.objects.filter(policy=policy, kind="reversal"))


def test_a_policy_found_cancelled_at_the_insurer_has_its_commission_reversed_by_the_days_left(
    agents, sandbox, quick_cancel_policy, quick_status_policy, sub_agency, sub_agent, monkeypatch
):
    monkeypatch.setattr("sync.services._send_task", lambda func, item_id: None)
    agreement(insurer="anka", rate="10.00")
    share(sub_agency, "60.00")
    policy = issued_by(sub_agent, "anka")
    sandbox["anka"].state.set_policy_status(policy.policy_no, "CANCELLED")

    sync_night()

    policy.refresh_from_db()
    assert policy.status == Policy.Status.CANCELLED
    (reversal,) = reversals(policy)
    accrual = PolicyCommission.objects.get(policy=policy, kind="accrual")
    found_on = timezone.localdate()
    # Found before its period began (it starts tomorrow): every day is left, all of it goes back.
    days = (policy.ends_on - policy.starts_on).days
    left = min((policy.ends_on - found_on).days, days)
    assert (reversal.cancellation, reversal.found_cancelled_on, reversal.refund) == (None, found_on, None)
    assert reversal.reckoning == PolicyCommission.Reckoning.DAYS
    assert reversal.amount == -kurus(accrual.amount * left / days) == -accrual.amount
    assert reversal.sub_agency_amount == -kurus(-reversal.amount * Decimal("0.60"))
    snapshot = (reversal.amount, reversal.computed_at)

    # The next night sees the same cancellation; a repeat of the signal and a recompute change nothing.
    Policy.objects.filter(pk=policy.pk).update(status=Policy.Status.ACTIVE)
    sync_night()
    policy_commission_reverse_found(policy=policy, found_on=found_on + timedelta(days=3))
    call_command("recompute_commissions", since=timezone.localdate().isoformat())
    (again,) = reversals(policy)
    assert (again.pk, again.amount, again.computed_at, again.found_cancelled_on) == (reversal.pk, *snapshot, found_on)


def test_a_policy_found_already_cancelled_here_gets_no_second_reversal(
    agents, sandbox, quick_cancel_policy, quick_status_policy, monkeypatch
):
    """Our own cancellation marks the policy CANCELLED: the sync finds no change and says nothing."""
    monkeypatch.setattr("sync.services._send_task", lambda func, item_id: None)
    agreement(insurer="cinar", rate="10.00")
    policy = issued_by(agents["ACENTE1"], "cinar")
    started = cancellation_service.cancellation_start(
        user=agents["ACENTE1"],
        policy_id=policy.pk,
        reason="customer_request",
        effective_on=policy.starts_on + timedelta(days=100),
    )
    cancellation = run_to_the_end(started)
    (ours,) = reversals(policy)
    sync_night()
    (still,) = reversals(policy)
    assert (still.pk, still.cancellation, still.found_cancelled_on, still.amount) == (
        ours.pk,
        cancellation,
        None,
        ours.amount,
    )


def test_our_cancellations_refund_replaces_a_reversal_reckoned_from_a_finding(
    agents, sandbox, quick_cancel_policy, monkeypatch
):
    """The sync found it cancelled while our cancellation's answer was still on its way: the
    insurer's refund, once it arrives, is the better figure."""
    agreement(insurer="deniz", rate="10.00")
    policy = issued_by(agents["ACENTE1"], "deniz")
    found = policy_commission_reverse_found(policy=policy, found_on=timezone.localdate())
    assert found.reckoning == PolicyCommission.Reckoning.DAYS
    started = cancellation_service.cancellation_start(
        user=agents["ACENTE1"],
        policy_id=policy.pk,
        reason="customer_request",
        effective_on=policy.starts_on + timedelta(days=100),
    )
    cancellation = run_to_the_end(started)
    (reversal,) = reversals(policy)
    assert reversal.pk == found.pk
    assert (reversal.cancellation, reversal.found_cancelled_on, reversal.refund) == (
        cancellation,
        None,
        cancellation.refund,
    )
    assert reversal.reckoning == PolicyCommission.Reckoning.REFUND
    assert policy_commission_reverse(cancellation=cancellation).pk == reversal.pk  # and only once


def test_a_policy_found_cancelled_before_reversals_existed_gets_one_from_the_command(
    agents, sandbox, quick_cancel_policy
):
    agreement(insurer="bogazici", rate="10.00")
    policy = issued_by(agents["ACENTE1"], "bogazici")
    synced = timezone.now()
    Policy.objects.filter(pk=policy.pk).update(status=Policy.Status.CANCELLED, last_synced_at=synced)
    assert not reversals(policy)
    call_command("recompute_commissions", since=timezone.localdate().isoformat())
    (reversal,) = reversals(policy)
    assert reversal.found_cancelled_on == timezone.localdate(synced) and reversal.amount < 0


def test_found_mid_period_the_days_left_after_the_finding_go_back(agents, sandbox, quick_cancel_policy):
    agreement(insurer="anka", rate="10.00")
    policy = issued_by(agents["ACENTE1"], "anka")
    accrual = PolicyCommission.objects.get(policy=policy, kind="accrual")
    found_on = policy.starts_on + timedelta(days=100)
    reversal = policy_commission_reverse_found(policy=policy, found_on=found_on)
    days = (policy.ends_on - policy.starts_on).days
    assert reversal.amount == -kurus(accrual.amount * (days - 100) / days)
    assert 0 < -reversal.amount < accrual.amount


@pytest.mark.django_db(transaction=True)
def test_the_nights_batch_drain_reverses_it_too_once(agents, sandbox, quick_cancel_policy, quick_status_policy):
    """`sync_run_process` writes statuses in batches (`_store_statuses`): the same announcement."""
    agreement(insurer="cinar", rate="10.00")
    policy = issued_by(agents["ACENTE1"], "cinar")
    sandbox["cinar"].state.set_policy_status(policy.policy_no, "CANCELLED")
    for _ in range(2):
        run = sync_service.sync_run_start(trigger=SyncRun.Trigger.COMMAND)
        sync_service.sync_run_process(run, threads=2, tick=0.1)
    (reversal,) = reversals(policy)
    assert reversal.found_cancelled_on == timezone.localdate() and reversal.amount < 0
