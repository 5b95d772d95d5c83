"""Adaptive send rate per agency account, and the retry budget per insurer: the decisions.

Both are shared by every worker on every machine; the state lives in a `SharedState`
backend (the database, or Redis when configured — see `integrations.sharedstate`). This
module holds only the arithmetic, so it can be read, tested and benchmarked on its own.

Send rate. We know each account's contracted rate, so we pace just under it rather than
probing upwards until the insurer pushes back (the halve-and-creep of TCP would settle near
81 % of the contract). When a window's throttle ratio crosses the threshold, the rate drops
at once to what the insurer actually accepted in that window, less a margin — fast, and
aimed rather than blind. While windows stay clean it climbs back by one percent a window
towards the ceiling. A window throttled through and through is a pause, not a limit: the rate
halves but remembers what was fine before, and climbs back there fast once the insurer is
back. Calls are spaced evenly (GCRA: one theoretical arrival time per account), so workers
on many machines never burst together.

Retry budget. Wasted retries — retries that did not succeed — may not exceed `ratio` × the
successful first attempts in a sliding window (plus a small allowance, so a quiet insurer is
not starved of its first retries). A dead insurer then receives barely more than one call per
first attempt; a retry that succeeds is refunded, so once the insurer is back its backlog
drains at the send rate rather than at the budget's trickle.
"""

from __future__ import annotations

from dataclasses import dataclass

# Pace this far under the ceiling: the insurer's bucket and our clock never agree exactly.
PACING_MARGIN = 0.98
# A window closes after this many attempts, or after WINDOW_MAX_SECONDS with at least WINDOW_MIN_ATTEMPTS.
WINDOW_ATTEMPTS = 40
WINDOW_MIN_ATTEMPTS = 5
WINDOW_MAX_SECONDS = 5.0
# After a throttled window: accepted rate × this (a little under what got through).
DECREASE_MARGIN = 0.97
# Never cut by less than 5 %: a throttle is a clear signal, react to it.
MIN_DECREASE = 0.95
# A window this throttled is a pause (an outage of the insurer's gateway, a blanket "wait 2 s"),
# not a rate limit: halve, and do not learn a limit from it.
PAUSE_RATIO = 0.5
# Each clean window adds this share of the current rate: a probe above the insurer's real limit
# then costs only about this share of one window in throttles.
INCREASE_SHARE = 0.01
# Below the last rate known to be fine, climb back fast: a pause must not cost half an hour.
RECOVERY_FACTOR = 1.25

BUDGET_WINDOW_SECONDS = 60
BUDGET_BUCKET_SECONDS = 5
BUDGET_MIN_RETRIES = 5


@dataclass(frozen=True)
class Window:
    attempts: int
    throttled: int
    seconds: float

    @property
    def throttle_ratio(self) -> float:
        return self.throttled / self.attempts if self.attempts else 0.0

    def is_closed(self) -> bool:
        return self.attempts >= WINDOW_ATTEMPTS or (
            self.seconds >= WINDOW_MAX_SECONDS and self.attempts >= WINDOW_MIN_ATTEMPTS
        )


def rate_ceiling(*, policy_ceiling: float, contracted_rate: float | None) -> float:
    """The highest rate we will send at: the contract, never above the admin's ceiling."""
    ceiling = policy_ceiling if contracted_rate is None else min(policy_ceiling, contracted_rate)
    return max(ceiling * PACING_MARGIN, 0.01)


@dataclass(frozen=True)
class RateState:
    """An account's send rate, and the highest rate lately known not to be throttled."""

    rate: float
    known_good: float


def adjusted_rate(state: RateState, window: Window, *, floor: float, ceiling: float, threshold: float) -> RateState:
    """The next window's rate from what the last one saw: drop fast and aimed, rise slowly.

    A partly throttled window teaches the insurer's limit: drop to what it accepted (less a
    margin) and remember that as the rate known to be fine. A mostly throttled one is a pause:
    halve, but keep the known-good rate, so that once the insurer is back the rate climbs back
    by a quarter a window instead of one percent.
    """
    rate, known_good = state.rate, state.known_good
    ratio = window.throttle_ratio
    if ratio >= PAUSE_RATIO:
        rate = rate * 0.5
    elif ratio > threshold:
        accepted = rate * (1.0 - ratio)
        rate = min(accepted * DECREASE_MARGIN, rate * MIN_DECREASE)
        known_good = min(known_good, accepted)
    elif rate < known_good * MIN_DECREASE:
        rate = min(known_good, rate * RECOVERY_FACTOR)
    else:
        rate = rate * (1.0 + INCREASE_SHARE)
        known_good = max(known_good, rate)
    rate = min(max(rate, floor), ceiling)
    return RateState(rate=rate, known_good=min(max(known_good, floor), ceiling))


def gcra_reserve(tat: float, *, now: float, rate: float, burst: int = 1) -> tuple[float, float]:
    """Reserve the next send slot: returns (wait before sending, the new theoretical arrival time).

    GCRA with a tolerance of `burst - 1` slots: up to `burst` calls may go back to back, and
    the long-run rate is still `rate`.
    """
    rate = max(rate, 0.001)
    start = max(tat, now)
    return max(start - (max(burst, 1) - 1) / rate - now, 0.0), start + 1.0 / rate


def retry_allowed(*, retries: int, first_successes: int, ratio: float) -> bool:
    """`retries` counts the wasted ones: spent and not refunded by a success."""
    return retries < ratio * first_successes + BUDGET_MIN_RETRIES
