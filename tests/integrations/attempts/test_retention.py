"""The attempt log's minute roll-up and retention: the same numbers from fewer rows, and counters that never go down."""

from __future__ import annotations

import random
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from console.health import (
    WINDOWS,
    HealthFilter,
    attempts_per_minute,
    insurer_health,
    provider_code_conclusions,
)
from integrations.attempts.retention import (
    ALL_TIME_MINUTE,
    ROLLUP_LAG,
    Retention,
    attempt_history_prune,
    attempt_minutes_rollup,
    attempts_prune,
    rolled_until,
)
from integrations.models import Attempt, AttemptMinute, RetryBudgetBucket
from integrations.pacing.arithmetic import BUDGET_BUCKET_SECONDS
from tests.console.test_metrics import operator

pytestmark = pytest.mark.django_db

OUTCOMES = [
    # ok, error_class, error_kind, provider_code
    (True, "", "", ""),
    (True, "", "", ""),
    (False, "retryable", "throttled", "429"),
    (False, "retryable", "unavailable", "503"),
    (False, "permanent", "validation", "VAL_PLAKA"),
    (False, "unknown", "unclassified", "BS-999"),
]


def attempt(started_at: datetime, rng: random.Random, **fields) -> Attempt:
    ok, error_class, error_kind, provider_code = rng.choice(OUTCOMES)
    values = {
        "insurer_code": rng.choice(["anka", "bogazici", "cinar"]),
        "operation": rng.choice(["trafik_quote", "policy_status"]),
        "product": rng.choice(["trafik", "kasko"]),
        "call": rng.choice(["main", "main", "token"]),
        "attempt_no": rng.choice([1, 1, 2, 3]),
        "ok": ok,
        "error_class": error_class,
        "error_kind": error_kind,
        "provider_code": provider_code,
        # Bounds included on purpose: a call of exactly 50 ms is in the 0.05 s bucket.
        "latency_ms": rng.choice([3.5, 50.0, 99.9, 250.0, 777.7, 4000.0, 12345.6, 70000.0]),
        "started_at": started_at,
        "finished_at": started_at,
    }
    values.update(fields)
    return Attempt(**values)


@pytest.fixture
def now() -> datetime:
    # Not on a minute boundary: each window then starts and ends inside a minute.
    return timezone.now().replace(second=37, microsecond=123456) - timedelta(minutes=1)


@pytest.fixture
def call_log(now) -> int:
    """Two days of calls, denser in the last hour, some in the minutes the roll-up must leave raw."""
    rng = random.Random(12)
    rows = [attempt(now - timedelta(seconds=rng.uniform(0, 2 * 86400)), rng) for _ in range(1500)]
    rows += [attempt(now - timedelta(seconds=rng.uniform(0, 3600)), rng) for _ in range(600)]
    rows += [attempt(now - timedelta(seconds=rng.uniform(0, 400)), rng) for _ in range(100)]
    # On the edges: a window's first instant, minute boundaries, the instant "now" itself.
    for window in WINDOWS.values():
        rows.append(attempt(now - window.length, rng))
        rows.append(attempt((now - window.length).replace(second=0, microsecond=0), rng))
    rows.append(attempt(now, rng))
    Attempt.objects.bulk_create(rows)
    return len(rows)


