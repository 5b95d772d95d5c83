"""Transitions of durable work records (see `work.item`): atomic and guarded.

Every transition is a conditional UPDATE on the current state, so two workers can never both
claim a record, and a record is never lost between states.

Times that several machines compare (leases, `next_attempt_at`) are taken from the database's
clock, never the worker's: a worker whose clock is off would otherwise write leases that are
already over for everybody else, or see everybody's as over. And a worker only finishes a record
while it still holds the lease it claimed it with (`lease_expires_at` is the fence): once its
lease has been taken back, another worker owns the record and the late one's answer is dropped.

A worker whose cluster is stopping does not make its record wait out the lease: the insurer call
in hand is cut short and the record handed back, due at once (`work_stop_event`, `work_hand_back`).
"""

from __future__ import annotations

import logging
import os
import random
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import IntegrityError, connection, models, transaction
from django.db.models import F, QuerySet
from django.db.models.functions import Now
from django.utils import timezone

from insurehub.log_context import log_context_bound
from insurehub.masking import mask_and_cut
from integrations.answers.taxonomy import ErrorClass, ErrorKind, InsurerError, with_insurer_text
from integrations.calling.channel import WORKER_STOPPED, ExchangeStopped, exchanges_stop, exchanges_stoppable
from integrations.calling.engine import NOT_SETTLED, Outcome, is_wait_not_failure, next_wait
from integrations.retry_policies import RetryPolicy
from work.item import WorkItem, WorkState

# The logger keeps the name it had before the module moved here: log shippers filter on it.
logger = logging.getLogger("integrations.services.work")

# One kind of work item, kept through a function (a SyncItem batch in, SyncItems out).
_Item = TypeVar("_Item", bound=WorkItem)

MAX_RAW_ANSWER = 4000
# How long a durable retry waits when the insurer's retry budget is spent, and what it says meanwhile.
RETRY_BUDGET_WAIT_SECONDS = 5.0
BUDGET_SPENT_MESSAGE = "Yeniden deneme bütçesi dolu; bekleniyor."
# What a person reads on a record whose call waited for the agency's send slot at the insurer.
SEND_SLOT_WAIT_MESSAGE = "Acentenin bu şirketteki gönderim hakkı dolu; sırası gelince sorulacak (istek gönderilmedi)."


# Caps over time: a record whose workers died this often, or that has been in play this long
# (postponed by the budget, reclaimed, retried), goes DEFERRED for a person instead of cycling.
WORK_MAX_RECLAIMS = getattr(settings, "WORK_MAX_RECLAIMS", 5)
WORK_MAX_IN_PLAY_HOURS = getattr(settings, "WORK_MAX_IN_PLAY_HOURS", 24.0)


# A QUEUED record that has not moved for this long while the broker's queue is empty has lost its
# task (its worker was killed holding prefetched tasks, or the broker restarted without them).
ORPHAN_SECONDS = 60.0

# How often a worker looks at its cluster's stop event: the most a stop waits to cut a call.
STOP_POLL_SECONDS = 0.1
# What a person reads on a record handed back by a stopping worker (its call cut, or never made).
CUT_AT_STOP_MESSAGE = "İşleyen süreç durdurulurken sigorta şirketi çağrısı yarıda kesildi; kayıt yeniden sırada."
HANDED_BACK_MESSAGE = "İşleyen süreç durduruluyor; kayıt yeniden sırada."


def _now():
    """The clock all machines agree on: PostgreSQL's. SQLite is one machine's file: its clock is ours
    (and SQLite compares datetimes as text, where its own `now` has fewer digits than ours)."""
    return timezone.now() if connection.vendor == "sqlite" else Now()


def _db_in(seconds: float):
    """The shared clock's now + `seconds` (see the module docstring)."""
    return _now() + timedelta(seconds=seconds)


def _has_claim_token(model: type[WorkItem]) -> bool:
    """Models with a `claim_token` column can be claimed in batches (`work_claim_batch`)."""
    return any(f.name == "claim_token" for f in model._meta.concrete_fields)


def _held(item: WorkItem) -> dict[str, object]:
    """The filter of a worker that still holds the record: IN_FLIGHT under the lease it claimed
    (and, where the model has one, the claim's token: unique per claim, so a record taken back
    and claimed again, even with an equal lease time, is never the late worker's)."""
    held = {"pk": item.pk, "state": WorkState.IN_FLIGHT, "lease_expires_at": item.lease_expires_at}
    token = getattr(item, "claim_token", "")
    if token:
        held["claim_token"] = token
    return held


