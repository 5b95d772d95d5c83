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
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict, cast

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, F, Max, Min, QuerySet
from django.utils import timezone

from insurehub.dbpool import db_connection_release
from insurehub.gcpause import heap_frozen
from integrations.answers.results import Policy as PolicyAnswer
from integrations.answers.taxonomy import ErrorKind, InsurerError
from integrations.attempts.recording import AttemptRecorder
from integrations.calling.calls import Endpoint, endpoint_for_account, insurer_operation_run
from integrations.calling.engine import Outcome
from integrations.models import InsurerAccount
from integrations.operations import Operation
from integrations.pacing.retry_budget import BatchedRetryBudget, SharedRetryBudget
from integrations.pacing.send_rate import SharedSendRate
from integrations.retry_policies import RetryPolicy, default_policy, policy_for
from integrations.ttlcache import TtlCache
from work.attempt_batch import AttemptBatch
from work.item import OPEN_STATES, WorkState

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations
from policies.models import Policy
from policies.periods import policy_period_store
from sync.models import SyncItem, SyncRun
from sync.notices import notify_policy_ended
from sync.signals import policy_found_cancelled
from work.registry import WorkRegistration, work_kind_register
from work.services import (
    WorkKind,
    work_claim,
    work_claim_batch,
    work_hand_back,
    work_mark_submitted,
    work_mark_submitted_batch,
    work_promote_due,
    work_reclaim_expired,
    work_requeue_orphans,
    work_stop_event,
    work_try,
)
from work.write_gate import gated_shared_state, write_gate

logger = logging.getLogger(__name__)

POLICY_STATUS = Operation.POLICY_STATUS.value

# Margin on top of the longest a live worker can spend on one try before its lease is taken back.
LEASE_MARGIN_SECONDS = 30.0
# A run whose items have not moved for this long while some wait QUEUED has lost their tasks
# (a broker restart, a killed `sync_policies`): the pump sends them again.
STALLED_RUN_SECONDS = 600.0

# Sync items are taken by drains (`sync_drain`): a few tasks a run, each claiming batches.
DRAIN_TASK = "sync.tasks.sync_drain"


def drain_tasks_default(workers: int) -> int:
    """How many drain tasks a run gets on a cluster of `workers` when nothing says otherwise.

    Drains hold their workers in 30-s slices, back to back, for the whole night's run: taking
    every worker made a quote fan-out task (an agent waiting on the screen) and the work pump
    wait up to a slice. The pump holds one worker about 50 s of each minute, so two are left
    to other tasks: the pump's and one free for quotes; never fewer than one drain.
    """
    return max(1, workers - 2)


# Drain tasks sent for a run (and after drains were lost); each keeps this many tries in flight.
# A setting, or the environment of the process (a benchmark sizes its clusters' drains so),
# overrides the default, which leaves workers to the pump and to quotes.
DRAIN_TASKS = int(
    getattr(settings, "SYNC_DRAIN_TASKS", 0)
    or os.environ.get("SYNC_DRAIN_TASKS")
    or drain_tasks_default(settings.Q_CLUSTER["workers"])
)
DRAIN_THREADS = int(getattr(settings, "SYNC_DRAIN_THREADS", 0) or os.environ.get("SYNC_DRAIN_THREADS") or 16)
# How long a drain task claims before it hands over to a successor: its last tries must end
# (one try: the policy's attempt timeout plus connect, twice for Çınar's token) well inside
# django-q2's `timeout`, or the cluster kills it mid-try.
# Shorter slices let the broker spread a run's drains over clusters again and again, and let
# other tasks (the pump, quotes) in between; each slice's successor goes to whichever is free.
DRAIN_SECONDS = float(getattr(settings, "SYNC_DRAIN_SECONDS", 0) or os.environ.get("SYNC_DRAIN_SECONDS") or 30.0)
# How often `sync_run_process` pumps while it still has items to claim (when it has none left,
# it pumps each time it looks for more, every `tick` at most).
PUMP_SECONDS = 2.0
# Successes are written together: every this many seconds, or once this many wait. On SQLite a
# write holds the process's write gate, and no thread takes a send slot meanwhile (the slot is a
# write too): at a tenth of a second a batch (~25 items at 250 calls/s) holds it briefly enough.
FLUSH_SECONDS = 0.1
FLUSH_ITEMS = 200
# How long a drain keeps an agency's account (its credentials, whether it is active) before
# reading it again.
ACCOUNT_SECONDS = 5.0

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


