"""Drains: the nightly sync's items claimed in batches, tried by a pool of threads, written in
batches — over HTTP to the sandbox insurers, on the real test database."""

from __future__ import annotations

import pytest
from django.utils import timezone

from integrations.calling.channel import WORKER_STOPPED
from integrations.models import Attempt
from policies.models import Policy
from sync import services as svc
from sync.models import SyncItem, SyncRun
from work import services as work
from work.item import WorkState
from work.services import work_claim, work_reclaim_expired

pytestmark = pytest.mark.django_db(transaction=True)


def _run() -> SyncRun:
    return svc.sync_run_start(trigger=SyncRun.Trigger.COMMAND)


def test_a_drain_syncs_every_queued_item_once_and_closes_the_run(make_policies, sandbox, quick_status_policy):
    """25 items at two insurers, 4 threads: each insurer asked once per policy, every answer
    stored on its item and policy, one attempt row per call, the run closed with its counts."""
    make_policies("anka", [f"ANKA-D-{i}" for i in range(15)])
    cancelled = make_policies("bogazici", [f"BGZ-D-{i}" for i in range(10)], at_insurer="CANCELLED")
    run = _run()

    claimed = svc.sync_drain(threads=4)

    assert claimed == 25
    assert set(run.items.values_list("state", flat=True)) == {WorkState.SUBMITTED}
    assert sandbox["anka"].state.counts()["received"]["policy_status"] == 15
    assert sandbox["bogazici"].state.counts()["received"]["policy_status"] == 10
    assert Attempt.objects.filter(operation="policy_status").count() == 25
    assert set(Policy.objects.filter(pk__in=[p.pk for p in cancelled]).values_list("status", flat=True)) == {
        "CANCELLED"
    }
    assert not Policy.objects.filter(last_synced_at__isnull=True).exists()
    item = run.items.get(policy=cancelled[0])
    assert (item.previous_status, item.observed_status, item.attempts) == ("ACTIVE", "CANCELLED", 1)
    run.refresh_from_db()
    assert run.finished_at is not None and run.counts["done"] == 25 and run.counts["changed"] == 10


def test_a_run_processed_in_process_ends_with_nothing_lost(make_policies, sandbox, quick_status_policy):
    """Faults, throttles and unknown policies on the way: `sync_run_process` (batch claims,
    batch writes) still leaves every item final — SUBMITTED, or FAILED for the unknown ones."""
    make_policies("anka", [f"ANKA-L-{i}" for i in range(20)])
    make_policies("deniz", [f"DNZ-L-{i}" for i in range(10)])
    gone = make_policies("anka", ["ANKA-L-GONE-1", "ANKA-L-GONE-2"], at_insurer=None)
    sandbox["anka"].state.add_faults([{"operation": "policy_status", "fault": "html", "http_status": 503, "times": 3}])
    sandbox["deniz"].state.add_faults(
        [{"operation": "policy_status", "fault": "throttle", "wait_seconds": 0.3, "times": 2}]
    )
    run = _run()

    counts = svc.sync_run_process(run, threads=6, tick=0.1)

    assert (counts["total"], counts["done"], counts["failed"], counts["queued"] + counts["pending"]) == (32, 30, 2, 0)
    assert set(run.items.filter(state="FAILED").values_list("policy_id", flat=True)) == {p.pk for p in gone}
    # Every refused or throttled call was followed by one more try of the same item, and no other.
    assert sandbox["anka"].state.counts()["received"]["policy_status"] == 22 + 3
    assert sandbox["deniz"].state.counts()["received"]["policy_status"] == 10 + 2
    assert Attempt.objects.filter(operation="policy_status").count() == 25 + 12