def _claim_fields(model: type[WorkItem], lease_seconds: float) -> dict[str, object]:
    from django.db.models.functions import Coalesce

    fields: dict[str, object] = {
        "state": WorkState.IN_FLIGHT,
        "lease_expires_at": _db_in(lease_seconds),
        "updated_at": _now(),
        "in_play_since": Coalesce(F("in_play_since"), F("created_at")),
    }
    if _has_claim_token(model):
        # Every claim writes a token of its own, so whoever held the record before can not
        # pass the fence of a batch write with the token it still has in memory.
        fields["claim_token"] = uuid.uuid4().hex
    return fields


def work_claim(model: type[WorkItem], pk: int, *, lease_seconds: float) -> bool:
    """QUEUED -> IN_FLIGHT for exactly one worker, with a lease that outlives the call."""
    return bool(model.objects.filter(pk=pk, state=WorkState.QUEUED).update(**_claim_fields(model, lease_seconds)))


def work_claim_batch(
    queryset: models.QuerySet[_Item],
    *,
    limit: int,
    lease_seconds: float,
    writing: Callable[[], AbstractContextManager[Any]] = nullcontext,
) -> list[_Item]:
    """QUEUED -> IN_FLIGHT for up to `limit` records of `queryset`, oldest first, in one statement.

    One claim per batch instead of one per record is what lets a worker keep hundreds of tries
    a second in flight. The claim writes a fresh token on the records it takes and reads them
    back by it, so two claimers never get the same record: the UPDATE is guarded on QUEUED, and
    on PostgreSQL the rows are chosen `FOR UPDATE SKIP LOCKED`, so concurrent claimers take
    different rows instead of queueing behind each other's (SQLite serialises writers anyway).
    The model needs a `claim_token` column. Returns the claimed records (lease and token set).
    `writing()` is held around the writing transaction only, not the read that follows it (a
    process's SQLite write gate: others wait for the write, not for the records being built).
    """
    model = queryset.model
    if limit <= 0:
        return []
    fields = _claim_fields(model, lease_seconds)
    due = queryset.filter(state=WorkState.QUEUED).order_by("pk").values("pk")[:limit]
    due_pks: QuerySet[Any, dict[str, Any]] | list[Any] = due
    with writing(), transaction.atomic():
        if connection.features.has_select_for_update_skip_locked:
            # Rows locked first, then updated: PostgreSQL may run an `IN (… LIMIT n FOR UPDATE
            # SKIP LOCKED)` subquery again for each row it updates, which takes more than `n`.
            # Only the records' own rows (`of`): a queryset that joins (the drain reads each
            # item's account id through its policy) must not lock, or skip for a lock, a policy.
            due_pks = list(due.select_for_update(skip_locked=True, of=("self",)).values_list("pk", flat=True))
            if not due_pks:
                return []
        claimed = model.objects.filter(pk__in=due_pks, state=WorkState.QUEUED).update(**fields)
    if not claimed:
        return []
    return list(queryset.filter(state=WorkState.IN_FLIGHT, claim_token=fields["claim_token"]).order_by("pk"))


def _submitted_fields(now: object) -> dict[str, object]:
    """What IN_FLIGHT -> SUBMITTED writes, one record at a time or a batch."""
    return {
        "state": WorkState.SUBMITTED,
        "attempts": F("attempts") + 1,
        "lease_expires_at": None,
        "next_attempt_at": None,
        "finished_at": now,
        "updated_at": now,
        "error_class": "",
        "error_kind": "",
        "provider_code": "",
        "error_message": "",
    }


def work_mark_submitted(item: WorkItem, **fields: object) -> bool:
    return bool(type(item).objects.filter(**_held(item)).update(**_submitted_fields(timezone.now()), **fields))


