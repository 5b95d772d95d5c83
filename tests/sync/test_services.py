"""Nightly sync: durable items, one insurer call per try, retries from the policy, dead letters."""

from __future__ import annotations

import threading
import time
from datetime import UTC, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.utils import timezone

from integrations.adapters.registry import registered_codes
from integrations.models import InsurerAccount
from policies.models import Policy
from sync import services as svc
from sync.models import SyncItem, SyncRun
from work.item import OPEN_STATES
from work.pump import work_pump_run
from work.replay import dead_letters_replay
from work.schedules import ensure_schedules, schedules
from work.services import work_claim

pytestmark = pytest.mark.django_db


def start_run() -> SyncRun:
    return svc.sync_run_start(trigger=SyncRun.Trigger.COMMAND)


def item_of(policy: Policy) -> SyncItem:
    return SyncItem.objects.get(policy=policy)


def run_to_end(item: SyncItem, *, timeout: float = 10.0) -> SyncItem:
    """Process an item, waiting out each retry's `next_attempt_at` as the pump would."""
    deadline = time.monotonic() + timeout
    svc.sync_item_process(item.pk)
    item.refresh_from_db()
    while item.state in OPEN_STATES and time.monotonic() < deadline:
        due = item.next_attempt_at or timezone.now()  # an open item waits on its next attempt
        time.sleep(max((due - timezone.now()).total_seconds(), 0) + 0.01)
        svc.sync_pump()
        svc.sync_item_process(item.pk)
        item.refresh_from_db()
    return item


def test_run_takes_active_policies_with_active_accounts_only(make_policies):
    """An item per ACTIVE policy on an active account; cancelled ones and switched-off accounts are left out."""
    synced = make_policies("anka", ["ANKA-P-1"])[0]
    cancelled = make_policies("anka", ["ANKA-P-2"])[0]
    Policy.objects.filter(pk=cancelled.pk).update(status=Policy.Status.CANCELLED)
    off = make_policies("bogazici", ["BGZ-P-1"])[0]
    InsurerAccount.objects.filter(pk=off.account_id).update(is_active=False)

    run = start_run()

    assert list(run.items.values_list("policy_id", flat=True)) == [synced.pk]
    assert run.items.get().payload == {"policy_no": "ANKA-P-1", "insurer": "anka", "product": "trafik"}
    assert run.items.get().state == "QUEUED"


def test_the_item_that_ends_a_run_closes_it(make_policies, sandbox):
    """No pump pass needed: the run is finished, with its counts, when its last item ends, not before."""
    first, last = make_policies("anka", ["ANKA-P-1", "ANKA-P-2"])
    run = start_run()

    assert svc.sync_item_process(item_of(first).pk) == "SUBMITTED"
    run.refresh_from_db()
    assert run.finished_at is None

    assert svc.sync_item_process(item_of(last).pk) == "SUBMITTED"
    run.refresh_from_db()
    assert run.finished_at is not None
    assert (run.counts["total"], run.counts["done"]) == (2, 2)


def test_policy_already_being_synced_is_not_taken_twice(make_policies):
    """A policy whose item from an unfinished run is still open gets no second item."""
    make_policies("anka", ["ANKA-P-1"])
    first, second = start_run(), start_run()
    assert first.items.count() == 1 and second.items.count() == 0
    assert second.finished_at is not None and second.counts["total"] == 0


@pytest.mark.parametrize("code", registered_codes())
def test_status_changes_at_the_insurer_are_stored(make_policies, sandbox, quick_status_policy, code):
    """Each insurer is asked over HTTP; a policy it cancelled becomes CANCELLED here, the others stay ACTIVE."""
    still_active = make_policies(code, [f"{code.upper()}-P-1"])[0]
    cancelled = make_policies(code, [f"{code.upper()}-P-2"], at_insurer="CANCELLED")[0]
    run = start_run()

    for item in run.items.all():
        assert svc.sync_item_process(item.pk) == "SUBMITTED"

    still_active.refresh_from_db()
    cancelled.refresh_from_db()
    assert still_active.status == "ACTIVE" and cancelled.status == "CANCELLED"
    assert cancelled.last_synced_at is not None
    item = item_of(cancelled)
    assert (item.previous_status, item.observed_status, item.attempts) == ("ACTIVE", "CANCELLED", 1)
    assert sandbox[code].state.counts()["received"]["policy_status"] == 2
    assert svc.sync_run_progress(run) | {"total": 2} == {
        "total": 2,
        "queued": 0,
        "in_flight": 0,
        "pending": 0,
        "done": 2,
        "dead": 0,
        "failed": 0,
        "deferred": 0,
        "changed": 1,
    }


