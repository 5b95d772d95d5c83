"""What the health dashboard and `/metrics` show, read from the attempt log and the work records.

Everything is computed from the database at the moment it is asked for, so every web process
shows the same numbers whichever worker made the calls. Call counts come from the minute
roll-up for whole minutes already summed and from the raw rows for the rest
(`integrations.attempts.retention.attempt_totals`): a day's window reads some thousand minute rows, not
every call of the day. Unknown codes are read from the raw rows, which hold their samples.

Work records are counted apart by state, because backoff is not a stuck queue: a PENDING
record whose `next_attempt_at` is still ahead is waiting on purpose; only a record that is due
and not yet picked up ages. Dead letters are FAILED + DEFERRED records.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.db.models import Count, F, Max, Min, Q, QuerySet, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from agencies.models import LoginLockout
from integrations.answers.taxonomy import ErrorClass, ErrorKind
from integrations.attempts.retention import COUNT, RETRIES, Measure, attempt_totals, count_where
from integrations.audit import error_mapping_issuance_risk, error_mapping_seen_on_look_ups_only
from integrations.models import Attempt, ErrorMapping, Insurer, InsurerAccount, SendRateState
from integrations.pacing.shared_state import DatabaseSharedState, shared_state
from policies.models import Cancellation, PolicyFinding, ProductionListCheck
from quotes.models import Issuance
from sync.models import SyncItem
from work.item import DEAD_STATES, WorkItem, WorkState

WAITING_STATES = (WorkState.QUEUED, WorkState.PENDING)

# Codes the channel itself gives an unreadable answer; they never go through the code lookup,
# so an admin mapping cannot reclassify them (the adapter or the insurer has to be fixed).
PLATFORM_MARKERS = frozenset({"MALFORMED_RESPONSE", "RESPONSE_TOO_LARGE"})


@dataclass(frozen=True)
class HealthWindow:
    key: str
    label: str
    length: timedelta


WINDOWS: dict[str, HealthWindow] = {
    w.key: w
    for w in (
        HealthWindow("15m", "Son 15 dakika", timedelta(minutes=15)),
        HealthWindow("1h", "Son 1 saat", timedelta(hours=1)),
        HealthWindow("1d", "Son 1 gün", timedelta(days=1)),
    )
}
DEFAULT_WINDOW = "1h"


def health_window(key: str | None) -> HealthWindow:
    return WINDOWS.get(key or "", WINDOWS[DEFAULT_WINDOW])


@dataclass(frozen=True)
class HealthFilter:
    """The dashboard's question: which window, and optionally one insurer and one product."""

    since: datetime
    now: datetime
    insurer_code: str = ""
    product: str = ""

    @classmethod
    def last(
        cls, window: HealthWindow, *, insurer_code: str = "", product: str = "", now: datetime | None = None
    ) -> HealthFilter:
        now = now or timezone.now()
        return cls(since=now - window.length, now=now, insurer_code=insurer_code, product=product)


# --- Work records -------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkSource:
    """A kind of durable work record and where its insurer and product are found (`product_path`
    empty: the record is not about one product, e.g. an account's production list)."""

    name: str
    label: str
    model: type[WorkItem]
    insurer_path: str
    product_path: str = ""


def work_sources() -> list[WorkSource]:
    """Issuances, policy-sync items, cancellations and production-list checks: the durable work
    an operator watches.

    Imported, not looked up by name: the console sits above `quotes`, `sync` and `policies` (issue 11).
    """
    return [
        WorkSource("issuance", "Poliçeleştirme", Issuance, "insurer_quote__insurer__code", "quote_request__product"),
        WorkSource("sync", "Poliçe eşitleme", SyncItem, "policy__insurer__code", "policy__product"),
        WorkSource("cancellation", "Poliçe iptali", Cancellation, "policy__insurer__code", "policy__product"),
        WorkSource("production_check", "Üretim listesi kontrolü", ProductionListCheck, "account__insurer__code"),
    ]