def work_mark_submitted_batch(done: Sequence[tuple[_Item, dict[str, object]]]) -> list[_Item]:
    """IN_FLIGHT -> SUBMITTED for many records of one model in a few statements; returns those written.

    Each record is still fenced by its own claim: the UPDATE is guarded on IN_FLIGHT and the
    token it was claimed with, so a record whose lease was taken back (and maybe claimed again
    by another worker, with another token) is not written, and is left out of the result.
    Records that share a token and the same extra `fields` go in one UPDATE. Call it inside the
    transaction that stores the rest of the answers, so a record is SUBMITTED only with them.
    """
    if not done:
        return []
    model = type(done[0][0])
    now = timezone.now()
    groups: dict[tuple, list[_Item]] = defaultdict(list)
    written: list[_Item] = []
    for item, fields in done:
        token = getattr(item, "claim_token", "")
        if not token:
            if work_mark_submitted(item, **fields):  # claimed one by one: its lease is the fence
                written.append(item)
            continue
        groups[(token, tuple(sorted(fields.items())))].append(item)
    for (token, fields), items in groups.items():
        pks = [item.pk for item in items]
        # Only a kind with a claim token (`_has_claim_token`) has one set: a lookup by name, as `_held`'s.
        held = {"pk__in": pks, "claim_token": token}
        moved = model.objects.filter(state=WorkState.IN_FLIGHT, **held).update(**_submitted_fields(now), **dict(fields))
        if moved == len(pks):
            written += items
        elif moved:
            ours = set(
                model.objects.filter(state=WorkState.SUBMITTED, finished_at=now, **held).values_list("pk", flat=True)
            )
            written += [item for item in items if item.pk in ours]
    return written


def _error_fields(error: InsurerError) -> dict[str, object]:
    return {
        "error_class": error.error_class.value,
        "error_kind": error.kind.value,
        "provider_code": mask_and_cut(error.provider_code, 64),
        "error_message": mask_and_cut(with_insurer_text(error.agent_message(), error.message), 500),
        "raw_answer": mask_and_cut(error.raw_sample, MAX_RAW_ANSWER),
    }


def work_mark_failed(item: WorkItem, *, error: InsurerError) -> bool:
    """IN_FLIGHT -> FAILED: permanent only. Payload and error context stay for a replay."""
    now = timezone.now()
    return bool(
        type(item)
        .objects.filter(**_held(item))
        .update(
            state=WorkState.FAILED,
            attempts=F("attempts") + 1,
            lease_expires_at=None,
            finished_at=now,
            updated_at=now,
            **_error_fields(error),
        )
    )


def work_mark_retry(
    item: WorkItem, *, error: InsurerError, policy: RetryPolicy, attempt_cap: int, rng: random.Random | None = None
) -> WorkState | None:
    """IN_FLIGHT -> PENDING with `next_attempt_at` from the retry policy; -> DEFERRED past the cap.

    A throttle does not count against the cap (it is not a failure), but it still waits.
    Returns the state reached, or None when the record was no longer ours.
    """
    now = timezone.now()
    attempts = item.attempts + 1
    wait = next_wait(policy, failures=attempts, error=error, rng=rng)
    # Throttles and settling waits are counted apart: they are not failures.
    throttled = item.throttled_attempts + (1 if is_wait_not_failure(error) else 0)
    failures = attempts - throttled
    with transaction.atomic():
        moved = (
            type(item)
            .objects.filter(**_held(item))
            .update(
                state=WorkState.PENDING,
                attempts=attempts,
                throttled_attempts=throttled,
                next_attempt_at=_db_in(wait.seconds),
                lease_expires_at=None,
                updated_at=now,
                **_error_fields(error),
            )
        )
        if not moved:
            return None
        if failures >= attempt_cap or throttled >= 4 * attempt_cap or _in_play_too_long(item):
            type(item).objects.filter(pk=item.pk, state=WorkState.PENDING).update(
                state=WorkState.DEFERRED, next_attempt_at=None, finished_at=now
            )
            return WorkState.DEFERRED
    return WorkState.PENDING


def work_postpone(item: WorkItem, *, seconds: float, reason: str) -> WorkState | None:
    """IN_FLIGHT -> PENDING without using up a try: the retry budget said "not now".

    Not counted as a try, so only the cap over time ends a record postponed again and again
    (-> DEFERRED). Returns the state reached, or None when the record was no longer ours.
    """
    now = timezone.now()
    if _in_play_too_long(item):
        moved = (
            type(item)
            .objects.filter(**_held(item))
            .update(
                state=WorkState.DEFERRED,
                next_attempt_at=None,
                lease_expires_at=None,
                finished_at=now,
                updated_at=now,
                error_message=mask_and_cut(f"{reason} {WORK_MAX_IN_PLAY_HOURS:g} saattir sonuçlanmadı.", 500),
            )
        )
        return WorkState.DEFERRED if moved else None
    moved = (
        type(item)
        .objects.filter(**_held(item))
        .update(
            state=WorkState.PENDING,
            next_attempt_at=_db_in(seconds),
            lease_expires_at=None,
            updated_at=now,
            error_message=mask_and_cut(reason, 500),
        )
    )
    return WorkState.PENDING if moved else None


