"""The attempt log's history: summed per minute, read as one with the raw rows, pruned in batches.

Every call leaves an `Attempt` row, so reading "all calls ever" (what /metrics' counters are)
from the raw rows costs more with every day the platform runs. A roll-up sums complete minutes
into `AttemptMinute`; readers take the minute rows before `AttemptRollupState.rolled_until`
and the raw rows from it on, so each call is counted exactly once and the numbers are the same
as a count of the raw rows.

Why the roll-up runs behind the clock (`ROLLUP_LAG`) instead of at write time: the recorder
writes an operation's rows when it waits or ends, so a row can land up to one attempt timeout
(20 s at most today) after it started. A minute is summed only once nothing can still arrive
for it; writing per attempt would instead cost every insurer call an extra upsert.

The roll-up also adds each chunk into one running-total row per label set (at `ALL_TIME_MINUTE`):
/metrics' counters are sums over all time, read from those few hundred rows plus the raw rows
not yet summed, never from a year of minute rows. So retention may drop old minute rows (their
calls stay in the totals) and raw rows already summed, and a counter never goes down, which
Prometheus would read as a reset. Retention never takes a raw row the roll-up has not summed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Generic, TypeVar

from django.db import transaction
from django.db.models import Aggregate, Count, F, Min, Q, Sum
from django.db.models.functions import TruncMinute
from django.utils import timezone

from integrations.models import (
    LATENCY_BUCKET_FIELDS,
    LATENCY_BUCKETS,
    Attempt,
    AttemptMinute,
    AttemptRollupState,
    RetryBudgetBucket,
)
from integrations.pacing.arithmetic import BUDGET_BUCKET_SECONDS, BUDGET_WINDOW_SECONDS

# The label set of a minute row: everything /metrics and the dashboard group or filter by.
DIMENSIONS = ("insurer_code", "operation", "product", "call", "error_class", "error_kind", "provider_code", "ok")
ALL_TIME_MINUTE = datetime(1970, 1, 1, tzinfo=UTC)
# Longer than any attempt timeout plus the recorder's flush, so no row arrives for a summed minute.
ROLLUP_LAG = timedelta(minutes=5)
# One transaction sums at most this much of the log, so a first roll-up of months of rows
# does not hold SQLite's write lock for the whole of it.
ROLLUP_CHUNK = timedelta(hours=6)
DELETE_BATCH = 2000

_STATE_PK = 1


def floor_minute(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


def ceil_minute(moment: datetime) -> datetime:
    floored = floor_minute(moment)
    return floored if floored == moment else floored + timedelta(minutes=1)


# --- Reading raw rows and minute rows as one ---------------------------------------------------


# What a measure counts in: int for counts, float for sums of float fields (durations).
Number_co = TypeVar("Number_co", int, float, covariant=True)
Number = TypeVar("Number", int, float)


@dataclass(frozen=True)
class Measure(Generic[Number_co]):
    """One number per group, as an aggregate over raw rows and its twin over minute rows."""

    raw: Aggregate
    rolled: Aggregate


COUNT: Measure[int] = Measure(Count("pk"), Sum("count"))
RETRIES: Measure[int] = Measure(Count("pk", filter=Q(attempt_no__gt=1)), Sum("retries"))
LATENCY_MS_SUM: Measure[float] = Measure(Sum("latency_ms"), Sum("latency_ms_sum"))


def count_where(**conditions: object) -> Measure[int]:
    """Calls matching conditions on the label set (ok, error_class, error_kind…)."""
    return Measure(Count("pk", filter=Q(**conditions)), Sum("count", filter=Q(**conditions)))


def latency_buckets() -> dict[str, Measure[int]]:
    """`le_<i>`: calls that took at most `LATENCY_BUCKETS[i]` seconds."""
    return {
        f"le_{i}": Measure(Count("pk", filter=Q(latency_ms__lte=bound * 1000)), Sum(LATENCY_BUCKET_FIELDS[i]))
        for i, bound in enumerate(LATENCY_BUCKETS)
    }


def rolled_until() -> datetime | None:
    return AttemptRollupState.objects.filter(pk=_STATE_PK).values_list("rolled_until", flat=True).first()


def attempt_totals(
    *,
    group_by: Sequence[str],
    measures: Mapping[str, Measure[Number]],
    since: datetime | None = None,
    until: datetime | None = None,
    where: Q | None = None,
    by_minute: bool = False,
) -> dict[tuple, dict[str, Number]]:
    """Measures per group over calls started in [since, until] (open ends: all time).

    Whole minutes already rolled up come from `AttemptMinute`; a window's partial first minute
    and everything from `rolled_until` on come from the raw rows, so a window that does not start
    on a minute boundary counts exactly the calls a raw count would. With `by_minute`, the
    group key starts with the minute (UTC).
    """
    watermark = rolled_until()
    raw_ranges: list[Q] = []
    rolled_range: Q | None = None
    start = ceil_minute(since) if since is not None else None
    end = None if watermark is None else watermark if until is None else min(watermark, floor_minute(until))
    if end is None or (start is not None and end <= start):
        raw_ranges.append(_raw_range(since, until, until_inclusive=True))
    else:
        if since is not None and start is not None and since < start:  # start is set with since
            raw_ranges.append(_raw_range(since, start, until_inclusive=False))
        # All time: the running totals; a window: its whole minutes (never the totals' 1970 row).
        rolled_range = Q(minute=ALL_TIME_MINUTE) if start is None else Q(minute__gte=start, minute__lt=end)
        raw_ranges.append(_raw_range(end, until, until_inclusive=True))

    totals: dict[tuple, dict[str, Number]] = {}
    dims = ["minute", *group_by] if by_minute else list(group_by)
    for raw_range in raw_ranges:
        rows = Attempt.objects.filter(raw_range)
        if by_minute:
            rows = rows.annotate(minute=TruncMinute("started_at", tzinfo=UTC))
        _add(totals, dims, rows, {name: m.raw for name, m in measures.items()}, where)
    if rolled_range is not None:
        minute_rows = AttemptMinute.objects.filter(rolled_range)
        _add(totals, dims, minute_rows, {name: m.rolled for name, m in measures.items()}, where)
    return totals


def _raw_range(since: datetime | None, until: datetime | None, *, until_inclusive: bool) -> Q:
    condition = Q()
    if since is not None:
        condition &= Q(started_at__gte=since)
    if until is not None:
        condition &= Q(started_at__lte=until) if until_inclusive else Q(started_at__lt=until)
    return condition


def _add(totals: dict, dims: list[str], rows, aggregates: dict[str, Aggregate], where: Q | None) -> None:
    if where is not None:
        rows = rows.filter(where)
    for row in rows.values(*dims).annotate(**aggregates).order_by():
        key = tuple(row[d].astimezone(UTC) if d == "minute" else row[d] for d in dims)
        group = totals.setdefault(key, dict.fromkeys(aggregates, 0))
        for name in aggregates:
            group[name] += row[name] or 0


# --- Roll-up ------------------------------------------------------------------------------------


def _locked_state() -> AttemptRollupState:
    """The roll-up's one row, locked for the transaction: concurrent roll-ups queue here.

    (SQLite takes the write lock at BEGIN IMMEDIATE already; PostgreSQL needs the row lock.)
    """
    return AttemptRollupState.objects.select_for_update().get(pk=_STATE_PK)


def attempt_minutes_rollup(*, now: datetime | None = None) -> int:
    """Sum the complete minutes older than `ROLLUP_LAG` into minute rows; returns calls summed.

    Idempotent and safe with several workers: each chunk is summed and `rolled_until` moved in
    one transaction under the state row's lock, and a chunk starts where the last one ended.
    """
    target = floor_minute((now or timezone.now()) - ROLLUP_LAG)
    AttemptRollupState.objects.get_or_create(pk=_STATE_PK)
    summed = 0
    while True:
        with transaction.atomic():
            state = _locked_state()
            start = state.rolled_until
            if start is None:
                first = Attempt.objects.filter(started_at__lt=target).aggregate(first=Min("started_at"))["first"]
                start = floor_minute(first) if first is not None else target
            if start >= target:
                if state.rolled_until is None:
                    state.rolled_until = start
                    state.save(update_fields=["rolled_until"])
                return summed
            end = min(start + ROLLUP_CHUNK, target)
            minutes = [
                AttemptMinute(**row)
                for row in Attempt.objects.filter(started_at__gte=start, started_at__lt=end)
                .annotate(minute=TruncMinute("started_at", tzinfo=UTC))
                .values("minute", *DIMENSIONS)
                .annotate(
                    count=Count("pk"),
                    retries=RETRIES.raw,
                    latency_ms_sum=Sum("latency_ms"),
                    **{
                        field: Count("pk", filter=Q(latency_ms__lte=bound * 1000))
                        for bound, field in zip(LATENCY_BUCKETS, LATENCY_BUCKET_FIELDS, strict=True)
                    },
                )
                .order_by()
            ]
            AttemptMinute.objects.bulk_create(minutes, batch_size=500)
            _add_to_totals(minutes)
            summed += sum(row.count for row in minutes)
            state.rolled_until = end
            state.save(update_fields=["rolled_until"])


_SUMMED = ("count", "retries", "latency_ms_sum", *LATENCY_BUCKET_FIELDS)


def _add_to_totals(minutes: list[AttemptMinute]) -> None:
    """Add minute rows into the running totals, one statement per label set (a few per minute)."""
    sums: dict[tuple, dict[str, float]] = {}
    for row in minutes:
        total = sums.setdefault(tuple(getattr(row, d) for d in DIMENSIONS), dict.fromkeys(_SUMMED, 0))
        for name in _SUMMED:
            total[name] += getattr(row, name)
    for labels, added in sums.items():
        label_values = dict(zip(DIMENSIONS, labels, strict=True))
        running = AttemptMinute.objects.filter(minute=ALL_TIME_MINUTE, **label_values)
        if not running.update(**{name: F(name) + value for name, value in added.items()}):
            AttemptMinute.objects.create(minute=ALL_TIME_MINUTE, **label_values, **added)


def attempt_minutes_prune(*, before: datetime, dry_run: bool = False) -> int:
    """Delete minute rows older than `before`; their calls stay in the running totals."""
    old = AttemptMinute.objects.filter(minute__gt=ALL_TIME_MINUTE, minute__lt=floor_minute(before))
    return old.count() if dry_run else delete_in_batches(old)


# --- Pruning ------------------------------------------------------------------------------------


def delete_in_batches(rows, *, batch_size: int = DELETE_BATCH) -> int:
    """Delete a queryset's rows a batch per statement, each committed on its own, so a large
    prune never holds SQLite's single write lock long enough to stall the workers."""
    deleted = 0
    while True:
        ids = list(rows.order_by().values_list("pk", flat=True)[:batch_size])
        if not ids:
            return deleted
        deleted += rows.model.objects.filter(pk__in=ids).delete()[0]


