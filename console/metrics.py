"""`/metrics` in Prometheus text format, read from the database at scrape time.

Counters here are counts of `Attempt` rows and histogram buckets are counts of rows under each
latency bound, so the numbers are the same whichever process answers the scrape and however
many worker processes made the calls: there is no per-process state to merge (which is what
prometheus_client's multiprocess mode would need, with its files and their clean-up).

Consequences worth knowing:
- Every process answers with the platform's totals: scrape one target (or, with several
  scraped, aggregate with `max`, not `sum`, for absolute numbers; ratios are unaffected).
- Counters are sums over all time: the minute roll-up (`integrations.attempts.retention`) for minutes
  already summed (their running totals per label set), raw rows after them. Retention drops
  old raw and minute rows but never the totals, so a prune never looks like a counter reset to
  Prometheus, and a scrape reads a few hundred total rows instead of every call ever made.

Labels: `insurer`, `operation`, `product`, `class` (`success`, `permanent`, `retryable`,
`unknown`) and `kind` (the error kind, `success` for a success).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from console.health import (
    ACTIONABLE_FINDINGS,
    HealthFilter,
    login_lockouts,
    open_findings,
    reconciliation_health,
    retry_budgets,
    send_rates,
    work_counts,
    work_sources,
)
from console.http_metrics import http_metric_families
from integrations.answers.taxonomy import ErrorClass
from integrations.attempts.retention import COUNT, LATENCY_MS_SUM, RETRIES, attempt_totals, latency_buckets
from integrations.models import LATENCY_BUCKETS, Insurer
from integrations.operations import Operation
from integrations.retry_policies import policy_for
from work.pump_beat import pump_beat_last

SUCCESS = "success"
ATTEMPT_LABELS = ["insurer", "operation", "product", "class", "kind"]
WORK_STATES = ("queued", "in_flight", "pending_backoff", "pending_due", "submitted", "failed", "deferred")


def metrics_render() -> tuple[bytes, str]:
    """The exposition body and its content type."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families([*metric_families(), *http_metric_families()]))
    # The classic text format: every Prometheus version parses it, and all our names are classic names.
    return generate_latest(registry), CONTENT_TYPE_PLAIN_0_0_4


