"""Adaptive send rate per agency account, and the retry budget per insurer: the decisions.

Both are shared by every worker on every machine; the state lives in a `SharedState`
backend (the database, or Redis when configured — see `integrations.pacing.shared_state`). This
module holds only the arithmetic, so it can be read, tested and benchmarked on its own.

Send rate. We know each account's contracted rate, so we pace just under it rather than
probing upwards until the insurer pushes back (the halve-and-creep of TCP would settle near
81 % of the contract). When a window's throttle ratio crosses the threshold, the rate drops
at once to what the insurer actually accepted in that window, less a margin — fast, and
aimed rather than blind. While windows stay clean it climbs back by one percent a window
towards the ceiling. A window mostly throttled is a pause, not a limit: the rate halves (once
for a blanket wait: windows that let nothing through do not halve it again) but remembers what
was fine before, and climbs back there steadily once the insurer is back; a cut just before the
pause (the window its onset fell in) is not taken for a limit. Calls are spaced
evenly (GCRA: one theoretical arrival time per account), so workers on many machines never
burst together.

Retry budget. One token bucket per insurer, shared by every worker (AWS's standard retry mode
in shape, Finagle's budget in spirit): a retry costs a token, a successful first attempt
deposits `ratio` of one, time refills a little, and a retry that succeeds gives its token back
— the budget caps calls *wasted* on a failing insurer. The bucket starts full, so an isolated
failure always gets its retry and a quiet insurer is never starved; a dead insurer receives its
reserve, then one retry per 1 / refill seconds; once it is back, refunds let its backlog drain at
the send rate rather than at the budget's trickle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Pace this far under the ceiling: the insurer's bucket and our clock never agree exactly.
PACING_MARGIN = 0.98
# A window closes after this many attempts, or after WINDOW_MAX_SECONDS with at least WINDOW_MIN_ATTEMPTS.
# Small enough that a pause is seen while it lasts (at 20 calls/s, within a second), not once the
# insurer is back, when the calls it held would go out at the old rate; the SQL and the Lua read
# these four from here.
WINDOW_ATTEMPTS = 20
# ... and never before it holds this many seconds of calls at the current rate. At 250 calls/s,
# 20 attempts are 80 ms: a gateway that stalls for a moment and then lets its queue through at
# once throttles a handful of them, which read as a third of the window throttled and cut the rate
# by a third for seconds (2.5 % of a nightly sync's throughput, for one hiccup). Over 0.4 s the
# same handful is what it is, a few percent. Up to 50 calls/s (the default ceiling: quotes,
# issuance) 20 attempts are already 0.4 s or more, so nothing changes there.
WINDOW_RATE_SECONDS = 0.4
WINDOW_MIN_ATTEMPTS = 5
WINDOW_MAX_SECONDS = 5.0
# After a throttled window: accepted rate × this (a little under what got through).
DECREASE_MARGIN = 0.97
# Never cut by less than 5 %: a throttle is a clear signal, react to it.
MIN_DECREASE = 0.95
# A window this throttled is a pause (an outage of the insurer's gateway, a blanket "wait 2 s"),
# not a rate limit: halve, and do not learn a limit from it.
PAUSE_RATIO = 0.5
# A pause leaves this share of the rate.
PAUSE_SHARE = 0.5
# Each clean window adds this share of the current rate: a probe above the insurer's real limit
# then costs only about this share of one window in throttles.
INCREASE_SHARE = 0.01
# Below the last rate known to be fine, climb back by this share of that rate per second of the
# window: from nothing to all of it in 40 s. Fast enough that a pause does not cost half an hour,
# slow enough that the backlog a pause left drains spread out instead of in one burst. Per second,
# not per window: a draining backlog closes windows faster, and a per-window step would then climb
# faster the bigger the backlog is (the burst feeding itself).
RECOVERY_SHARE_PER_SECOND = 0.025
# Under half the known-good rate, a clean window multiplies the rate by this (up to half).
FAST_RECOVERY_FACTOR = 1.25

# The retry budget's counters (shown on the dashboard and /metrics) cover this sliding window.
BUDGET_WINDOW_SECONDS = 60
BUDGET_BUCKET_SECONDS = 5
# The retry budget's bucket: full at the start, a retry costs one token.
RETRY_BUDGET_RESERVE = 15.0
# Tokens a second, whatever the traffic (12 a minute): at low traffic, where first successes are
# too few to pay for retries, an ordinary failure still gets its retry; an outage gets ~0.2/s.
RETRY_BUDGET_REFILL_PER_SECOND = 0.2
RETRY_COST = 1.0
# Five deposits of 0.2 need not add up to exactly 1.0 in binary floating point: a spend that
# would leave a debt this small still goes.
TOKEN_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Window:
    # Counts of calls (whole numbers from the shared state; a fluid model may count fractions).
    attempts: float
    throttled: float
    seconds: float

    @property
    def throttle_ratio(self) -> float:
        return self.throttled / self.attempts if self.attempts else 0.0

    def is_closed(self, rate: float) -> bool:
        """Whether the window, counted while sending at `rate`, has seen enough to judge."""
        return self.attempts >= window_attempts(rate) or (
            self.seconds >= WINDOW_MAX_SECONDS and self.attempts >= WINDOW_MIN_ATTEMPTS
        )


def window_attempts(rate: float) -> int:
    """Attempts that close a window at `rate`: WINDOW_ATTEMPTS, or WINDOW_RATE_SECONDS of calls."""
    return max(WINDOW_ATTEMPTS, math.floor(rate * WINDOW_RATE_SECONDS))


def rate_ceiling(*, policy_ceiling: float, contracted_rate: float | None) -> float:
    """The highest rate we will send at: the contract, never above the admin's ceiling."""
    ceiling = policy_ceiling if contracted_rate is None else min(policy_ceiling, contracted_rate)
    return max(ceiling * PACING_MARGIN, 0.01)