def scrape(client) -> dict[tuple, float]:
    """{(sample name, sorted labels): value} for every sample the attempt log feeds."""
    response = client.get(reverse("metrics"))
    assert response.status_code == 200
    result = {}
    for family in text_string_to_metric_families(response.content.decode()):
        if family.name.startswith("insurehub_insurer_"):
            for sample in family.samples:
                result[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return result


def assert_same_scrape(before: dict, after: dict) -> None:
    assert after.keys() == before.keys()
    for key, value in before.items():
        # Latency sums are float sums taken in another order: equal up to rounding, nothing more.
        expected = pytest.approx(value, rel=1e-9) if key[0].endswith("_sum") else value
        assert after[key] == expected, key


def dashboard(now: datetime) -> dict:
    numbers: dict[tuple[str, str, str], list] = {}
    for key, window in WINDOWS.items():
        for product in ("", "kasko"):
            health = HealthFilter.last(window, now=now, product=product)
            numbers[(key, product, "rows")] = [
                {name: value for name, value in asdict(row).items() if name != "work"}
                for row in insurer_health(health=health)
            ]
            numbers[(key, product, "codes")] = sorted(
                asdict(c).items() for c in provider_code_conclusions(health=health)
            )
            numbers[(key, product, "minutes")] = attempts_per_minute(health=health)
    return numbers


@pytest.fixture
def staff_client(client):
    client.force_login(operator("nobetci-arsiv"))
    return client


def test_metrics_and_dashboard_give_the_same_numbers_from_the_minute_rows(staff_client, call_log, now):
    """Summed minutes plus the raw rows after them count exactly the calls the raw rows alone count."""
    raw_scrape, raw_dashboard = scrape(staff_client), dashboard(now)
    assert sum(v for (name, _), v in raw_scrape.items() if name == "insurehub_insurer_attempts_total") == call_log

    summed = attempt_minutes_rollup(now=now)

    assert 0 < summed < call_log  # the last minutes stay raw
    assert rolled_until() == (now - ROLLUP_LAG).astimezone(UTC).replace(second=0, microsecond=0)
    assert AttemptMinute.objects.filter(minute=ALL_TIME_MINUTE).count() < summed / 5  # what /metrics reads
    assert_same_scrape(raw_scrape, scrape(staff_client))
    assert dashboard(now) == raw_dashboard
    # The rolled-up minutes are really what is read: without their raw rows the numbers hold
    # (all but a window's partial first minute, which only the raw rows can cut at the second).
    summed_rows = Attempt.objects.filter(started_at__lt=rolled_until())
    for window in WINDOWS.values():
        first_minute = (now - window.length).replace(second=0, microsecond=0)
        summed_rows = summed_rows.exclude(
            started_at__gte=first_minute, started_at__lt=first_minute + timedelta(minutes=1)
        )
    assert summed_rows.delete()[0] > summed / 2
    assert_same_scrape(raw_scrape, scrape(staff_client))
    assert dashboard(now) == raw_dashboard


def test_rollup_is_idempotent_and_leaves_recent_minutes_raw(call_log, now):
    """A second roll-up, or one by another worker, sums nothing twice; minutes within the lag wait."""
    first = attempt_minutes_rollup(now=now)
    rows = sorted(AttemptMinute.objects.values_list("minute", "insurer_code", "operation", "count"))

    assert attempt_minutes_rollup(now=now) == 0
    assert sorted(AttemptMinute.objects.values_list("minute", "insurer_code", "operation", "count")) == rows
    recent = Attempt.objects.filter(started_at__gte=rolled_until()).count()
    assert first + recent == call_log
    assert not AttemptMinute.objects.filter(minute__gte=now - ROLLUP_LAG).exists()

    later = attempt_minutes_rollup(now=now + timedelta(minutes=10))
    assert first + later == call_log


def test_raw_rows_are_never_pruned_before_they_are_summed(now):
    """Without a roll-up, a prune keeps every raw row: /metrics would otherwise lose them."""
    Attempt.objects.bulk_create([attempt(now - timedelta(days=60), random.Random(1))])

    assert attempts_prune(before=now) == 0
    assert Attempt.objects.count() == 1


RETENTION = Retention(attempt_days=30, aggregate_days=35, budget_bucket_minutes=60)


@pytest.fixture
def old_history(now):
    """Calls 40 and 10 days old and 2 minutes old, budget buckets 2 hours and 10 minutes old."""
    rng = random.Random(5)
    ages = {"40d": timedelta(days=40), "10d": timedelta(days=10), "2m": timedelta(minutes=2)}
    Attempt.objects.bulk_create(
        [
            attempt(now - age + timedelta(seconds=rng.uniform(0, 600)), rng, reference=name)
            for name, age in ages.items()
            for _ in range(50)
        ]
    )
    for age in (timedelta(hours=2), timedelta(minutes=10)):
        bucket = int((now - age).timestamp() // BUDGET_BUCKET_SECONDS)
        RetryBudgetBucket.objects.create(insurer_code="anka", bucket=bucket, first_successes=3)
    return ages


def test_prune_drops_what_is_past_its_retention_and_keeps_the_rest(old_history, now):
    """Raw rows past 30 days go, minute rows past 35 days go (the totals keep them), old budget buckets go."""
    counts = attempt_history_prune(retention=RETENTION, now=now)

    assert counts == {"attempts": 50, "attempt_minutes": counts["attempt_minutes"], "budget_buckets": 1}
    assert counts["attempt_minutes"] > 0
    assert set(Attempt.objects.values_list("reference", flat=True)) == {"10d", "2m"}
    assert not AttemptMinute.objects.filter(minute__gt=ALL_TIME_MINUTE, minute__lt=now - timedelta(days=35)).exists()
    assert (
        sum(AttemptMinute.objects.filter(minute=ALL_TIME_MINUTE).values_list("count", flat=True)) == 100
    )  # every call rolled up: 40 and 10 days old
    assert AttemptMinute.objects.filter(minute__gte=now - timedelta(days=11)).exists()
    kept = int((now - timedelta(minutes=10)).timestamp() // BUDGET_BUCKET_SECONDS)
    assert list(RetryBudgetBucket.objects.values_list("bucket", flat=True)) == [kept]


def test_dry_run_counts_and_deletes_nothing(old_history, now):
    """--dry-run says what a prune would take and leaves every row."""
    attempt_minutes_rollup(now=now)
    before = (Attempt.objects.count(), AttemptMinute.objects.count(), RetryBudgetBucket.objects.count())

    counts = attempt_history_prune(retention=RETENTION, now=now, dry_run=True)

    assert counts["attempts"] == 50 and counts["budget_buckets"] == 1 and counts["attempt_minutes"] > 0
    assert (Attempt.objects.count(), AttemptMinute.objects.count(), RetryBudgetBucket.objects.count()) == before


def test_counters_do_not_go_down_after_a_prune(staff_client, old_history, now):
    """Calls pruned from the raw log and their minute rows still count in /metrics."""
    before = scrape(staff_client)

    attempt_history_prune(retention=RETENTION, now=now)
    assert Attempt.objects.count() == 100
    after = scrape(staff_client)

    assert_same_scrape(before, after)
    # And a second prune, with those minutes gone too, changes nothing either.
    attempt_history_prune(retention=RETENTION, now=now + timedelta(days=30))
    assert_same_scrape(before, scrape(staff_client))