def test_an_answer_whose_lease_was_taken_back_is_not_written(make_policies, sandbox, quick_status_policy, monkeypatch):
    """Between the answer and the batch write, one item's lease runs out and another worker
    claims it: the drain writes the others, not that one, nor its policy."""
    make_policies("anka", ["ANKA-F-1", "ANKA-F-2", "ANKA-F-3"], at_insurer="CANCELLED")
    run = _run()
    taken: list[int] = []
    real_store = svc._store_statuses

    def store_late(done):
        if not taken:
            item = done[0][0]
            SyncItem.objects.filter(pk=item.pk).update(lease_expires_at=timezone.now())
            assert work_reclaim_expired(SyncItem) == [item.pk]
            assert work_claim(SyncItem, item.pk, lease_seconds=300)
            taken.append(item.pk)
        return real_store(done)

    monkeypatch.setattr(svc, "_store_statuses", store_late)

    svc.sync_drain(threads=3)

    lost = SyncItem.objects.get(pk=taken[0])
    assert (lost.state, lost.observed_status, lost.attempts) == (WorkState.IN_FLIGHT, "", 0)
    assert Policy.objects.get(pk=lost.policy_id).status == "ACTIVE"
    assert Policy.objects.get(pk=lost.policy_id).last_synced_at is None
    others = run.items.exclude(pk=lost.pk)
    assert set(others.values_list("state", flat=True)) == {WorkState.SUBMITTED}
    assert set(Policy.objects.exclude(pk=lost.policy_id).values_list("status", flat=True)) == {"CANCELLED"}


def test_a_stopping_cluster_hands_claimed_items_back_without_a_call(
    make_policies, sandbox, quick_status_policy, monkeypatch
):
    """The stop comes right after a claim: the items claimed are handed back due now, no try
    used, nothing sent; what was never claimed stays QUEUED; nothing is left IN_FLIGHT."""
    make_policies("anka", [f"ANKA-S-{i}" for i in range(10)])
    run = _run()
    watch = work._StopWatch(None)
    monkeypatch.setattr(work, "_stop_watch", watch)
    real_claim = svc.work_claim_batch
    claimed: list[int] = []

    def claim_then_stop(*args, **kwargs):
        batch = real_claim(*args, **kwargs)
        claimed.extend(item.pk for item in batch)
        watch.event.set()  # the cluster's SIGTERM, as its watch would see it
        return batch

    monkeypatch.setattr(svc, "work_claim_batch", claim_then_stop)

    assert svc.sync_drain(threads=4) == len(claimed) < 10

    states = dict(run.items.values_list("pk", "state"))
    assert sorted(pk for pk, state in states.items() if state == WorkState.PENDING) == sorted(claimed)
    assert sum(1 for state in states.values() if state == WorkState.QUEUED) == 10 - len(claimed)
    handed = run.items.filter(pk__in=claimed)
    assert set(handed.values_list("provider_code", "attempts", "lease_expires_at")) == {(WORKER_STOPPED, 0, None)}
    assert sandbox["anka"].state.counts()["received"].get("policy_status", 0) == 0


def test_a_drain_out_of_time_sends_a_successor(make_policies, sandbox, quick_status_policy, sent_tasks, monkeypatch):
    """A drain that must end before its items do hands over to a new drain task, not to the lease."""
    make_policies("anka", [f"ANKA-T-{i}" for i in range(6)])
    _run()
    monkeypatch.setattr(svc._Drain, "_stopping", lambda self: self.claimed >= 2)

    claimed = svc.sync_drain(threads=2)

    assert 2 <= claimed < 6
    assert SyncItem.objects.filter(state=WorkState.SUBMITTED).count() == claimed
    assert SyncItem.objects.filter(state=WorkState.QUEUED).count() == 6 - claimed
    assert sent_tasks == [("sync.tasks.sync_drain", None)]


