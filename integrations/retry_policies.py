"""Retry policies: one per (insurer, operation), defaults per operation type.

This is the single place that says how hard the platform tries. Defaults live here; admins
override them per insurer in the database (`OperationPolicy`), and the override is read
through a short cache so a change reaches every worker within seconds without a restart.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from integrations.operations import Operation
from integrations.ttlcache import TtlCache

# How long a worker keeps a policy read from the database before reading it again.
POLICY_CACHE_SECONDS = 5.0


@dataclass(frozen=True)
class RetryPolicy:
    """How one operation is retried.

    `deadline` bounds the whole operation, waits included: no wait is started that would end
    past it. `attempt_timeout` bounds one HTTP exchange (the read timeout), and is cut to what
    is left of the deadline.
    """

    max_attempts: int
    base_delay: float
    max_delay: float
    deadline: float
    attempt_timeout: float
    unknown_max_attempts: int = 2
    # Share of a signalled wait added at random on top of it, to spread clients apart.
    throttle_spread: float = 0.2
    # Retries allowed as a share of successful first attempts (per insurer, sliding window).
    retry_budget_ratio: float = 0.2
    # Adaptive send rate per agency account (requests/second), and when to cut it.
    rate_floor: float = 0.5
    rate_ceiling: float = 50.0
    throttle_threshold: float = 0.02
    # Calls that may go back to back within the send rate (GCRA tolerance; 1 = evenly spaced).
    # The average never exceeds the rate; a burst only spares a waiting customer the spacing.
    rate_burst: int = 1
    # Issuance only: how long after a send a "not issued" lookup is still not final, because the
    # insurer may still be working on that send (Boğaziçi finishes or abandons one within 30 s).
    # No re-send goes out before this much time has passed since the last send.
    settling_seconds: float = 0.0

    def with_overrides(self, **overrides: Any) -> RetryPolicy:
        # Any: the overrides are matched to the fields by name at run time (a row's columns).
        known = {f.name for f in fields(self)}
        return replace(self, **{k: v for k, v in overrides.items() if k in known and v is not None})


# Someone is waiting on these calls: let a few go at once rather than queue 1/rate apart. Five
# calls is a tenth of a second at 50/s, well inside the bursts insurers' gateways accept; the
# nightly sync keeps 1, evenly paced, since nobody waits on a single call there.
INTERACTIVE_BURST = 5

DEFAULT_POLICIES: dict[Operation, RetryPolicy] = {
    # A customer is waiting at the desk: few, short tries and a hard deadline.
    Operation.TRAFIK_QUOTE: RetryPolicy(
        max_attempts=3, base_delay=0.25, max_delay=1.5, deadline=10.0, attempt_timeout=6.0, rate_burst=INTERACTIVE_BURST
    ),
    # Kasko has more inputs and slower insurers; the agent expects to wait a little.
    Operation.KASKO_QUOTE: RetryPolicy(
        max_attempts=4, base_delay=0.5, max_delay=4.0, deadline=30.0, attempt_timeout=12.0, rate_burst=INTERACTIVE_BURST
    ),
    # The address check is quick and cheap; fail fast so the agent can fix a wrong UAVT code.
    Operation.DASK_ADDRESS: RetryPolicy(
        max_attempts=3, base_delay=0.25, max_delay=1.0, deadline=8.0, attempt_timeout=4.0, rate_burst=INTERACTIVE_BURST
    ),
    Operation.DASK_QUOTE: RetryPolicy(
        max_attempts=3, base_delay=0.5, max_delay=2.0, deadline=15.0, attempt_timeout=8.0, rate_burst=INTERACTIVE_BURST
    ),
    # Money moves: patient, and every retry after an ambiguous failure asks for state first.
    Operation.ISSUE_POLICY: RetryPolicy(
        max_attempts=5, base_delay=1.0, max_delay=8.0, deadline=60.0, attempt_timeout=15.0, rate_burst=INTERACTIVE_BURST
    ),
    # Nightly sync: nobody is waiting, so try longer and more often. Its retries wait (never
    # fail) when the budget is spent, so a tight budget costs only time and spares an insurer
    # that is struggling the full weight of a night's portfolio.
    Operation.POLICY_STATUS: RetryPolicy(
        max_attempts=8,
        base_delay=2.0,
        max_delay=60.0,
        deadline=600.0,
        attempt_timeout=20.0,
        retry_budget_ratio=0.1,
    ),
    # A policy's PDF, asked for after issuance: "not ready yet" waits as long as the insurer
    # asks (a wait, not a try); a failure retries a few times, since a person may be waiting
    # for the download, and the background fetch comes back later anyway.
    Operation.POLICY_DOCUMENT: RetryPolicy(
        max_attempts=4, base_delay=1.0, max_delay=10.0, deadline=60.0, attempt_timeout=20.0
    ),
    # Money moves back: as patient as issuance. Every insurer answers a repeat of a cancellation
    # reference with the first result, so a re-send after an ambiguous failure is the question.
    Operation.CANCEL_POLICY: RetryPolicy(
        max_attempts=5, base_delay=1.0, max_delay=8.0, deadline=60.0, attempt_timeout=15.0, rate_burst=INTERACTIVE_BURST
    ),
    # The nightly production list: a page at a time, nobody waiting; many pages, so a long
    # deadline, and a failed page is retried alone.
    Operation.POLICY_LIST: RetryPolicy(
        max_attempts=6, base_delay=2.0, max_delay=30.0, deadline=600.0, attempt_timeout=30.0, retry_budget_ratio=0.1
    ),
}

_cache: TtlCache[tuple[str, str], RetryPolicy] = TtlCache(POLICY_CACHE_SECONDS)


def default_policy(operation: str, insurer_code: str | None = None) -> RetryPolicy:
    """The policy in force when no admin has touched it: the operation's default, with what the
    insurer's adapter states about itself (its issuance settling time) on top."""
    policy = DEFAULT_POLICIES[Operation(operation)]
    if insurer_code is None:
        return policy
    from integrations.adapters.registry import adapter_class

    try:
        stated = adapter_class(insurer_code).policy_defaults.get(Operation(operation).value, {})
    except LookupError:
        return policy
    return policy.with_overrides(**stated)


def policy_for(insurer_code: str, operation: str) -> RetryPolicy:
    """The policy in force for this insurer and operation: the admin's row, else the default."""
    return _cache.get((insurer_code, operation), lambda: _load_policy(insurer_code, operation))


def clear_policy_cache() -> None:
    _cache.clear()


def _load_policy(insurer_code: str, operation: str) -> RetryPolicy:
    from integrations.models import OperationPolicy

    base = default_policy(operation, insurer_code)
    row = (
        OperationPolicy.objects.filter(insurer__code=insurer_code, operation=operation)
        .values(*[f.name for f in fields(RetryPolicy)])
        .first()
    )
    return base.with_overrides(**row) if row else base