def test_retryable_fault_waits_in_pending_then_succeeds(make_policies, sandbox, quick_status_policy):
    """A 503 is one try: PENDING with `next_attempt_at` in UTC from the policy, then SUBMITTED on the next try."""
    policy = make_policies("anka", ["ANKA-P-1"], at_insurer="EXPIRED")[0]
    sandbox["anka"].state.add_faults([{"operation": "policy_status", "fault": "html", "http_status": 503}])
    start_run()
    item = item_of(policy)
    before = timezone.now()

    assert svc.sync_item_process(item.pk) == "PENDING"
    item.refresh_from_db()
    assert item.attempts == 1 and item.error_kind == "unavailable" and item.error_class == "retryable"
    assert item.next_attempt_at.utcoffset() == timedelta(0)
    assert before < item.next_attempt_at <= timezone.now() + timedelta(seconds=0.2)
    assert sandbox["anka"].state.counts()["received"]["policy_status"] == 1  # no retry inside the call

    item = run_to_end(item)
    assert (item.state, item.attempts, item.observed_status) == ("SUBMITTED", 2, "EXPIRED")
    assert item.error_kind == "" and item.finished_at is not None


def test_throttle_waits_as_long_as_the_insurer_asks(make_policies, sandbox, quick_status_policy):
    """A throttle's own wait wins over the short backoff, and it does not count against the cap."""
    policy = make_policies("bogazici", ["BGZ-P-1"])[0]
    sandbox["bogazici"].state.add_faults([{"operation": "policy_status", "fault": "throttle", "wait_seconds": 1}])
    start_run()
    item = item_of(policy)
    asked_at = timezone.now()

    assert svc.sync_item_process(item.pk) == "PENDING"
    item.refresh_from_db()
    assert item.error_kind == "throttled" and item.throttled_attempts == 1
    assert item.next_attempt_at >= asked_at + timedelta(seconds=1)


def test_permanent_refusal_is_failed_with_payload_and_raw_answer(make_policies, sandbox, quick_status_policy):
    """An insurer that does not know the policy: FAILED at once, with what was sent and what it said.

    Çınar reports an unknown number as a validation error of the field that named it.
    """
    policy = make_policies("cinar", ["CNR-P-404"], at_insurer=None)[0]
    start_run()
    item = item_of(policy)

    assert svc.sync_item_process(item.pk) == "FAILED"
    item.refresh_from_db()
    assert item.payload == {"policy_no": "CNR-P-404", "insurer": "cinar", "product": "trafik"}
    assert (item.error_class, item.error_kind, item.attempts) == ("permanent", "validation", 1)
    assert item.provider_code == "VAL_POLICE_NO" and "VAL_POLICE_NO" in item.raw_answer
    assert item.finished_at is not None and item.next_attempt_at is None
    assert Policy.objects.get(pk=policy.pk).status == "ACTIVE"


def test_retryable_failures_past_the_cap_are_deferred(make_policies, sandbox, quick_status_policy):
    """An insurer down for every try: DEFERRED after the policy's 3 tries, context kept for a human."""
    policy = make_policies("deniz", ["DNZ-P-1"])[0]
    sandbox["deniz"].state.add_faults(
        [{"operation": "policy_status", "fault": "html", "http_status": 503, "times": 10}]
    )
    start_run()

    item = run_to_end(item_of(policy))

    assert (item.state, item.attempts, item.error_kind) == ("DEFERRED", 3, "unavailable")
    assert item.raw_answer and item.next_attempt_at is None and item.finished_at is not None
    assert sandbox["deniz"].state.counts()["received"]["policy_status"] == 3


def test_unclassified_answers_are_deferred_under_the_lower_cap(make_policies, sandbox, quick_status_policy):
    """An answer nobody has classified yet is retried under `unknown_max_attempts` (2), not the full cap."""
    policy = make_policies("anka", ["ANKA-P-1"])[0]
    sandbox["anka"].state.add_faults([{"operation": "policy_status", "fault": "garbage", "times": 10}])
    start_run()

    item = run_to_end(item_of(policy))

    assert (item.state, item.attempts, item.error_class) == ("DEFERRED", 2, "unknown")