def work_hand_back(item: WorkItem, *, message: str = HANDED_BACK_MESSAGE) -> WorkState | None:
    """IN_FLIGHT -> PENDING due now, lease released: this worker is stopping mid-try.

    Not a try (`attempts` and the caps are untouched: the insurer did not fail, we stopped
    listening), not a lost worker (`reclaims` untouched), and never final: whatever the cut call
    may have done at the insurer, the next try finds out (an issuance has `maybe_sent` set before
    its send, so that try asks the insurer first). `provider_code` says WORKER_STOPPED, which
    makes that next try free of the retry budget (`retry_permit`): it is the cut try again, and
    the cut try already paid whatever it owed. Only the cap over time ends a record that is cut
    again and again. Returns the state reached, or None when the record was no longer ours.
    """
    moved = (
        type(item)
        .objects.filter(**_held(item))
        .update(
            state=WorkState.PENDING,
            next_attempt_at=_now(),
            lease_expires_at=None,
            updated_at=timezone.now(),
            error_class="",
            error_kind="",
            provider_code=WORKER_STOPPED,
            error_message=mask_and_cut(message, 500),
        )
    )
    return WorkState.PENDING if moved else None


def _in_play_too_long(item: WorkItem) -> bool:
    since = item.in_play_since or item.created_at
    return since is not None and timezone.now() - since > timedelta(hours=WORK_MAX_IN_PLAY_HOURS)


def retry_permit(item: WorkItem, *, insurer_code: str, looks_first: bool = False) -> str:
    """May this durable record's next try go? "free" (a first try; after a throttle or a
    settling wait; the redo of a try cut by a stopping worker; or a try that starts by asking
    the insurer, `looks_first`: a lookup is not a retry), "spent" (a retry paid from the
    insurer's budget; refunded if it succeeds) or "denied" (the budget is spent: wait)."""
    waited = item.error_kind in (ErrorKind.THROTTLED, ErrorKind.NOT_READY) or item.provider_code in (
        NOT_SETTLED,
        WORKER_STOPPED,
    )
    if item.attempts == 0 or looks_first or waited:
        return "free"
    from integrations.pacing.retry_budget import SharedRetryBudget

    try:
        return "spent" if SharedRetryBudget().try_spend(insurer_code) else "denied"
    except Exception:  # noqa: BLE001 - the budget's state restarting (Redis, the database): wait, as when it says no
        logger.warning("%s %s: the retry budget could not be asked; the retry waits", type(item).__name__, item.pk)
        return "denied"


