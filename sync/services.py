"""Nightly policy sync: ask each policy's insurer for its status, one durable item per policy.

Follows `quotes.services.issuance`: every `SyncItem` is stored before anything is sent, and each
IN_FLIGHT is exactly one insurer call (`attempt_limit=1`), so the item's state machine is the
only retry layer (django-q2's own retry stays off). A permanent refusal is FAILED; retryable and
unknown ones wait in PENDING until `next_attempt_at` (UTC, from the retry policy) and become
DEFERRED past the cap. The pump takes back the items of dead workers and queues those whose wait
is over; a worker whose cluster is stopping cuts its call short and hands its item back at once.
FAILED and DEFERRED items are dead letters: kept with payload, raw answer and error, and
replayable in their original order.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, F, Max, Min, QuerySet
from django.utils import timezone

from integrations.answers.taxonomy import ErrorKind, InsurerError
from integrations.calling.calls import endpoint_for_account, insurer_operation_run
from integrations.calling.engine import Outcome
from integrations.operations import Operation
from integrations.retry_policies import RetryPolicy, policy_for
from integrations.work.item import WorkItem, WorkState
from integrations.work.services import (
    WorkKind,
    work_claim,
    work_mark_submitted,
    work_promote_due,
    work_reclaim_expired,
    work_replay,
    work_requeue_orphans,
    work_stop_event,
    work_try,
)
from notifications.services import notify_policy_ended
from quotes.models import Issuance, Policy
from quotes.services.issuance import issuance_replay_prepare
from quotes.services.policies import policy_period_store
from sync.models import SyncItem, SyncRun

logger = logging.getLogger(__name__)

POLICY_STATUS = Operation.POLICY_STATUS.value
OPEN_STATES = (WorkState.QUEUED, WorkState.IN_FLIGHT, WorkState.PENDING)
DEAD_STATES = (WorkState.FAILED, WorkState.DEFERRED)

# Margin on top of the longest a live worker can spend on one try before its lease is taken back.
LEASE_MARGIN_SECONDS = 30.0
# A run whose items have not moved for this long while some wait QUEUED has lost their tasks
# (a broker restart, a killed `sync_policies`): the pump sends them again.
STALLED_RUN_SECONDS = 600.0

# The task that processes one record of each replayable model.
PROCESS_TASKS: dict[type[WorkItem], str] = {
    SyncItem: "sync.tasks.sync_item_process",
    Issuance: "quotes.tasks.issuance_process",
}
# What a kind of record needs before a replay (an issuance: a new reference only after a definite "no").
REPLAY_PREPARE: dict[type[WorkItem], Callable[[QuerySet], None]] = {Issuance: issuance_replay_prepare}


# --- starting a run --------------------------------------------------------------------------


def sync_run_start(*, trigger: str) -> SyncRun:
    """Store a run with one QUEUED item per active policy whose account is active; sends nothing.

    Policies whose insurer is switched off, and policies still being synced by an unfinished
    run (say, last night's, waiting on an insurer that was down), are left out.
    """
    trigger = SyncRun.Trigger(trigger)
    policies = (
        Policy.objects.filter(status=Policy.Status.ACTIVE, account__is_active=True, insurer__is_active=True)
        .exclude(sync_items__state__in=OPEN_STATES)
        .order_by("pk")
        .values_list("pk", "policy_no", "insurer__code", "product")
    )
    with transaction.atomic():
        run = SyncRun.objects.create(trigger=trigger)
        SyncItem.objects.bulk_create(
            [
                SyncItem(
                    run=run,
                    policy_id=policy_id,
                    payload={"policy_no": policy_no, "insurer": insurer_code, "product": product},
                )
                for policy_id, policy_no, insurer_code, product in policies
            ],
            batch_size=500,
        )
    sync_run_close(run)  # a run with nothing to do is finished at once
    logger.info("sync run %s (%s): %s policies", run.pk, trigger, run.items.count())
    return run


def sync_run_enqueue(run: SyncRun) -> int:
    """Hand every QUEUED item of the run to the django-q2 workers; returns how many."""
    ids = list(run.items.filter(state=WorkState.QUEUED).order_by("pk").values_list("pk", flat=True))
    for item_id in ids:
        _enqueue(SyncItem, item_id)
    return len(ids)


def _enqueue(model: type[WorkItem], item_id: int) -> None:
    """Queue one record's task once the state change that made it due is committed."""
    transaction.on_commit(partial(_send_task, PROCESS_TASKS[model], item_id))


# Thousands a night, and each outcome is on its record: django-q2 keeps none of their successes
# (a crash it still keeps). Every stored success is writes in the monitor, on the same database.
_SUCCESS_NOT_STORED = {"sync.tasks.sync_item_process"}


def _send_task(func: str, item_id: int) -> None:
    from django_q.tasks import async_task

    async_task(func, item_id, task_name=f"{func.rsplit('.', 1)[-1]}-{item_id}", save=func not in _SUCCESS_NOT_STORED)


# --- one item ----------------------------------------------------------------------------------


def sync_item_process(item_id: int) -> str:
    """One try for one item: claim it, ask the insurer once, record the answer; returns the state.

    A retry is not waited for here: the item goes PENDING and the pump (or `sync_policies`)
    queues it again when it is due, so no worker sleeps through an insurer's backoff.
    The item that ends its run closes it, so the run's end time is when its work ended, not
    when the next pump pass happened to look.
    """
    state = _sync_item_try(item_id)
    if state not in OPEN_STATES:
        run = SyncRun.objects.filter(items__pk=item_id, finished_at__isnull=True).first()
        if run is not None:
            sync_run_close(run)
    return state


def _sync_item_try(item_id: int) -> str:
    item = SyncItem.objects.select_related("policy__account__insurer").get(pk=item_id)
    account = item.policy.account
    policy = policy_for(account.insurer.code, POLICY_STATUS)
    if not work_claim(SyncItem, item_id, lease_seconds=_lease_seconds(policy)):
        return _state_of(item_id)
    item.refresh_from_db()
    return work_try(SYNC_WORK, item, insurer_code=account.insurer.code, policy=policy)


def _lease_seconds(policy: RetryPolicy) -> float:
    """Longer than a live worker can take: a try may be a token call, the call, and (Çınar, token
    expired) both again, each bounded by the connect and read timeouts."""
    per_request = policy.attempt_timeout + settings.INSURER_CONNECT_TIMEOUT
    return min(policy.deadline, 4 * per_request) + LEASE_MARGIN_SECONDS


def _ask_insurer(item: SyncItem, permit: str) -> Outcome:
    account = item.policy.account
    if not account.is_active:
        # Switched off after the run started: fail it visibly, so it can be replayed once fixed.
        error = InsurerError(
            ErrorKind.NOT_ALLOWED, provider_code="ACCOUNT_INACTIVE", message="Acentenin bu şirketteki hesabı pasif."
        )
        return Outcome(result=None, error=error, attempts=0)
    return insurer_operation_run(
        endpoint=endpoint_for_account(account),
        operation=POLICY_STATUS,
        data={"policy_no": item.payload["policy_no"]},
        product=item.payload.get("product", ""),
        attempt_limit=1,
        attempt_offset=item.attempts,
        budget_spent=permit == "spent",
    )


@transaction.atomic
def _store_status(item: SyncItem, outcome: Outcome) -> None:
    policy = Policy.objects.select_for_update().get(pk=item.policy_id)
    status = outcome.result.status.value
    if not work_mark_submitted(item, previous_status=policy.status, observed_status=status):
        return  # our lease was taken back and another worker owns the item now
    Policy.objects.filter(pk=policy.pk).update(status=status, last_synced_at=timezone.now())
    policy_period_store(policy, outcome.result)
    if status != policy.status and status in ENDED_STATUSES:
        policy.status = status
        transaction.on_commit(lambda: _notify_ended(policy))


# What the nightly sync tells the agency about: a policy it found ended at its insurer.
ENDED_STATUSES = (Policy.Status.CANCELLED, Policy.Status.EXPIRED)


def _notify_ended(policy: Policy) -> None:
    try:
        notify_policy_ended(policy)
    except Exception:
        logger.exception("policy %s: the ended notification failed", policy.pk)


SYNC_WORK = WorkKind(model=SyncItem, call=_ask_insurer, on_success=_store_status)


def _state_of(item_id: int) -> str:
    return SyncItem.objects.values_list("state", flat=True).get(pk=item_id)


# --- pump, progress, end of a run ----------------------------------------------------------------


def sync_pump(*, processing_run: SyncRun | None = None) -> list[int]:
    """Take back dead workers' items, queue those whose wait is over, close finished runs.

    Items made QUEUED here are sent to the workers, except those of `processing_run`: the
    `sync_policies` command that passes it processes its own run in-process.
    """
    ids = work_reclaim_expired(SyncItem) + work_promote_due(SyncItem)
    ids += [pk for pk in work_requeue_orphans(SyncItem) + _stalled_items(exclude=processing_run) if pk not in ids]
    own = set(processing_run.items.filter(pk__in=ids).values_list("pk", flat=True)) if processing_run and ids else set()
    for item_id in ids:
        if item_id not in own:
            _enqueue(SyncItem, item_id)
    sync_runs_close()
    return ids


def _stalled_items(*, exclude: SyncRun | None) -> list[int]:
    """QUEUED items of runs where nothing has moved for a long while: their tasks were lost.

    Sending them again is safe (the claim lets one worker in). Touching them means a run is
    sent again at most once per period, not on every pump pass.
    """
    now = timezone.now()
    runs = SyncRun.objects.filter(finished_at__isnull=True)
    if exclude is not None:
        runs = runs.exclude(pk=exclude.pk)
    stalled = runs.annotate(last_move=Max("items__updated_at")).filter(
        last_move__lt=now - timedelta(seconds=STALLED_RUN_SECONDS)
    )
    ids = list(
        SyncItem.objects.filter(run__in=stalled.values("pk"), state=WorkState.QUEUED)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if ids:
        SyncItem.objects.filter(pk__in=ids, state=WorkState.QUEUED).update(updated_at=now)
        logger.warning("sync: %s queued items of stalled runs sent again", len(ids))
    return ids


def sync_run_progress(run: SyncRun) -> dict[str, int]:
    """Counts of the run's items: in_flight / pending / queued / done / dead (failed + deferred)."""
    by_state = dict(run.items.order_by().values_list("state").annotate(n=Count("pk")))
    changed = (
        run.items.filter(state=WorkState.SUBMITTED).exclude(observed_status=F("previous_status")).count()
        if by_state.get(WorkState.SUBMITTED)
        else 0
    )
    failed, deferred = by_state.get(WorkState.FAILED, 0), by_state.get(WorkState.DEFERRED, 0)
    return {
        "total": sum(by_state.values()),
        "queued": by_state.get(WorkState.QUEUED, 0),
        "in_flight": by_state.get(WorkState.IN_FLIGHT, 0),
        "pending": by_state.get(WorkState.PENDING, 0),
        "done": by_state.get(WorkState.SUBMITTED, 0),
        "dead": failed + deferred,
        "failed": failed,
        "deferred": deferred,
        "changed": changed,
    }


def sync_run_close(run: SyncRun) -> bool:
    """Mark the run finished, with its final counts, once none of its items is open."""
    if run.items.filter(state__in=OPEN_STATES).exists():
        return False
    now = timezone.now()
    closed = SyncRun.objects.filter(pk=run.pk, finished_at__isnull=True).update(
        finished_at=now, counts=sync_run_progress(run)
    )
    if closed:
        run.refresh_from_db(fields=["finished_at", "counts"])
    return bool(closed)


def sync_runs_close() -> list[int]:
    return [run.pk for run in SyncRun.objects.filter(finished_at__isnull=True) if sync_run_close(run)]


def work_pump_run(*, seconds: float = 50.0, interval: float = 1.0) -> int:
    """Pump sync items, issuances and policy documents for `seconds` (a task scheduled every minute), so a retry
    starts about a second after it is due rather than up to a minute later.

    Kept well inside django-q2's task timeout, or the cluster would kill the pump mid-pass.
    """
    from documents.services import documents_pump
    from quotes.services.issuance import issuance_pump

    seconds = min(seconds, max(settings.Q_CLUSTER["timeout"] - 10, 1))
    end = time.monotonic() + seconds
    # django-q2 stops a worker only after the task in hand: without this the pump's ~50 s held
    # every stop of the cluster for as long.
    stopping = work_stop_event()
    moved = 0
    while not stopping.is_set():
        try:
            moved += len(sync_pump()) + len(issuance_pump()) + len(documents_pump())
        except DatabaseError:
            # A busy database (SQLite's lock) must not cost the rest of this minute's pumping.
            logger.exception("work pump pass failed; trying again")
        if time.monotonic() + interval >= end:
            return moved
        stopping.wait(interval)
    # The pump holds no record: ending a pass early leaves nothing IN_FLIGHT, and the next
    # cluster's pump picks up where this one left off.
    logger.info("work pump: the cluster is stopping; pump ended early")
    return moved


# --- a whole run in-process (`sync_policies`) ------------------------------------------------------


def sync_run_process(
    run: SyncRun,
    *,
    threads: int = 8,
    on_progress: Callable[[dict[str, int]], None] | None = None,
    tick: float = 0.5,
) -> dict[str, int]:
    """Process the run to the end in this process, `threads` items at a time; returns the counts.

    PENDING items are waited for until their `next_attempt_at`. If interrupted, what is left is
    handed to the django-q2 workers, so nothing stays QUEUED without a task.
    """
    running: dict[int, Future] = {}
    pumped_at = float("-inf")
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"sync-run-{run.pk}")
    try:
        while True:
            if time.monotonic() - pumped_at >= tick or not running:
                sync_pump(processing_run=run)
                pumped_at = time.monotonic()
            for item_id in [pk for pk, future in running.items() if future.done()]:
                running.pop(item_id)
            room = 2 * threads - len(running)
            if room > 0:
                queued = run.items.filter(state=WorkState.QUEUED).exclude(pk__in=list(running)).order_by("pk")
                for item_id in queued.values_list("pk", flat=True)[:room]:
                    running[item_id] = pool.submit(_process_in_thread, item_id)
            progress = sync_run_progress(run)
            if on_progress is not None:
                on_progress(progress)
            if not running and not (progress["queued"] or progress["in_flight"] or progress["pending"]):
                break
            if running:
                wait(list(running.values()), timeout=tick, return_when=FIRST_COMPLETED)
            else:
                time.sleep(_until_next_due(run, cap=tick))
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        sync_run_enqueue(run)
        raise
    pool.shutdown(wait=True)
    sync_run_close(run)
    return sync_run_progress(run)


def _process_in_thread(item_id: int) -> str:
    try:
        return sync_item_process(item_id)
    except Exception:  # one item's crash must not stop the run; its lease brings it back
        logger.exception("sync item %s: processing crashed", item_id)
        return ""
    finally:
        connection.close()  # each pool thread has its own connection: do not leak them


def _until_next_due(run: SyncRun, *, cap: float) -> float:
    due = run.items.filter(state=WorkState.PENDING).aggregate(due=Min("next_attempt_at"))["due"]
    if due is None:
        return cap  # only items in flight at the workers: look again shortly
    return min(max((due - timezone.now()).total_seconds(), 0.01), cap)


# --- dead letters ------------------------------------------------------------------------------


def dead_letters_replay(
    *,
    ids: Iterable[int] | None = None,
    kind: str | None = None,
    model: type[WorkItem] = SyncItem,
    everything: bool = False,
) -> list[int]:
    """Send FAILED and DEFERRED records back to the queue, oldest first, after a fix.

    Choose them by `ids`, by error `kind`, or both; `everything=True` replays every dead letter
    of the model (asked for explicitly: a stray call must not resend every failed issuance).
    Returns the ids replayed, in order; records that are not dead letters are left alone.
    """
    if model not in PROCESS_TASKS:
        raise ValueError(f"{model.__name__} records can not be replayed")
    if ids is None and kind is None and not everything:
        raise ValueError("choose the dead letters to replay: ids, a kind, or everything=True")
    dead = model.objects.filter(state__in=DEAD_STATES)
    if ids is not None:
        dead = dead.filter(pk__in=list(ids))
    if kind is not None:
        dead = dead.filter(error_kind=ErrorKind(kind).value)
    prepare = REPLAY_PREPARE.get(model)
    if prepare is not None:
        prepare(dead)
    replayed = work_replay(dead)
    if model is SyncItem and replayed:
        # Their runs are open again; the pump closes them, with fresh counts, when they end.
        SyncRun.objects.filter(pk__in=SyncItem.objects.filter(pk__in=replayed).values("run_id")).update(
            finished_at=None
        )
    for item_id in replayed:
        _enqueue(model, item_id)
    logger.info("replayed %s %s dead letters", len(replayed), model.__name__)
    return replayed