def test_expired_lease_is_reclaimed_and_live_one_is_not(
    make_policies, sandbox, quick_status_policy, sent_tasks, django_capture_on_commit_callbacks
):
    """IN_FLIGHT with a lapsed lease (its worker died) goes back to QUEUED and to a worker; a live lease stays."""
    dead, alive = make_policies("anka", ["ANKA-P-1", "ANKA-P-2"])
    start_run()
    now = timezone.now()
    SyncItem.objects.filter(policy=dead).update(state="IN_FLIGHT", lease_expires_at=now - timedelta(seconds=1))
    SyncItem.objects.filter(policy=alive).update(state="IN_FLIGHT", lease_expires_at=now + timedelta(minutes=1))

    with django_capture_on_commit_callbacks(execute=True):
        assert svc.sync_pump() == [item_of(dead).pk]
    assert sent_tasks == [("sync.tasks.sync_drain", None)]  # one drain takes whatever is due
    assert item_of(dead).state == "QUEUED" and item_of(alive).state == "IN_FLIGHT"
    assert svc.sync_item_process(item_of(dead).pk) == "SUBMITTED"


@pytest.mark.django_db(transaction=True)
def test_two_workers_claim_an_item_once(make_policies, sandbox, quick_status_policy):
    """Two workers at the same item at the same moment: one claim wins, the insurer is asked once."""
    policy = make_policies("bogazici", ["BGZ-P-1"])[0]
    start_run()
    item_id = item_of(policy).pk
    barrier = threading.Barrier(4)
    claims: list[bool] = []
    states: list[str] = []

    def claim() -> None:
        barrier.wait()
        try:
            claims.append(work_claim(SyncItem, item_id, lease_seconds=60))
        finally:
            connection.close()

    threads = [threading.Thread(target=claim) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claims) == [False, False, False, True]

    SyncItem.objects.filter(pk=item_id).update(state="QUEUED", lease_expires_at=None)

    def process() -> None:
        try:
            states.append(svc.sync_item_process(item_id))
        finally:
            connection.close()

    threads = [threading.Thread(target=process) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert "SUBMITTED" in states
    assert sandbox["bogazici"].state.counts()["received"]["policy_status"] == 1


def test_stalled_run_is_sent_to_the_workers_again(make_policies, sent_tasks, django_capture_on_commit_callbacks):
    """QUEUED items of a run where nothing moved for long (tasks lost) are sent again, once per period."""
    policies = make_policies("anka", ["ANKA-P-1", "ANKA-P-2"])
    run = start_run()
    SyncItem.objects.filter(run=run).update(updated_at=timezone.now() - timedelta(hours=1))

    with django_capture_on_commit_callbacks(execute=True):
        first = svc.sync_pump()
        second = svc.sync_pump()

    assert first == [item_of(p).pk for p in policies] and second == []
    # Their drains were lost: a full set is sent again (once), not a task per item.
    assert sent_tasks == [("sync.tasks.sync_drain", None)] * svc.DRAIN_TASKS


# --- dead letters ------------------------------------------------------------------------------


@pytest.fixture
def dead_letters(make_policies, sandbox, quick_status_policy) -> list[SyncItem]:
    """Five dead letters, oldest first: three policies Anka does not know (FAILED), two it was down for (DEFERRED)."""
    policies = make_policies("anka", ["ANKA-P-1", "ANKA-P-2", "ANKA-P-3"], at_insurer=None)
    policies += make_policies("deniz", ["DNZ-P-1", "DNZ-P-2"])
    sandbox["deniz"].state.add_faults(
        [{"operation": "policy_status", "fault": "html", "http_status": 503, "times": 100}]
    )
    run = start_run()
    for item in run.items.order_by("pk"):
        run_to_end(item)
    items = [item_of(p) for p in policies]
    assert [i.state for i in items] == ["FAILED"] * 3 + ["DEFERRED"] * 2
    svc.sync_runs_close()
    return items


def test_replay_of_one_dead_letter_after_a_fix(dead_letters, sandbox, sent_tasks, django_capture_on_commit_callbacks):
    """Once Anka knows the policy, replaying its dead letter queues it again and it syncs."""
    item = dead_letters[1]
    sandbox["anka"].state.seed_policies([{"policy_no": "ANKA-P-2", "status": "CANCELLED"}])

    with django_capture_on_commit_callbacks(execute=True):
        assert dead_letters_replay(ids=[item.pk], model=SyncItem) == [item.pk]

    assert sent_tasks == [("sync.tasks.sync_drain", None)]
    assert SyncRun.objects.get(pk=item.run_id).finished_at is None  # the run is open again
    assert svc.sync_item_process(item.pk) == "SUBMITTED"
    assert Policy.objects.get(pk=item.policy_id).status == "CANCELLED"
    assert SyncRun.objects.get(pk=item.run_id).finished_at is not None  # its last open item closed it


def test_replay_of_a_selection_keeps_the_original_order(dead_letters, sent_tasks, django_capture_on_commit_callbacks):
    """A selection given in any order is replayed and queued oldest first."""
    chosen = [dead_letters[4].pk, dead_letters[0].pk, dead_letters[2].pk]

    with django_capture_on_commit_callbacks(execute=True):
        replayed = dead_letters_replay(ids=chosen, model=SyncItem)

    assert replayed == [dead_letters[0].pk, dead_letters[2].pk, dead_letters[4].pk]
    assert sent_tasks and set(sent_tasks) == {("sync.tasks.sync_drain", None)}
    queued = SyncItem.objects.filter(state="QUEUED").order_by("pk")
    assert list(queued.values_list("pk", flat=True)) == replayed  # a drain claims them oldest first
    assert SyncItem.objects.get(pk=dead_letters[1].pk).state == "FAILED"


def test_replay_of_one_kind(dead_letters):
    """All dead letters of one error kind, oldest first; the others stay where they are."""
    assert dead_letters_replay(kind="unavailable", model=SyncItem) == [dead_letters[3].pk, dead_letters[4].pk]
    assert [SyncItem.objects.get(pk=i.pk).state for i in dead_letters] == ["FAILED"] * 3 + ["QUEUED"] * 2


def test_replay_leaves_live_records_and_needs_a_choice(dead_letters, make_policies):
    """A record that is not a dead letter is not touched; replaying needs ids, a kind or everything=True."""
    live = make_policies("anka", ["ANKA-P-9"])[0]
    start_run()
    assert dead_letters_replay(ids=[item_of(live).pk], model=SyncItem) == []
    with pytest.raises(ValueError, match="choose"):
        dead_letters_replay(model=SyncItem)
    assert dead_letters_replay(everything=True, model=SyncItem) == [i.pk for i in dead_letters]


# --- schedules and the pump task -----------------------------------------------------------------


def test_schedules_are_created_once(db):
    """The nightly cron (02:00 Turkish time) and the minute pump exist once, however often ensured."""
    from django_q.models import Schedule

    ensure_schedules()
    nightly_next_run = Schedule.objects.get(func="sync.tasks.sync_nightly").next_run
    ensure_schedules()

    nightly = Schedule.objects.get(func="sync.tasks.sync_nightly")
    pump = Schedule.objects.get(func="work.tasks.work_pump")
    assert Schedule.objects.count() == len(schedules())
    assert (nightly.schedule_type, nightly.cron) == (Schedule.CRON, "0 2 * * *")
    assert nightly.next_run == nightly_next_run > timezone.now()
    local = nightly.next_run.astimezone(ZoneInfo("Europe/Istanbul"))
    assert (local.hour, local.minute) == (2, 0)
    assert (pump.schedule_type, pump.minutes) == (Schedule.MINUTES, 1)
    rollup = Schedule.objects.get(func="work.tasks.attempt_minutes_rollup")
    prune = Schedule.objects.get(func="work.tasks.history_prune")
    assert (rollup.schedule_type, rollup.minutes) == (Schedule.MINUTES, 1)
    assert (prune.schedule_type, prune.cron) == (Schedule.CRON, "30 3 * * *")
    sessions = Schedule.objects.get(func="work.tasks.sessions_clear")
    assert (sessions.schedule_type, sessions.cron) == (Schedule.CRON, "15 3 * * *")


def test_work_pump_runs_for_the_time_given(db, make_policies, quick_status_policy):
    """The pump task loops for about the seconds asked, requeueing due retries as it goes."""
    policy = make_policies("anka", ["ANKA-P-1"])[0]
    start_run()
    SyncItem.objects.filter(policy=policy).update(state="PENDING", next_attempt_at=timezone.now().astimezone(UTC))

    started = time.monotonic()
    assert work_pump_run(seconds=0.5, interval=0.1) == 1
    assert 0.4 <= time.monotonic() - started < 2.0
    assert item_of(policy).state == "QUEUED"