def test_a_drain_stores_the_periods_the_insurer_gives(make_policies, sandbox, quick_status_policy):
    """The batch write of answers (one prepared UPDATE run for every policy row): each policy
    gets its own status, period and sync time, whatever it held before."""
    from datetime import date

    dated, other = make_policies("anka", ["ANKA-PER-1", "ANKA-PER-2"])
    sandbox["anka"].state.seed_policies(
        [
            {"policy_no": dated.policy_no, "status": "CANCELLED", "starts_on": "2026-02-01", "ends_on": "2027-02-01"},
            {"policy_no": other.policy_no, "status": "ACTIVE", "starts_on": "2026-03-01", "ends_on": "2027-03-01"},
        ]
    )
    Policy.objects.filter(pk=other.pk).update(starts_on=date(2025, 5, 5), ends_on=date(2026, 5, 5))
    run = _run()

    counts = svc.sync_run_process(run, threads=2, tick=0.1)

    assert counts["done"] == 2
    dated.refresh_from_db()
    other.refresh_from_db()
    assert (dated.status, dated.starts_on, dated.ends_on) == ("CANCELLED", date(2026, 2, 1), date(2027, 2, 1))
    assert (other.status, other.starts_on, other.ends_on) == ("ACTIVE", date(2026, 3, 1), date(2027, 3, 1))
    assert dated.last_synced_at is not None and other.last_synced_at is not None


def test_a_batch_write_never_clears_a_date_the_answer_left_out(make_policies, quick_status_policy):
    """An answer without a period (an insurer's terse status) keeps the dates we know."""
    from datetime import date

    from integrations.answers.results import Policy as PolicyResult
    from integrations.answers.results import PolicyStatus
    from integrations.calling.engine import Outcome

    policy = make_policies("anka", ["ANKA-PER-3"])[0]
    Policy.objects.filter(pk=policy.pk).update(starts_on=date(2025, 5, 5), ends_on=date(2026, 5, 5))
    _run()
    (item,) = work.work_claim_batch(SyncItem.objects.all(), limit=5, lease_seconds=60)
    answer = PolicyResult(policy_no=policy.policy_no, status=PolicyStatus.CANCELLED)

    written = svc._store_statuses([(item, Outcome(result=answer, error=None, attempts=1))])

    assert [w.pk for w in written] == [item.pk]
    policy.refresh_from_db()
    assert (policy.status, policy.starts_on, policy.ends_on) == ("CANCELLED", date(2025, 5, 5), date(2026, 5, 5))


def test_a_running_drain_takes_an_accounts_new_credentials(make_policies, sandbox, quick_status_policy, monkeypatch):
    """Credentials (and the contracted rate) are read again with the account, not kept for the
    drain's life: after an admin changes an account's API key, a drain that is still running
    sends the new one (here a revoked one, which the insurer refuses: FAILED, nothing retried)."""
    monkeypatch.setattr(svc, "ACCOUNT_SECONDS", 0.0)  # every read is a fresh one
    policy = make_policies("anka", ["ANKA-CRED-1"])[0]
    first = _run()
    changed = []

    def change_then_more() -> float | None:
        if changed:
            return None
        account = policy.account
        account.set_credentials({"api_key": "anka-key-revoked"})
        account.save(update_fields=["credentials_encrypted"])
        changed.append(_run())  # a second run while the drain waits for more
        return 0.01

    drain = svc._Drain(SyncItem.objects.all(), threads=1)
    drain.run(more=change_then_more)

    assert first.items.get().state == WorkState.SUBMITTED
    second = changed[0].items.get()
    assert (second.state, second.error_class) == (WorkState.FAILED, "permanent"), second.error_message
    assert drain.claimed == 2


def test_an_account_switched_off_during_a_run_fails_its_items_without_a_call(
    make_policies, sandbox, quick_status_policy
):
    """The drain reads accounts itself (not joined per item): one switched off after the run
    started fails its items as ACCOUNT_INACTIVE, replayable, and nothing is sent."""
    policies = make_policies("anka", [f"ANKA-OFF-{i}" for i in range(4)])
    run = _run()
    policies[0].account.__class__.objects.filter(pk=policies[0].account_id).update(is_active=False)

    svc.sync_drain(threads=2)

    items = run.items.all()
    assert {(i.state, i.provider_code) for i in items} == {(WorkState.FAILED, "ACCOUNT_INACTIVE")}
    assert sandbox["anka"].state.counts()["received"].get("policy_status", 0) == 0