def work_promote_due(model: type[WorkItem], *, limit: int = 500) -> list[int]:
    """PENDING -> QUEUED for records whose `next_attempt_at` has arrived; returns their ids."""
    now = timezone.now()
    due = list(
        model.objects.filter(state=WorkState.PENDING, next_attempt_at__lte=_now())
        .order_by("next_attempt_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )
    promoted = []
    for pk in due:
        if model.objects.filter(pk=pk, state=WorkState.PENDING).update(state=WorkState.QUEUED, updated_at=now):
            promoted.append(pk)
    return promoted


def work_promote_one(model: type[WorkItem], pk: int) -> bool:
    """PENDING -> QUEUED for one record whose wait is over (a worker that kept it through a short wait)."""
    now = timezone.now()
    return bool(
        model.objects.filter(pk=pk, state=WorkState.PENDING, next_attempt_at__lte=_now()).update(
            state=WorkState.QUEUED, updated_at=now
        )
    )


def work_reclaim_expired(model: type[WorkItem], *, limit: int = 500) -> list[int]:
    """IN_FLIGHT -> QUEUED when the worker's lease expired: it died, or hangs past any timeout."""
    now = timezone.now()
    expired = list(
        model.objects.filter(state=WorkState.IN_FLIGHT, lease_expires_at__lt=_now()).values_list("pk", flat=True)[
            :limit
        ]
    )
    reclaimed = []
    for pk in expired:
        lost = model.objects.filter(pk=pk, state=WorkState.IN_FLIGHT, lease_expires_at__lt=_now())
        if lost.filter(reclaims__gte=WORK_MAX_RECLAIMS - 1).update(
            state=WorkState.DEFERRED,
            reclaims=F("reclaims") + 1,
            lease_expires_at=None,
            finished_at=now,
            updated_at=now,
            error_message=f"İşleyen süreç {WORK_MAX_RECLAIMS} kez yanıt vermeden kayboldu; bir kişi bakmalı.",
        ):
            logger.error("%s %s DEFERRED: its workers were lost %s times", model.__name__, pk, WORK_MAX_RECLAIMS)
        elif lost.update(state=WorkState.QUEUED, reclaims=F("reclaims") + 1, lease_expires_at=None, updated_at=now):
            reclaimed.append(pk)
    return reclaimed


def broker_queue_is_empty() -> bool:
    """Whether django-q2's queue holds no task: only then is a record whose task has not started
    surely one whose task was lost, not one waiting in a backlog. False for a broker that is down
    (the next pass looks again)."""
    from django_q.brokers import get_broker

    try:
        return not get_broker().queue_size()
    except Exception:  # noqa: BLE001 - a broker that is down: nothing to conclude
        return False


def work_requeue_orphans(model: type[WorkItem], *, older_than: float = ORPHAN_SECONDS, limit: int = 500) -> list[int]:
    """QUEUED records whose task was lost: returns their ids, to be sent again.

    django-q2's Redis broker forgets a task once a cluster has pulled it, so a cluster killed
    with tasks in hand, or a Redis restart, leaves records QUEUED with no task. Only while the
    broker's queue is empty is a record that has not moved for `older_than` seconds surely one
    of those (a long backlog is not re-sent); it is touched, so it is sent at most once a period.
    A duplicate task is harmless: the guarded claim lets one worker in.
    """
    if not broker_queue_is_empty():
        return []
    stale = model.objects.filter(state=WorkState.QUEUED, updated_at__lt=_now() - timedelta(seconds=older_than))
    ids = list(stale.order_by("pk").values_list("pk", flat=True)[:limit])
    if ids:
        model.objects.filter(pk__in=ids, state=WorkState.QUEUED).update(updated_at=_now())
    return ids


def work_fresh_tries(now: Any) -> dict[str, Any]:
    """The fields that send a finished record back to the queue with a fresh set of tries (its
    earlier ones stay in the attempt log): a replay, or an agent's "fetch it again"."""
    return {
        "state": WorkState.QUEUED,
        "attempts": 0,
        "throttled_attempts": 0,
        "reclaims": 0,
        "in_play_since": now,
        "next_attempt_at": None,
        "finished_at": None,
        "updated_at": now,
    }


def work_replay(queryset: models.QuerySet) -> list[int]:
    """FAILED or DEFERRED -> QUEUED, oldest first, after a fix; the payload is sent as it was.

    A replayed record gets a fresh set of tries (its earlier ones stay in the attempt log).
    A record that may not go live again (say, an issuance whose quote request has another
    live issuance by now) is left where it is rather than breaking the constraint.
    """
    now = timezone.now()
    ids = list(
        queryset.filter(state__in=[WorkState.FAILED, WorkState.DEFERRED])
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)
    )
    replayed = []
    for pk in ids:
        try:
            with transaction.atomic():
                moved = queryset.model.objects.filter(pk=pk, state__in=[WorkState.FAILED, WorkState.DEFERRED]).update(
                    **work_fresh_tries(now)
                )
        except IntegrityError:
            continue
        if moved:
            replayed.append(pk)
    return replayed


# --- the one try loop ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkKind:
    """What one kind of durable work does on a try; `work_try` is the loop every kind shares.

    `call` makes exactly one insurer try (`attempt_limit=1`: the record is the retry layer) and
    `on_success` stores its result under the record's lease. `looks_first` says the next try
    starts by asking the insurer (an issuance that may have been sent), which is not a retry.
    `note` turns an error into what a person reads on a record that waits or is DEFERRED.
    """

    model: type[WorkItem]
    call: Callable[[Any, str], Outcome]
    # May return the state it left the record in (a batch writer: IN_FLIGHT until it writes),
    # which spares `work_try` reading it back.
    on_success: Callable[[Any, Outcome], WorkState | None]
    looks_first: Callable[[Any], bool] = lambda item: False
    note: Callable[[Any, InsurerError, Outcome | None], str] | None = None


def work_try(kind: WorkKind, item: WorkItem, *, insurer_code: str, policy: RetryPolicy) -> WorkState:
    """One try of a record this worker has claimed; returns the state it was left in.

    Every log line of the try names the record and its insurer (`insurehub.log_context`).
    """
    with log_context_bound(insurer=insurer_code, record_id=f"{kind.model.__name__}:{item.pk}"):
        return _work_try(kind, item, insurer_code=insurer_code, policy=policy)


def _work_try(kind: WorkKind, item: WorkItem, *, insurer_code: str, policy: RetryPolicy) -> WorkState:
    """`work_try`'s body.

    Nothing that goes wrong on our side (a credential that no longer decrypts, a database error
    while storing the answer) may strand the record IN_FLIGHT to be reclaimed for ever: it is
    an unclassified failure like any other, retried under the unknown cap, then DEFERRED.

    When the worker's cluster is stopping, the insurer call is cut short (its exchanges are
    stoppable) and the record handed back due now; a task taken after the stop is handed back
    without a call. An answer that arrived whole is still stored.
    """
    if work_stop_event().is_set():
        return _hand_back(kind, item, ExchangeStopped(sent=False))  # a task taken after the stop
    permit = retry_permit(item, insurer_code=insurer_code, looks_first=kind.looks_first(item))
    if permit == "denied":
        # Background work never fails for the budget: it waits.
        return work_postpone(item, seconds=RETRY_BUDGET_WAIT_SECONDS, reason=BUDGET_SPENT_MESSAGE) or _state(item)
    outcome: Outcome | None = None
    try:
        with exchanges_stoppable():
            outcome = kind.call(item, permit)
        if outcome.error is None:  # outcome.ok, spelled so that the failure below is typed
            stored = kind.on_success(item, outcome)
            return stored if stored is not None else _state(item)
        error = outcome.error
    except ExchangeStopped as stopped:
        return _hand_back(kind, item, stopped)
    except Exception as exc:
        logger.exception("%s %s: a try crashed on our side", kind.model.__name__, item.pk)
        error = InsurerError(
            ErrorKind.UNCLASSIFIED,
            provider_code="PLATFORM_ERROR",
            # Our own exception may quote a record's payload (an owner's TCKN): masked, then cut.
            message=mask_and_cut(f"{type(exc).__name__}: {exc}", 300),
            ambiguous=True,
        )
    if outcome is not None and outcome.retry_refused:
        return work_postpone(item, seconds=RETRY_BUDGET_WAIT_SECONDS, reason=BUDGET_SPENT_MESSAGE) or _state(item)
    if error.is_local_refusal:
        return _postpone_for_send_slot(item, error, permit=permit, insurer_code=insurer_code)
    if error.error_class is ErrorClass.PERMANENT:
        work_mark_failed(item, error=error)
        logger.warning("%s %s FAILED: %s %s", kind.model.__name__, item.pk, error.kind, error.provider_code)
        return _state(item)
    if kind.note is not None:
        error.message = kind.note(item, error, outcome)
    # An unclassified answer is retried under the lower cap until somebody maps its code.
    cap = policy.unknown_max_attempts if error.error_class is ErrorClass.UNKNOWN else policy.max_attempts
    state = work_mark_retry(item, error=error, policy=policy, attempt_cap=cap)
    if state == WorkState.DEFERRED:
        logger.warning(
            "%s %s DEFERRED after %s tries: %s", kind.model.__name__, item.pk, item.attempts + 1, error.provider_code
        )
    return state or _state(item)


def _postpone_for_send_slot(item: WorkItem, error: InsurerError, *, permit: str, insurer_code: str) -> WorkState:
    """The call was refused on our side: the account's next send slot (or the state that hands
    them out) was not to be had in time. Nothing reached the insurer, so this is no try — not a
    failure, not an insurer's throttle, nothing for the caps over tries to count (many workers
    sharing a tight contract would otherwise wear records out on their own queue) — only a wait
    for the slot; the cap over time still ends a record that never gets one. A retry paid for
    from the budget gets its token back: it was never made."""
    if permit == "spent":
        from integrations.pacing.retry_budget import SharedRetryBudget

        try:
            SharedRetryBudget().refund(insurer_code)
        except Exception:  # noqa: BLE001 - the state that refused the slot may be the one down
            logger.warning("%s %s: the retry budget's token was not given back", type(item).__name__, item.pk)
    seconds = error.wait.seconds if error.wait is not None else RETRY_BUDGET_WAIT_SECONDS
    return work_postpone(item, seconds=max(seconds, 0.05), reason=SEND_SLOT_WAIT_MESSAGE) or _state(item)


def _hand_back(kind: WorkKind, item: WorkItem, stopped: ExchangeStopped) -> WorkState:
    error = stopped.error
    error.message = CUT_AT_STOP_MESSAGE if stopped.sent else HANDED_BACK_MESSAGE
    # An issuance whose send may be out says so ("outcome unknown"), as after any lost answer.
    message = kind.note(item, error, None) if kind.note is not None else error.message
    logger.info("%s %s handed back: the worker is stopping (%s)", kind.model.__name__, item.pk, stopped)
    return work_hand_back(item, message=message) or _state(item)


def _state(item: WorkItem) -> WorkState:
    return WorkState(type(item).objects.values_list("state", flat=True).get(pk=item.pk))


# --- the worker's cluster stopping ----------------------------------------------------------------


class _StopWatch:
    """This process's view of its cluster's stop: a local event, and a thread that sets it.

    Only the cluster's main process is told (SIGTERM); it sets a multiprocessing event shared by
    every process of the cluster (they are forked from it). The thread polls that event rather
    than wait on it: a process killed while waiting on a multiprocessing event (a worker past
    django-q2's timeout, the OOM killer) leaves it a sleeper that never wakes, and the next
    `set()` — in the cluster's signal handler — blocks for ever waiting for that sleeper.
    Reading the flag's semaphore takes no lock at all.
    """

    def __init__(self, cluster_event: Any | None) -> None:
        self.pid = os.getpid()
        self.event = threading.Event()
        if cluster_event is not None:
            threading.Thread(target=self._watch, args=(cluster_event,), name="cluster-stop-watch", daemon=True).start()

    def _watch(self, cluster_event: Any) -> None:
        while not _is_set_without_lock(cluster_event):
            time.sleep(STOP_POLL_SECONDS)
        exchanges_stop()
        self.event.set()
        logger.info("the cluster is stopping: insurer calls of durable work are cut short and handed back")


_stop_watch: _StopWatch | None = None
_stop_watch_lock = threading.Lock()


def work_stop_event() -> threading.Event:
    """Set once the django-q2 cluster this process works in is stopping; never set elsewhere.

    When it is set, stoppable insurer calls of this process have been cut (`work_try` hands
    their records back) and loops that would start more work (the pump, an issuance's inline
    retries) end. A `threading.Event`: any thread of the process may wait on it safely.

    The first call in a process finds the cluster's stop event and starts the watch. django-q2
    hands that event to its Sentinel, not to workers, and no signal reaches a worker; it has no
    API or signal for a task to learn of a stop (`post_spawn`, `pre_execute` and the rest carry
    no event). But a worker is forked from inside the Sentinel, so the Sentinel (and the Cluster
    above it) are still on the stack of the worker's main thread, the one that runs its tasks.
    Outside a cluster (a command, a test, the web) there is no such stop: an event nobody sets.
    """
    global _stop_watch
    with _stop_watch_lock:
        if _stop_watch is None or _stop_watch.pid != os.getpid():
            _stop_watch = _StopWatch(_cluster_stop_event())
        return _stop_watch.event


def _cluster_stop_event() -> Any | None:
    """The stop event of the django-q2 Sentinel (or Cluster) on this thread's stack or, called
    from another thread, on the main thread's; found by type, whatever its variable's name."""
    from django_q.cluster import Cluster, Sentinel

    main_thread = threading.main_thread().ident
    stacks = [sys._getframe(1), sys._current_frames().get(main_thread) if main_thread is not None else None]
    for frame in stacks:
        while frame is not None:
            for value in list(frame.f_locals.values()):
                # type(), not isinstance(): a lazy object's __class__ would evaluate it.
                if issubclass(type(value), Sentinel | Cluster) and getattr(value, "stop_event", None) is not None:
                    return value.stop_event
            frame = frame.f_back
    return None


def _is_set_without_lock(event: Any) -> bool:
    """A multiprocessing Event's flag, read from its semaphore's value without taking its lock
    (where the platform cannot read it, macOS, through `is_set()`, which holds it a moment)."""
    try:
        return event._flag.get_value() > 0
    except (AttributeError, NotImplementedError):
        return event.is_set()