@dataclass
class WorkCounts:
    queued: int = 0
    in_flight: int = 0
    # PENDING, split by whether its next attempt is still ahead (backoff) or already due.
    backoff: int = 0
    due: int = 0
    submitted: int = 0
    failed: int = 0
    deferred: int = 0
    # Within the window: SUBMITTED ("done") and newly dead.
    done_in_window: int = 0
    dead_in_window: int = 0
    # When the oldest QUEUED/PENDING record became due; None when there is none.
    oldest_due_at: datetime | None = None
    now: datetime | None = None

    @property
    def pending(self) -> int:
        return self.backoff + self.due

    @property
    def dead(self) -> int:
        return self.failed + self.deferred

    @property
    def oldest_pending_age(self) -> float | None:
        """Seconds the oldest due record has waited to be picked up; 0 when all are in backoff."""
        if self.oldest_due_at is None or self.now is None:
            return None
        return max((self.now - self.oldest_due_at).total_seconds(), 0.0)

    def add(self, other: WorkCounts) -> None:
        for name in ("queued", "in_flight", "backoff", "due", "submitted", "failed", "deferred"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.done_in_window += other.done_in_window
        self.dead_in_window += other.dead_in_window
        if other.oldest_due_at is not None and (self.oldest_due_at is None or other.oldest_due_at < self.oldest_due_at):
            self.oldest_due_at = other.oldest_due_at
        self.now = self.now or other.now


GroupKey = tuple[str, str]  # (insurer code, product)


def work_counts(*, health: HealthFilter) -> dict[GroupKey, dict[str, WorkCounts]]:
    """Per (insurer, product), per work source: records by state now, and what moved in the window."""
    result: dict[GroupKey, dict[str, WorkCounts]] = defaultdict(dict)
    for source in work_sources():
        for key, counts in _work_counts_of(source, health).items():
            result[key][source.name] = counts
    return dict(result)


def _work_counts_of(source: WorkSource, health: HealthFilter) -> dict[GroupKey, WorkCounts]:
    rows = source.model.objects.all()
    if health.insurer_code:
        rows = rows.filter(**{source.insurer_path: health.insurer_code})
    if health.product:
        if not source.product_path:
            return {}  # not one product's work
        rows = rows.filter(**{source.product_path: health.product})
    product = F(source.product_path) if source.product_path else Value("")
    now, since = health.now, health.since
    # A record waiting to be picked up is due since its next_attempt_at, or since it entered the
    # queue (updated_at: creation, replay or lease reclaim) when it never waited.
    due_since = Coalesce("next_attempt_at", "updated_at")
    grouped = (
        rows.values(insurer=F(source.insurer_path), product=product)
        .annotate(
            queued=Count("pk", filter=Q(state=WorkState.QUEUED)),
            in_flight=Count("pk", filter=Q(state=WorkState.IN_FLIGHT)),
            backoff=Count("pk", filter=Q(state=WorkState.PENDING, next_attempt_at__gt=now)),
            due=Count("pk", filter=Q(state=WorkState.PENDING) & ~Q(next_attempt_at__gt=now)),
            submitted=Count("pk", filter=Q(state=WorkState.SUBMITTED)),
            failed=Count("pk", filter=Q(state=WorkState.FAILED)),
            deferred=Count("pk", filter=Q(state=WorkState.DEFERRED)),
            done_in_window=Count("pk", filter=Q(state=WorkState.SUBMITTED, finished_at__gte=since)),
            dead_in_window=Count("pk", filter=Q(state__in=DEAD_STATES, finished_at__gte=since)),
            oldest_due_at=Min(due_since, filter=Q(state__in=WAITING_STATES)),
        )
        .order_by()
    )
    counts = {}
    for row in grouped:
        key = (row.pop("insurer") or "", row.pop("product") or "")
        counts[key] = WorkCounts(**row, now=now)
    return counts


# --- The attempt log ----------------------------------------------------------------------------


def _totals(
    health: HealthFilter,
    *,
    group_by: tuple[str, ...],
    measures: dict[str, Measure[int]],
    where: Q | None = None,
    by_minute: bool = False,
) -> dict[tuple, dict[str, int]]:
    """The window's calls per group, read as `_attempts` would count them."""
    condition = Q() if where is None else where
    if health.insurer_code:
        condition &= Q(insurer_code=health.insurer_code)
    if health.product:
        condition &= Q(product=health.product)
    return attempt_totals(
        group_by=group_by,
        measures=measures,
        since=health.since,
        until=health.now,
        where=condition,
        by_minute=by_minute,
    )


def _attempts(health: HealthFilter) -> QuerySet[Attempt]:
    rows = Attempt.objects.filter(started_at__gte=health.since, started_at__lte=health.now)
    if health.insurer_code:
        rows = rows.filter(insurer_code=health.insurer_code)
    if health.product:
        rows = rows.filter(product=health.product)
    return rows


@dataclass
class InsurerProductHealth:
    """One dashboard row: an insurer's calls for one product in the window, and its work records."""

    insurer_code: str
    product: str
    attempts: int = 0
    successes: int = 0
    throttled: int = 0
    retries: int = 0
    retryable: int = 0
    permanent: int = 0
    unknown: int = 0
    work: dict[str, WorkCounts] = field(default_factory=dict)

    @property
    def throttle_ratio(self) -> float:
        return self.throttled / self.attempts if self.attempts else 0.0

    @property
    def retry_rate(self) -> float:
        """Share of the calls that were a second or later try of an operation."""
        return self.retries / self.attempts if self.attempts else 0.0

    @property
    def work_total(self) -> WorkCounts:
        total = WorkCounts()
        for counts in self.work.values():
            total.add(counts)
        return total


def insurer_health(*, health: HealthFilter) -> list[InsurerProductHealth]:
    """Per insurer and product: attempts, outcomes, throttles and retries in the window, work records now."""
    rows: dict[GroupKey, InsurerProductHealth] = {}
    grouped = _totals(
        health,
        group_by=("insurer_code", "product"),
        measures={
            "attempts": COUNT,
            "successes": count_where(ok=True),
            "throttled": count_where(error_kind=ErrorKind.THROTTLED),
            "retries": RETRIES,
            "retryable": count_where(error_class=ErrorClass.RETRYABLE),
            "permanent": count_where(error_class=ErrorClass.PERMANENT),
            "unknown": count_where(error_class=ErrorClass.UNKNOWN),
        },
    )
    for key, counts in grouped.items():
        insurer_code, product = key
        rows[key] = InsurerProductHealth(
            insurer_code,
            product,
            attempts=counts["attempts"],
            successes=counts["successes"],
            throttled=counts["throttled"],
            retries=counts["retries"],
            retryable=counts["retryable"],
            permanent=counts["permanent"],
            unknown=counts["unknown"],
        )
    for key, by_source in work_counts(health=health).items():
        rows.setdefault(key, InsurerProductHealth(*key)).work = by_source
    return [rows[key] for key in sorted(rows)]


@dataclass(frozen=True)
class CodeConclusion:
    """What the insurer said (its code) beside what we concluded (class and kind), and how often."""

    insurer_code: str
    provider_code: str
    error_class: str
    error_kind: str
    count: int


def provider_code_conclusions(*, health: HealthFilter) -> list[CodeConclusion]:
    labels = ("insurer_code", "provider_code", "error_class", "error_kind")
    grouped = _totals(health, group_by=labels, measures={"count": COUNT}, where=Q(ok=False))
    conclusions = [
        CodeConclusion(insurer_code, provider_code, error_class, error_kind, count=row["count"])
        for (insurer_code, provider_code, error_class, error_kind), row in grouped.items()
    ]
    return sorted(conclusions, key=lambda c: (c.insurer_code, -c.count, c.provider_code, c.error_class, c.error_kind))


@dataclass(frozen=True)
class MinutePoint:
    minute: datetime
    attempts: int
    throttled: int


def attempts_per_minute(*, health: HealthFilter) -> list[MinutePoint]:
    """Calls and throttles per minute across the whole window, quiet minutes included as zeros.

    A plateau (throttles steady while calls sit flat at the contracted rate) and a spike (an
    outage) look different here, which a single ratio hides.
    """
    grouped = _totals(
        health,
        group_by=(),
        measures={"attempts": COUNT, "throttled": count_where(error_kind=ErrorKind.THROTTLED)},
        by_minute=True,
    )
    by_minute = {key[0]: row for key, row in grouped.items()}
    first = health.since.astimezone(UTC).replace(second=0, microsecond=0)
    last = health.now.astimezone(UTC).replace(second=0, microsecond=0)
    points = []
    minute = first
    while minute <= last:
        row = by_minute.get(minute, {})
        points.append(MinutePoint(minute, row.get("attempts", 0), row.get("throttled", 0)))
        minute += timedelta(minutes=1)
    return points


@dataclass(frozen=True)
class UnknownCode:
    """A raw code no table knows yet, with the insurer's latest answer carrying it."""

    insurer_code: str
    provider_code: str
    count: int
    first_seen: datetime
    last_seen: datetime
    operations: tuple[str, ...]
    http_status: int | None
    message: str
    raw_sample: str
    # The admin's mapping made since (these calls happened before it), if any.
    mapped_kind: str = ""
    # Why a permanent class could make a second policy (seen on a send to an insurer that does
    # not deduplicate), or ""; and whether it was seen on issuance look-ups only.
    issuance_risk: str = ""
    look_ups_only: bool = False

    @property
    def classifiable(self) -> bool:
        return bool(self.provider_code) and self.provider_code not in PLATFORM_MARKERS


def unknown_codes_seen(*, health: HealthFilter) -> list[UnknownCode]:
    unknown = _attempts(health).filter(error_class=ErrorClass.UNKNOWN)
    grouped = (
        unknown.values("insurer_code", "provider_code")
        .annotate(count=Count("pk"), first_seen=Min("started_at"), last_seen=Max("started_at"))
        .order_by("-last_seen")
    )
    mapped = {
        (insurer_code, code): kind
        for insurer_code, code, kind in ErrorMapping.objects.values_list("insurer__code", "provider_code", "kind")
    }
    codes = []
    for row in grouped:
        same = unknown.filter(insurer_code=row["insurer_code"], provider_code=row["provider_code"])
        latest: Mapping[str, Any] = (
            same.order_by("-started_at", "-pk").values("http_status", "message", "raw_sample").first() or {}
        )
        operations = tuple(sorted(set(same.values_list("operation", flat=True))))
        codes.append(
            UnknownCode(
                **row,
                operations=operations,
                http_status=latest.get("http_status"),
                message=latest.get("message", ""),
                raw_sample=latest.get("raw_sample", ""),
                mapped_kind=mapped.get((row["insurer_code"], row["provider_code"]), ""),
                issuance_risk=error_mapping_issuance_risk(
                    insurer_code=row["insurer_code"], provider_code=row["provider_code"]
                ),
                look_ups_only=error_mapping_seen_on_look_ups_only(
                    insurer_code=row["insurer_code"], provider_code=row["provider_code"]
                ),
            )
        )
    return codes


# --- Shared pacing state ------------------------------------------------------------------------


@dataclass(frozen=True)
class AccountRate:
    insurer_code: str
    account_key: str
    rate: float | None
    contracted_rate: float | None


def send_rates(*, insurer_code: str = "") -> list[AccountRate]:
    """The current shared send rate of every agency account, beside its contracted rate."""
    accounts = InsurerAccount.objects.select_related("insurer").filter(is_active=True)
    if insurer_code:
        accounts = accounts.filter(insurer__code=insurer_code)
    contracted = {a.rate_key: (a.insurer.code, a.contracted_rate) for a in accounts}
    state = shared_state()
    if isinstance(state, DatabaseSharedState):
        stored = SendRateState.objects.all()
        if insurer_code:
            stored = stored.filter(account_key__startswith=f"{insurer_code}:")
        rates: dict[str, float | None] = dict(stored.values_list("account_key", "rate"))
    else:
        rates = {key: state.current_rate(key) for key in contracted}
    keys = sorted(set(contracted) | set(rates))
    return [
        AccountRate(
            insurer_code=contracted.get(key, (key.split(":", 1)[0], None))[0],
            account_key=key,
            rate=rates.get(key),
            contracted_rate=contracted.get(key, (None, None))[1],
        )
        for key in keys
    ]


@dataclass(frozen=True)
class InsurerRetryBudget:
    """An insurer's retry budget: the tokens left now, and what it counted over the last minute.

    `denied` is retries refused for want of a token: a call that failed fast, or a background
    record left waiting, because the insurer had been failing. `local_refusals` is calls not sent
    at all because an account's next send slot lay beyond their deadline (agents read "şu an
    yoğun"): demand beyond the contract, or a rate the insurer's throttles brought down.
    """

    insurer_code: str
    tokens: float
    first_successes: int
    first_failures: int
    retries: int
    retry_successes: int
    denied: int
    local_refusals: int = 0
    # Where the platform sends this insurer's calls, and every agency's credentials with them:
    # shown so a changed address is seen, not only audited.
    base_url_host: str = ""


def retry_budgets(*, insurer_codes: list[str]) -> list[InsurerRetryBudget]:
    state = shared_state()
    hosts = {
        code: _scheme_and_host(url)
        for code, url in Insurer.objects.filter(code__in=insurer_codes).values_list("code", "base_url")
    }
    return [
        InsurerRetryBudget(
            insurer_code=code,
            tokens=state.budget_tokens(code),
            base_url_host=hosts.get(code, ""),
            **state.budget_snapshot(code),
        )
        for code in insurer_codes
    ]


# --- The nightly reconciliation (production lists) --------------------------------------------------

# What a person must act on: a customer paying twice, a policy of ours the insurer does not hold.
# An imported policy is information (it is in the portfolio already), counted by the window.
ACTIONABLE_FINDINGS = (PolicyFinding.Kind.DUPLICATE.value, PolicyFinding.Kind.NOT_LISTED.value)


def open_findings(*, insurer_code: str = "") -> dict[tuple[str, str], int]:
    """Findings nobody has resolved yet, per (insurer code, kind)."""
    rows = PolicyFinding.objects.filter(resolved_at__isnull=True, kind__in=ACTIONABLE_FINDINGS)
    if insurer_code:
        rows = rows.filter(policy__insurer__code=insurer_code)
    grouped = rows.values_list("policy__insurer__code", "kind").annotate(n=Count("pk")).order_by()
    return {(code, kind): n for code, kind, n in grouped}


@dataclass
class ReconciliationHealth:
    """One insurer's side of the nightly reconciliation: what it found that is still open, and how
    the latest check of each of its active agency accounts went.

    An account whose latest check is a dead letter is `unread`: the platform does not know what
    that list holds (a portal policy, a duplicate) until the check is replayed or the next night
    reads it. Older dead checks still count in `dead_letters`, to be replayed or left.
    """

    insurer_code: str
    open_duplicates: int = 0
    open_not_listed: int = 0
    imported_in_window: int = 0
    accounts: int = 0
    read: int = 0
    in_progress: int = 0
    unread: int = 0
    never_checked: int = 0
    dead_letters: int = 0
    listed: int = 0
    issued_from: date | None = None
    issued_to: date | None = None
    last_read_at: datetime | None = None


def reconciliation_health(*, since: datetime, insurer_code: str = "") -> list[ReconciliationHealth]:
    """Every insurer (or the one asked for), zeros included, so nothing reads as "fine" by absence."""
    insurers = Insurer.objects.order_by("code")
    if insurer_code:
        insurers = insurers.filter(code=insurer_code)
    rows = {code: ReconciliationHealth(code) for code in insurers.values_list("code", flat=True)}
    # The accounts tonight's run reads (policies.services.reconciliation.reconciliation_start).
    accounts = dict(
        InsurerAccount.objects.filter(
            is_active=True, insurer__is_active=True, agency__is_active=True, insurer__code__in=list(rows)
        ).values_list("pk", "insurer__code")
    )
    for code in accounts.values():
        rows[code].accounts += 1
    latest_ids = (
        ProductionListCheck.objects.filter(account_id__in=accounts)
        .values("account_id")
        .annotate(latest=Max("pk"))
        .values_list("latest", flat=True)
    )
    latest = ProductionListCheck.objects.filter(pk__in=list(latest_ids)).values(
        "account_id", "state", "listed", "issued_from", "issued_to", "finished_at"
    )
    checked = set()
    for check in latest:
        row = rows[accounts[check["account_id"]]]
        checked.add(check["account_id"])
        if check["state"] == WorkState.SUBMITTED:
            row.read += 1
            row.listed += check["listed"]
            if row.last_read_at is None or (check["finished_at"] and check["finished_at"] > row.last_read_at):
                row.last_read_at = check["finished_at"]
        elif check["state"] in DEAD_STATES:
            row.unread += 1
        else:
            row.in_progress += 1
        if row.issued_to is None or check["issued_to"] > row.issued_to:
            row.issued_from, row.issued_to = check["issued_from"], check["issued_to"]
    for account_id, code in accounts.items():
        if account_id not in checked:
            rows[code].never_checked += 1
    dead = (
        ProductionListCheck.objects.filter(state__in=DEAD_STATES, account__insurer__code__in=list(rows))
        .values_list("account__insurer__code")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for code, n in dead:
        rows[code].dead_letters = n
    for (code, kind), n in open_findings(insurer_code=insurer_code).items():
        row = rows.setdefault(code, ReconciliationHealth(code))
        if kind == PolicyFinding.Kind.DUPLICATE:
            row.open_duplicates = n
        else:
            row.open_not_listed = n
    imported = (
        PolicyFinding.objects.filter(kind=PolicyFinding.Kind.IMPORTED, found_at__gte=since)
        .filter(policy__insurer__code__in=list(rows))
        .values_list("policy__insurer__code")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for code, n in imported:
        rows[code].imported_in_window = n
    return [rows[code] for code in sorted(rows)]


# --- Login lock-outs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LockoutCounts:
    """Lock-outs of one scope: started in the window, and in force now (not lifted, not run out)."""

    scope: str
    label: str
    started: int
    active: int


def login_lockouts(*, since: datetime, now: datetime) -> list[LockoutCounts]:
    """Every scope, zero included, so the dashboard and /metrics always show the three."""
    started = dict(
        LoginLockout.objects.filter(locked_at__gte=since, locked_at__lte=now)
        .values_list("scope")
        .annotate(n=Count("id"))
    )
    active = dict(
        LoginLockout.objects.filter(locked_until__gt=now, lifted_at__isnull=True)
        .values_list("scope")
        .annotate(n=Count("id"))
    )
    return [
        LockoutCounts(scope=scope.value, label=scope.label, started=started.get(scope, 0), active=active.get(scope, 0))
        for scope in LoginLockout.Scope
    ]


def _scheme_and_host(url: str) -> str:
    """ "https://api.insurer.example": enough to spot a wrong server, no path, never a user or password."""
    parts = urlsplit(url or "")
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}" if parts.netloc else "—"