class _Families:
    """A collector that hands out families already read (prometheus_client's custom collector API)."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)


def metric_families() -> Iterable[Metric]:
    insurers = list(Insurer.objects.order_by("code").values_list("code", "products"))
    yield from _attempt_families()
    yield _unknown_answers(insurers)
    yield _latency_histogram()
    yield from _send_rate_families()
    yield from _policy_families([code for code, _ in insurers])
    yield from _work_families(insurers)
    yield from _reconciliation_families([code for code, _ in insurers])
    yield _pump_family()
    yield from _lockout_families()


def _label_values(key: tuple) -> list[str]:
    insurer_code, operation, product, error_class, error_kind = key
    return [insurer_code, operation, product, error_class or SUCCESS, error_kind or SUCCESS]


_GROUP = ("insurer_code", "operation", "product", "error_class", "error_kind")


def _attempt_families() -> Iterator[Metric]:
    attempts = CounterMetricFamily(
        "insurehub_insurer_attempts",
        "HTTP exchanges with insurers (helper calls included), by what we concluded.",
        labels=ATTEMPT_LABELS,
    )
    retries = CounterMetricFamily(
        "insurehub_insurer_retries",
        "HTTP exchanges that were a second or later try of an operation.",
        labels=ATTEMPT_LABELS,
    )
    grouped = attempt_totals(group_by=_GROUP, measures={"n": COUNT, "retries": RETRIES})
    for key in sorted(grouped):
        labels = _label_values(key)
        attempts.add_metric(labels, grouped[key]["n"])
        retries.add_metric(labels, grouped[key]["retries"])
    yield attempts
    yield retries


def _unknown_answers(insurers: list[tuple[str, list]]) -> Metric:
    """Unknown answers per insurer and operation, zero included.

    A series that appears only with its first unknown answer is invisible to `increase()`,
    so every (insurer, operation) is written from the start: the very first unknown code alerts.
    """
    family = CounterMetricFamily(
        "insurehub_insurer_unknown_answers",
        "Answers carrying a code no table classifies (class unknown).",
        labels=["insurer", "operation"],
    )
    counts = {
        key: row["n"]
        for key, row in attempt_totals(
            group_by=("insurer_code", "operation"), measures={"n": COUNT}, where=Q(error_class=ErrorClass.UNKNOWN)
        ).items()
    }
    keys = {(code, op.value) for code, _ in insurers for op in Operation} | set(counts)
    for key in sorted(keys):
        family.add_metric(list(key), counts.get(key, 0))
    return family


def _latency_histogram() -> Metric:
    family = HistogramMetricFamily(
        "insurehub_insurer_attempt_latency_seconds",
        "Time from sending a request to an insurer to having its whole answer (or giving up).",
        labels=ATTEMPT_LABELS,
    )
    grouped = attempt_totals(group_by=_GROUP, measures={"n": COUNT, "total_ms": LATENCY_MS_SUM, **latency_buckets()})
    for key in sorted(grouped):
        row = grouped[key]
        buckets = [(_le(b), row[f"le_{i}"]) for i, b in enumerate(LATENCY_BUCKETS)]
        buckets.append(("+Inf", row["n"]))
        family.add_metric(_label_values(key), buckets, sum_value=(row["total_ms"] or 0.0) / 1000)
    return family


def _le(bound: float) -> str:
    return repr(float(bound))


def _send_rate_families() -> Iterator[Metric]:
    rate = GaugeMetricFamily(
        "insurehub_send_rate_per_second",
        "Current shared send rate of an agency account at an insurer.",
        labels=["insurer", "account"],
    )
    contracted = GaugeMetricFamily(
        "insurehub_contracted_rate_per_second",
        "The agency's contracted request rate at the insurer: the send-rate ceiling.",
        labels=["insurer", "account"],
    )
    for account in send_rates():
        if account.rate is not None:
            rate.add_metric([account.insurer_code, account.account_key], account.rate)
        if account.contracted_rate is not None:
            contracted.add_metric([account.insurer_code, account.account_key], account.contracted_rate)
    yield rate
    yield contracted


def _policy_families(insurer_codes: list[str]) -> Iterator[Metric]:
    headroom = GaugeMetricFamily(
        "insurehub_retry_budget_headroom",
        "Retry-budget tokens the insurer has left: retries that may still go (one token each).",
        labels=["insurer"],
    )
    denied = GaugeMetricFamily(
        "insurehub_retry_budget_denied",
        "Retries the budget refused for want of a token in the last minute.",
        labels=["insurer"],
    )
    refused_here = GaugeMetricFamily(
        "insurehub_local_refusals",
        "Calls not sent in the last minute because the account's next send slot lay beyond their deadline "
        "(refused on our side, never reached the insurer; agents read 'şu an yoğun').",
        labels=["insurer"],
    )
    threshold = GaugeMetricFamily(
        "insurehub_policy_throttle_threshold",
        "Throttle ratio above which the send rate is cut (the policy in force); alerts compare against it.",
        labels=["insurer", "operation"],
    )
    for budget in retry_budgets(insurer_codes=insurer_codes):
        headroom.add_metric([budget.insurer_code], budget.tokens)
        denied.add_metric([budget.insurer_code], budget.denied)
        refused_here.add_metric([budget.insurer_code], budget.local_refusals)
    for code in insurer_codes:
        for operation in Operation:
            threshold.add_metric([code, operation.value], policy_for(code, operation.value).throttle_threshold)
    yield headroom
    yield denied
    yield refused_here
    yield threshold


def _work_families(insurers: list[tuple[str, list]]) -> Iterator[Metric]:
    labels = ["work", "insurer", "product"]
    items = GaugeMetricFamily(
        "insurehub_work_items",
        "Durable work records by state; pending is split into backoff (waiting on purpose) and due.",
        labels=[*labels, "state"],
    )
    dead = GaugeMetricFamily(
        "insurehub_work_dead_letters",
        "Dead letters (FAILED + DEFERRED records) waiting for a human.",
        labels=labels,
    )
    oldest = GaugeMetricFamily(
        "insurehub_work_oldest_pending_age_seconds",
        "How long the oldest due QUEUED/PENDING record has waited to be picked up (0: none overdue).",
        labels=labels,
    )
    now = timezone.now()
    counts = work_counts(health=HealthFilter(since=now, now=now))
    # Every product an insurer sells has its series from the start, so `delta()` sees the first dead
    # letter; work that is no one product's (an account's production list) has one, product "".
    keys: set[tuple[str, str, str]] = {
        (source.name, code, product)
        for source in work_sources()
        for code, products in insurers
        for product in ((products or []) if source.product_path else [""])
    }
    keys |= {(source, code, product) for (code, product), by_source in counts.items() for source in by_source}
    for source, code, product in sorted(keys):
        work = counts.get((code, product), {}).get(source)
        values = (
            dict.fromkeys(WORK_STATES, 0)
            if work is None
            else {
                "queued": work.queued,
                "in_flight": work.in_flight,
                "pending_backoff": work.backoff,
                "pending_due": work.due,
                "submitted": work.submitted,
                "failed": work.failed,
                "deferred": work.deferred,
            }
        )
        for state, value in values.items():
            items.add_metric([source, code, product, state], value)
        dead.add_metric([source, code, product], values["failed"] + values["deferred"])
        age = work.oldest_pending_age if work is not None else None
        oldest.add_metric([source, code, product], age or 0.0)
    yield items
    yield dead
    yield oldest


def _reconciliation_families(insurer_codes: list[str]) -> Iterator[Metric]:
    """What the nightly reconciliation found that a person must still act on, and the lists it
    could not read; every insurer and kind from zero, so the first duplicate is a change."""
    findings = GaugeMetricFamily(
        "insurehub_policy_findings_open",
        "Reconciliation findings nobody has resolved: duplicate (a second policy for one quote, or for one "
        "plate and period: a customer paying twice) and not_listed (a platform policy the insurer's list lacks).",
        labels=["insurer", "kind"],
    )
    counts = open_findings()
    keys = {(code, kind) for code in insurer_codes for kind in ACTIONABLE_FINDINGS} | set(counts)
    for key in sorted(keys):
        findings.add_metric(list(key), counts.get(key, 0))
    unread = GaugeMetricFamily(
        "insurehub_reconciliation_lists_unread",
        "Agency accounts whose latest production-list check is a dead letter (FAILED or DEFERRED): "
        "their list was not read, so portal policies and duplicates there are not seen.",
        labels=["insurer"],
    )
    read = GaugeMetricFamily(
        "insurehub_reconciliation_lists_read",
        "Agency accounts whose latest production-list check read the whole list.",
        labels=["insurer"],
    )
    for row in reconciliation_health(since=timezone.now()):
        unread.add_metric([row.insurer_code], row.unread)
        read.add_metric([row.insurer_code], row.read)
    yield findings
    yield unread
    yield read


def _pump_family() -> Metric:
    """Seconds since the work pump's last good pass (work.pump_beat): +Inf when it never ran, or
    its beat cannot be read (the cache down), so the silent-pump alert fires then too."""
    family = GaugeMetricFamily(
        "insurehub_work_pump_last_pass_age_seconds",
        "Seconds since the work pump last finished a pass (+Inf: never, or unreadable).",
    )
    try:
        last = pump_beat_last()
    except Exception:  # noqa: BLE001 - the cache down: the pump cannot be seen to run
        last = None
    family.add_metric([], (timezone.now() - last).total_seconds() if last else math.inf)
    return family


LOCKOUT_WINDOW = timedelta(minutes=15)


def _lockout_families() -> Iterator[Metric]:
    """Login lock-outs by scope: started in the last 15 minutes, and in force now (agencies.auth)."""
    started = GaugeMetricFamily(
        "insurehub_login_lockouts",
        "Login lock-outs that started in the last 15 minutes, by scope (pair, address, username: "
        "past the username's limit a login needs the e-mailed code).",
        labels=["scope"],
    )
    active = GaugeMetricFamily(
        "insurehub_login_lockouts_active",
        "Login lock-outs in force now (not run out, not lifted by an admin), by scope.",
        labels=["scope"],
    )
    now = timezone.now()
    for counts in login_lockouts(since=now - LOCKOUT_WINDOW, now=now):
        started.add_metric([counts.scope], counts.started)
        active.add_metric([counts.scope], counts.active)
    yield started
    yield active