def sync_run_enqueue(run: SyncRun, *, drains: int | None = None) -> int:
    """Hand the run's QUEUED items to the django-q2 workers; returns how many are queued.

    Not one task per item (thousands of broker round trips a night, each a claim of one row):
    a few drain tasks (`drains`, by default `SYNC_DRAIN_TASKS`), each of which claims the due
    items in batches and keeps a pool of threads busy on them (`sync_drain`).
    """
    queued = run.items.filter(state=WorkState.QUEUED).count()
    if queued:
        _enqueue_drains(min(drains or DRAIN_TASKS, queued))
    return queued


def _enqueue_drains(count: int = 1, run_id: int | None = None) -> None:
    """Send `count` drain tasks once the state change that made items due is committed. A drain
    that finds nothing to claim ends at once, so one too many costs a task, never a double try."""
    for _ in range(max(count, 0)):
        transaction.on_commit(partial(_send_task, DRAIN_TASK, run_id), robust=True)


# Thousands a night, and each outcome is on its record: django-q2 keeps none of their successes
# (a crash it still keeps). Every stored success is writes in the monitor, on the same database.
_SUCCESS_NOT_STORED = {"sync.tasks.sync_item_process", "sync.tasks.sync_drain"}


def _send_task(func: str, arg: int | None) -> None:
    from django_q.tasks import async_task

    name = f"{func.rsplit('.', 1)[-1]}-{arg if arg is not None else 'all'}"
    async_task(func, arg, task_name=name, save=func not in _SUCCESS_NOT_STORED)


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


def _ask_insurer(
    item: SyncItem,
    permit: str,
    *,
    account: InsurerAccount | None = None,
    endpoint: Endpoint | None = None,
    recorder: AttemptRecorder | None = None,
    state: Any | None = None,
    budget: SharedRetryBudget | None = None,
) -> Outcome:
    account = account or item.policy.account
    if not account.is_active:
        # Switched off after the run started: fail it visibly, so it can be replayed once fixed.
        error = InsurerError(
            ErrorKind.NOT_ALLOWED, provider_code="ACCOUNT_INACTIVE", message="Acentenin bu şirketteki hesabı pasif."
        )
        return Outcome(result=None, error=error, attempts=0)
    endpoint = endpoint or endpoint_for_account(account)
    return insurer_operation_run(
        endpoint=endpoint,
        operation=POLICY_STATUS,
        data={"policy_no": item.payload["policy_no"]},
        product=item.payload.get("product", ""),
        attempt_limit=1,
        attempt_offset=item.attempts,
        budget_spent=permit == "spent",
        recorder=recorder,
        # The default shared state, or the same one through this process's write gate (a drain).
        send_rate=SharedSendRate(contracted_rate=endpoint.contracted_rate, state=state) if state else None,
        budget=budget or (SharedRetryBudget(state=state) if state else None),
    )


@transaction.atomic
def _store_status(item: SyncItem, outcome: Outcome) -> None:
    policy = Policy.objects.select_for_update().get(pk=item.policy_id)
    answer = outcome.result_as(PolicyAnswer)
    status = answer.status.value
    if not work_mark_submitted(item, previous_status=policy.status, observed_status=status):
        return  # our lease was taken back and another worker owns the item now
    Policy.objects.filter(pk=policy.pk).update(status=status, last_synced_at=timezone.now())
    policy_period_store(policy, answer)
    if status != policy.status and status in ENDED_STATUSES:
        policy.status = status
        _announce_found_cancelled([policy])
        transaction.on_commit(lambda: _notify_ended(policy))


# What the nightly sync tells the agency about: a policy it found ended at its insurer.
ENDED_STATUSES = (Policy.Status.CANCELLED, Policy.Status.EXPIRED)


def _announce_found_cancelled(policies: Iterable[Policy]) -> None:
    """`policy_found_cancelled` for each policy this sync just found CANCELLED (after its status
    is written, in the same transaction: a receiver's entry stands or falls with it)."""
    found_on = timezone.localdate()
    for policy in policies:
        if policy.status == Policy.Status.CANCELLED:
            policy_found_cancelled.send_robust(sender=Policy, policy=policy, found_on=found_on)


def _notify_ended(policy: Policy) -> None:
    try:
        notify_policy_ended(policy)
    except Exception:
        logger.exception("policy %s: the ended notification failed", policy.pk)