def attempts_prune(*, before: datetime, dry_run: bool = False) -> int:
    """Delete raw attempt rows started before `before` that the minute rows already hold."""
    watermark = rolled_until()
    if watermark is None:
        return 0
    old = Attempt.objects.filter(started_at__lt=min(before, watermark))
    return old.count() if dry_run else delete_in_batches(old)


def budget_buckets_prune(*, before: datetime, now: datetime | None = None, dry_run: bool = False) -> int:
    """Delete retry-budget buckets older than `before`, never one the budget's window still reads."""
    window_start = (now or timezone.now()) - timedelta(seconds=BUDGET_WINDOW_SECONDS)
    oldest_kept = int(min(before, window_start).timestamp() // BUDGET_BUCKET_SECONDS)
    old = RetryBudgetBucket.objects.filter(bucket__lt=oldest_kept)
    return old.count() if dry_run else delete_in_batches(old)


@dataclass(frozen=True)
class Retention:
    attempt_days: int
    aggregate_days: int
    budget_bucket_minutes: int


def attempt_history_prune(
    *, retention: Retention, now: datetime | None = None, dry_run: bool = False
) -> dict[str, int]:
    """Roll up what is due, then drop raw attempts and minute rows past their retention, and old budget buckets."""
    now = now or timezone.now()
    if not dry_run:
        attempt_minutes_rollup(now=now)
    return {
        "attempts": attempts_prune(before=now - timedelta(days=retention.attempt_days), dry_run=dry_run),
        "attempt_minutes": attempt_minutes_prune(
            before=now - timedelta(days=retention.aggregate_days), dry_run=dry_run
        ),
        "budget_buckets": budget_buckets_prune(
            before=now - timedelta(minutes=retention.budget_bucket_minutes), now=now, dry_run=dry_run
        ),
    }