@dataclass(frozen=True)
class RateState:
    """An account's send rate, the highest rate lately known not to be throttled, and the
    known-good rate from before an aimed cut that no clean window has confirmed yet (0: none)."""

    rate: float
    known_good: float
    good_before_cut: float = 0.0


def adjusted_rate(state: RateState, window: Window, *, floor: float, ceiling: float, threshold: float) -> RateState:
    """The next window's rate from what the last one saw: drop fast and aimed, rise slowly.

    A partly throttled window teaches the insurer's limit: drop to what it accepted (less a
    margin) and remember that as the rate known to be fine. A mostly throttled one is a pause:
    halve, but keep the known-good rate, so that once the insurer is back the rate climbs back
    steadily (a fixed share of the known-good rate per second, `RECOVERY_SHARE_PER_SECOND`)
    instead of by one percent a window. The climb is additive and paced by time: everyone's
    backlog comes back at once after a shared pause, and a rate that jumped back would hand the
    insurer that backlog as a burst.

    A pause rarely starts on a window's edge: the window it starts in is partly throttled and
    reads as a limit. So an aimed cut keeps the known-good rate it replaced until a clean window
    confirms the limit; if a pause follows first, the cut was the pause's onset, and the rate
    known to be fine before it is what the recovery climbs back to.
    """
    rate, known_good, before_cut = state.rate, state.known_good, state.good_before_cut
    ratio = window.throttle_ratio
    if ratio >= PAUSE_RATIO:
        if before_cut > known_good:  # the last cut was this pause's onset, not a limit
            known_good = before_cut
        before_cut = 0.0
        # Nothing got through at half the known-good rate: the insurer is still pausing everyone
        # (its wait signal holds the callers back), and halving again would only leave a backlog
        # to drain after it. A window where some got through keeps halving: that is how a limit
        # far under the contract is found.
        if not (window.throttled >= window.attempts and rate <= known_good * PAUSE_SHARE * 1.001):
            rate = rate * PAUSE_SHARE
    elif ratio > threshold:
        accepted = rate * (1.0 - ratio)
        rate = min(accepted * DECREASE_MARGIN, rate * MIN_DECREASE)
        before_cut = max(before_cut, known_good)
        known_good = min(known_good, accepted)
    elif rate < known_good * MIN_DECREASE:
        before_cut = 0.0  # a clean window after the cut: that was a limit
        steady = rate + known_good * RECOVERY_SHARE_PER_SECOND * max(window.seconds, 0.0)
        # Under half the known-good rate (a pause's tail window read as a second pause, or a long
        # outage), back to half quickly: that is where one pause leaves the rate.
        quick = min(rate * FAST_RECOVERY_FACTOR, known_good * PAUSE_SHARE)
        rate = min(known_good, max(steady, quick))
    else:
        before_cut = 0.0
        rate = rate * (1.0 + INCREASE_SHARE)
        known_good = max(known_good, rate)
    rate = min(max(rate, floor), ceiling)
    return RateState(
        rate=rate, known_good=min(max(known_good, floor), ceiling), good_before_cut=min(before_cut, ceiling)
    )


def gcra_reserve(tat: float, *, now: float, rate: float, burst: int = 1) -> tuple[float, float]:
    """Reserve the next send slot: returns (wait before sending, the new theoretical arrival time).

    GCRA with a tolerance of `burst - 1` slots: up to `burst` calls may go back to back, and
    the long-run rate is still `rate`.
    """
    rate = max(rate, 0.001)
    start = max(tat, now)
    return max(start - (max(burst, 1) - 1) / rate - now, 0.0), start + 1.0 / rate


def budget_tokens_after(
    tokens: float,
    elapsed: float,
    *,
    change: float = 0.0,
    refill: float = RETRY_BUDGET_REFILL_PER_SECOND,
    capacity: float = RETRY_BUDGET_RESERVE,
) -> float:
    """An insurer's retry-budget tokens after `elapsed` seconds of refill, then `change`.

    `change` is a deposit (`ratio` for a successful first attempt), a refund (+1 for a retry
    that succeeded) or a spend (-RETRY_COST): a retry may go if the result is not below
    -TOKEN_TOLERANCE, and when it may not, the bucket is left as it was. Never above `capacity`. The SQL and Lua
    in `integrations.pacing.shared_state` compute exactly this, in this order.
    """
    refilled = min(capacity, tokens + max(elapsed, 0.0) * refill)
    return min(capacity, refilled + change)