SYNC_WORK = WorkKind(model=SyncItem, call=_ask_insurer, on_success=_store_status)


def _store_statuses(done: list[tuple[SyncItem, Outcome]]) -> list[SyncItem]:
    """`_store_status` for a batch of answers, in the caller's transaction; returns the items written.

    A few statements for the batch instead of four per item: the policies read (and locked) in
    one SELECT, the items marked SUBMITTED per (claim, previous status, observed status), each
    still fenced by its claim (an item whose lease was taken back is not written, nor is its
    policy), the policies' statuses per status, and their periods per distinct change.
    """
    policies = Policy.objects.filter(pk__in=[item.policy_id for item, _ in done])
    if connection.features.has_select_for_update:
        policies = policies.select_for_update()
    by_pk = {policy.pk: policy for policy in policies}
    results = {item.pk: outcome.result_as(PolicyAnswer) for item, outcome in done}
    written = work_mark_submitted_batch(
        [
            (item, {"previous_status": by_pk[item.policy_id].status, "observed_status": results[item.pk].status.value})
            for item, _ in done
        ]
    )
    now = timezone.now()
    rows = []
    found_cancelled: list[Policy] = []
    for item in written:
        policy, result = by_pk[item.policy_id], results[item.pk]
        status = result.status.value
        # As `policies.periods.policy_period_store`: a date the answer left out never clears one we know.
        starts_on = result.starts_on if result.starts_on is not None else policy.starts_on
        ends_on = result.ends_on if result.ends_on is not None else policy.ends_on
        rows.append((status, now, starts_on, ends_on, policy.pk))
        if status != policy.status and status in ENDED_STATUSES:
            policy.status = status
            found_cancelled.append(policy)
            transaction.on_commit(partial(_notify_ended, policy))
    _policies_update(rows)
    _announce_found_cancelled(found_cancelled)
    return written


def _policies_update(rows: list[tuple[str, Any, Any, Any, int]]) -> None:
    """(status, synced at, starts_on, ends_on, pk) per policy, in one prepared statement run for
    every row: on the first night every policy's period is new to us, and an ORM UPDATE per
    policy was a fifth of the drain's CPU."""
    if not rows:
        return
    ops, meta = connection.ops, Policy._meta
    column_of = {field.name: field.column for field in meta.concrete_fields}
    columns = [column_of[name] for name in ("status", "last_synced_at", "starts_on", "ends_on")]
    sets = ", ".join(f"{ops.quote_name(column)} = %s" for column in columns)
    # Only the model's own quoted names go into the text; every value is a parameter.
    sql = f"UPDATE {ops.quote_name(meta.db_table)} SET {sets} WHERE {ops.quote_name(meta.pk.column)} = %s"  # noqa: S608
    params = [
        (
            status,
            ops.adapt_datetimefield_value(synced_at),
            ops.adapt_datefield_value(starts_on),
            ops.adapt_datefield_value(ends_on),
            pk,
        )
        for status, synced_at, starts_on, ends_on, pk in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _state_of(item_id: int) -> str:
    return SyncItem.objects.values_list("state", flat=True).get(pk=item_id)


# --- pump, progress, end of a run ----------------------------------------------------------------


def sync_pump(*, processing_run: SyncRun | None = None) -> list[int]:
    """Take back dead workers' items, queue those whose wait is over, close finished runs.

    Items made QUEUED here are sent to the workers, except those of `processing_run`: the
    `sync_policies` command that passes it processes its own run in-process.
    """
    moved = work_reclaim_expired(SyncItem) + work_promote_due(SyncItem)
    lost = [pk for pk in work_requeue_orphans(SyncItem) + _stalled_items(exclude=processing_run) if pk not in moved]
    ids = moved + lost
    own = set(processing_run.items.filter(pk__in=ids).values_list("pk", flat=True)) if processing_run and ids else set()
    # One drain takes whatever is due (a drain still running takes it anyway); items whose
    # drains were lost (a cluster killed, a broker restarted) get a full set again.
    if any(pk not in own for pk in lost):
        _enqueue_drains(DRAIN_TASKS)
    elif any(pk not in own for pk in moved):
        _enqueue_drains(1)
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


# --- drains: batches of items, a pool of threads -------------------------------------------------


class _AccountRef(TypedDict):
    account_ref: int  # the item's policy's account id (see _Drain.items)


class _Drain:
    """Claims due items in batches and keeps `threads` tries of them in flight; writes the
    answers and their attempt rows in batches.

    Only as many items are claimed as threads are free, and as many again, so a claimed
    item starts within moments and its lease means what it always meant (one try). Successes wait in memory for the next
    batch write (at most `FLUSH_SECONDS`), still IN_FLIGHT under their claim: a process that
    dies before writing them loses nothing, their leases bring them back. Everything else a try
    ends in (PENDING, FAILED, DEFERRED, handed back) is written by the try itself, as before.
    When the cluster stops (or `stop` is set), nothing more is claimed; calls in flight are cut
    and handed back (`work_try`), items not yet started are handed back without a call.
    """

    def __init__(
        self, items: QuerySet, *, threads: int, stop: threading.Event | None = None, until: float | None = None
    ) -> None:
        # The items alone, with their policy's account id: the account (and its insurer) comes
        # from the drain's cache, re-read every ACCOUNT_SECONDS, not joined and built again for
        # every item (a fifth of a claim's cost). An account switched off shows within seconds.
        self.items = items.annotate(account_ref=F("policy__account_id"))
        self._accounts: TtlCache[int, InsurerAccount] = TtlCache(ACCOUNT_SECONDS)
        self.threads = max(threads, 1)
        self.prefetch = self.threads
        self.stop = stop or threading.Event()
        self.cluster_stop = work_stop_event()
        self.until = until
        self.attempts = AttemptBatch()
        self.kind = WorkKind(model=SyncItem, call=self._ask, on_success=self._collect)
        self.claimed = 0
        self.stored = 0
        self._lock = threading.Lock()
        self._done: list[tuple[SyncItem, Outcome]] = []
        self._ended_runs: set[int] = set()
        self._busy = 0
        self._todo: queue.Queue[SyncItem | None] = queue.Queue()
        self._moved = threading.Event()
        # Credentials and contracted rate, read again with the account: an admin's change (a new
        # password, a new contract) reaches a running drain within ACCOUNT_SECONDS too.
        self._endpoints: TtlCache[int, Endpoint] = TtlCache(ACCOUNT_SECONDS)
        self._state = gated_shared_state()
        # First attempts counted with each batch write, not with each call (spends go at once).
        self.budget = BatchedRetryBudget(state=self._state)
        self._lease = max(_lease_seconds(policy) for policy in _status_policies())

    # -- the threads

    def _account(self, item: SyncItem) -> InsurerAccount:
        # Every item here was claimed from self.items, which annotates its policy's account id.
        account_ref = cast("WithAnnotations[SyncItem, _AccountRef]", item).account_ref
        return self._accounts.get(
            account_ref, lambda: InsurerAccount.objects.select_related("insurer").get(pk=account_ref)
        )

    def _ask(self, item: SyncItem, permit: str) -> Outcome:
        account = self._account(item)
        # The credentials are decrypted once per account and period, not once per item.
        endpoint = self._endpoints.get(account.pk, lambda: endpoint_for_account(account))
        return _ask_insurer(
            item,
            permit,
            account=account,
            endpoint=endpoint,
            recorder=self.attempts.recorder(),
            state=self._state,
            budget=self.budget,
        )

    def _collect(self, item: SyncItem, outcome: Outcome) -> WorkState:
        with self._lock:
            self._done.append((item, outcome))
        return WorkState.IN_FLIGHT  # until the batch write

    def _work(self) -> None:
        try:
            while (item := self._todo.get()) is not None:
                try:
                    if self.stop.is_set():
                        work_hand_back(item)  # claimed, never started: back at once, no try used
                        continue
                    code = self._account(item).insurer.code
                    state = work_try(self.kind, item, insurer_code=code, policy=policy_for(code, POLICY_STATUS))
                    if state not in OPEN_STATES:
                        with self._lock:
                            self._ended_runs.add(item.run_id)
                except Exception:  # one item's crash must not stop the drain; its lease brings it back
                    logger.exception("sync item %s: processing crashed", item.pk)
                finally:
                    with self._lock:
                        self._busy -= 1
                    self._moved.set()
                    # A pooled connection goes back between items (and before waiting for the
                    # next): a drain's threads outnumber a process's pool (DB_POOL_MAX_SIZE).
                    db_connection_release()
        finally:
            connection.close()  # each thread has its own connection: do not leak them

    # -- the claiming thread

    def _stopping(self) -> bool:
        return (
            self.stop.is_set()
            or self.cluster_stop.is_set()
            or (self.until is not None and time.monotonic() >= self.until)
        )

    def run(
        self,
        *,
        more: Callable[[], float | None] = lambda: None,
        tick: float = 0.5,
        on_tick: Callable[[], None] | None = None,
    ) -> str:
        """Drain until nothing is left to claim and `more()` says not to wait (returns "empty"),
        or until stopped ("stopped") or out of time ("time"). `more()` returns how long to wait
        for more work, or None; `on_tick` runs every `tick` seconds (a pump pass)."""
        with heap_frozen():  # short collector pauses: a drain paces calls to the millisecond
            return self._run(more=more, tick=tick, on_tick=on_tick)

    def _run(self, *, more: Callable[[], float | None], tick: float, on_tick: Callable[[], None] | None) -> str:
        workers = [
            threading.Thread(target=self._work, name=f"sync-drain-{i}", daemon=True) for i in range(self.threads)
        ]
        for worker in workers:
            worker.start()
        flushed_at = ticked_at = time.monotonic()
        exhausted = False
        reason = "empty"
        try:
            while True:
                now = time.monotonic()
                if on_tick is not None and now - ticked_at >= tick:
                    on_tick()
                    ticked_at = now
                    exhausted = False
                if self._stopping():
                    reason = "time" if not (self.stop.is_set() or self.cluster_stop.is_set()) else "stopped"
                    if self._busy == 0:
                        break
                else:
                    # Up to twice as many claimed as threads, so a thread that ends a try finds the
                    # next one waiting rather than the next claim; claimed in batches of half the
                    # threads (a claim costs three statements whatever its size).
                    free = self.threads + self.prefetch - self._busy
                    if free > 0 and (free >= max(self.threads // 2, 1) or not exhausted):
                        batch = self._claim(free)
                        # A claim that failed (a busy database) says nothing about what is left.
                        exhausted = batch is not None and len(batch) < free
                due = now - flushed_at >= FLUSH_SECONDS and (self._done or len(self.attempts))
                if len(self._done) >= FLUSH_ITEMS or due:
                    self.flush()
                    flushed_at = time.monotonic()
                if exhausted and self._busy == 0 and not self._stopping():
                    self.flush()
                    flushed_at = time.monotonic()
                    wait = more()
                    if wait is None:
                        break
                    self._moved.wait(wait)
                    self._moved.clear()
                    exhausted = False
                    continue
                self._moved.wait(FLUSH_SECONDS)
                self._moved.clear()
        finally:
            self.stop.set()  # from here on a thread hands back what it has not started
            for _ in workers:
                self._todo.put(None)
            for worker in workers:
                worker.join()
            self.flush(final=True)
        return reason

    def _claim(self, limit: int) -> list[SyncItem] | None:
        try:
            batch = work_claim_batch(self.items, limit=limit, lease_seconds=self._lease, writing=write_gate)
        except DatabaseError:
            logger.exception("sync drain: a claim failed; trying again")
            return None
        with self._lock:
            self._busy += len(batch)
        self.claimed += len(batch)
        for item in batch:
            self._todo.put(item)
        return batch

    def flush(self, *, final: bool = False) -> None:
        """Write the answers and attempt rows collected so far, in one transaction; then the
        retry budget's count of the first attempts behind them."""
        self._flush_answers(final=final)
        try:
            self.budget.flush()
        except DatabaseError:
            logger.exception("sync drain: the retry budget's counts were not written; kept for the next write")

    def _flush_answers(self, *, final: bool) -> None:
        for _ in range(5 if final else 1):
            with self._lock:
                done, self._done = self._done, []
                ended, self._ended_runs = self._ended_runs, set()
            rows = self.attempts.take()
            if not (done or rows or ended):
                return
            try:
                with write_gate(), transaction.atomic():
                    self.attempts.write(rows)
                    written = _store_statuses(done) if done else []
            except DatabaseError:
                # A busy database: keep them for the next write (still IN_FLIGHT under our claim).
                logger.exception("sync drain: a batch write failed; trying again")
                with self._lock:
                    self._done[:0] = done
                    self._ended_runs |= ended
                self.attempts.add(rows)
                if final:
                    time.sleep(0.5)
                continue
            self.stored += len(written)
            ended |= {item.run_id for item in written}
            for run in SyncRun.objects.filter(pk__in=ended, finished_at__isnull=True):
                sync_run_close(run)
            return


def _status_policies() -> list[RetryPolicy]:
    """The status check's policy at every active insurer (a drain's lease and its end are set by
    the slowest), or the operation's default when none is active."""
    return [policy_for(code, POLICY_STATUS) for code in _insurer_codes()] or [default_policy(POLICY_STATUS)]


def _insurer_codes() -> list[str]:
    from integrations.models import Insurer

    return list(Insurer.objects.filter(is_active=True).values_list("code", flat=True))


def sync_drain(run_id: int | None = None, *, seconds: float | None = None, threads: int | None = None) -> int:
    """A drain task: claim QUEUED items (of one run, or any) in batches and try them, `threads`
    at a time, until none is left; returns how many it claimed.

    It claims for `seconds` at most (`SYNC_DRAIN_SECONDS`, kept inside django-q2's timeout with
    room for the last tries), then sends a successor if items are still waiting, so the work
    goes on in a fresh task. When its cluster stops it claims nothing more and hands back what
    it holds.
    """
    slowest_call = max(policy.attempt_timeout for policy in _status_policies())
    tail = 2 * (slowest_call + settings.INSURER_CONNECT_TIMEOUT) + 10
    seconds = min(seconds or DRAIN_SECONDS, max(settings.Q_CLUSTER["timeout"] - tail, 1.0))
    items = SyncItem.objects.all() if run_id is None else SyncItem.objects.filter(run_id=run_id)
    drain = _Drain(items, threads=threads or DRAIN_THREADS, until=time.monotonic() + seconds)
    reason = drain.run()
    if reason == "time" and items.filter(state=WorkState.QUEUED).exists():
        _enqueue_drains(1, run_id)
    logger.info("sync drain: %s claimed, %s stored (%s)", drain.claimed, drain.stored, reason)
    return drain.claimed


# --- a whole run in-process (`sync_policies`) ------------------------------------------------------


def sync_run_process(
    run: SyncRun,
    *,
    threads: int = 8,
    on_progress: Callable[[dict[str, int]], None] | None = None,
    tick: float = 0.5,
) -> dict[str, int]:
    """Process the run to the end in this process, `threads` items at a time; returns the counts.

    The run is drained here (`_Drain`: batch claims, batch writes), pumped every `tick`, and
    PENDING items are waited for until their `next_attempt_at`. If interrupted, the tries in
    hand end, what was claimed but not started is handed back, and what is left is handed to
    the django-q2 workers, so nothing stays QUEUED without a task.
    """
    stop = threading.Event()
    drain = _Drain(run.items.all(), threads=threads, stop=stop)

    def pump() -> None:
        # While items are left to claim, a retry that waits a moment longer costs nothing (the
        # drain has other work), and each pass is five statements in the claiming thread.
        sync_pump(processing_run=run)
        if on_progress is not None:
            on_progress(sync_run_progress(run))

    def more() -> float | None:
        sync_pump(processing_run=run)
        progress = sync_run_progress(run)
        if on_progress is not None:
            on_progress(progress)
        if progress["queued"]:
            return 0.0
        if progress["in_flight"] or progress["pending"]:
            return _until_next_due(run, cap=tick)
        return None

    try:
        drain.run(more=more, tick=max(tick, PUMP_SECONDS), on_tick=pump)
    except BaseException:
        stop.set()
        sync_run_enqueue(run)
        raise
    sync_run_close(run)
    return sync_run_progress(run)


def _until_next_due(run: SyncRun, *, cap: float) -> float:
    due = run.items.filter(state=WorkState.PENDING).aggregate(due=Min("next_attempt_at"))["due"]
    if due is None:
        return cap  # only items in flight at the workers: look again shortly
    return min(max((due - timezone.now()).total_seconds(), 0.01), cap)


def _sync_items_reopened(ids: list[int]) -> None:
    """Replayed items' runs are open again; the pump closes them, with fresh counts, when they end."""
    SyncRun.objects.filter(pk__in=SyncItem.objects.filter(pk__in=ids).values("run_id")).update(finished_at=None)


def sync_work_register() -> None:
    """Sync items as a kind of durable work (called from `SyncConfig.ready`): drains take them."""
    work_kind_register(
        WorkRegistration(
            name="sync",
            model=SyncItem,
            send=lambda ids: _enqueue_drains(min(DRAIN_TASKS, len(ids))),
            pump=sync_pump,
            replayed=_sync_items_reopened,
        )
    )
