"""The send-rate control law and the retry budget rule, on their own (no clock, no network)."""

from __future__ import annotations

import pytest

from integrations.pacing.arithmetic import (
    RETRY_BUDGET_REFILL_PER_SECOND,
    RETRY_BUDGET_RESERVE,
    RateState,
    Window,
    adjusted_rate,
    budget_tokens_after,
    gcra_reserve,
    rate_ceiling,
    window_attempts,
)


def simulate(true_rate: float, ceiling: float, *, seconds: int = 900, warmup: int = 120, threshold: float = 0.02):
    """A fluid model in 0.1 s steps: we send at `rate`; the insurer accepts up to `true_rate`.

    Windows close by the platform's own rule (`Window.is_closed`). Returns (goodput as a share
    of `true_rate`, share of calls throttled), measured after `warmup` seconds.
    """
    step = 0.1
    state = RateState(rate=ceiling, known_good=ceiling)
    sent, accepted, throttled = 0.0, 0.0, 0.0
    window_sent = window_throttled = window_seconds = 0.0
    for tick in range(int(seconds / step)):
        rate = state.rate
        ok = min(rate, true_rate) * step
        if tick * step >= warmup:
            sent, accepted, throttled = sent + rate * step, accepted + ok, throttled + (rate * step - ok)
        window_sent += rate * step
        window_throttled += rate * step - ok
        window_seconds += step
        window = Window(attempts=window_sent, throttled=window_throttled, seconds=window_seconds)
        if window.is_closed(rate):
            state = adjusted_rate(state, window, floor=0.5, ceiling=ceiling, threshold=threshold)
            window_sent = window_throttled = window_seconds = 0.0
    return accepted / (true_rate * (seconds - warmup)), throttled / sent


def test_pacing_under_a_correct_contract_never_throttles():
    """Knowing the contract, we send just under it: about 98 % goodput and no throttles."""
    ceiling = rate_ceiling(policy_ceiling=50.0, contracted_rate=10.0)
    goodput, throttled = simulate(true_rate=10.0, ceiling=ceiling)
    assert goodput >= 0.97 and throttled == 0.0


@pytest.mark.parametrize("true_rate", [2.0, 5.0, 8.0, 9.5])
def test_insurer_below_its_contract_is_found_and_held(true_rate):
    """When the insurer accepts less than the contract, the rate settles just under what it accepts."""
    goodput, throttled = simulate(true_rate=true_rate, ceiling=rate_ceiling(policy_ceiling=50.0, contracted_rate=10.0))
    assert goodput >= 0.95
    assert throttled <= 0.02


def test_throttled_window_cuts_at_least_ten_percent():
    """Drop fast: any window over the threshold cuts the rate by at least 5 %."""
    window = Window(attempts=100, throttled=3, seconds=2.0)
    after = adjusted_rate(RateState(10.0, 10.0), window, floor=0.5, ceiling=10.0, threshold=0.02)
    assert after.rate <= 9.5
    assert after.known_good == pytest.approx(9.7)  # what got through is the limit learned


@pytest.mark.parametrize(("rate", "attempts"), [(0.5, 20), (10.0, 20), (49.0, 20), (100.0, 40), (245.0, 98)])
def test_a_window_holds_twenty_attempts_or_0_4_seconds_of_them(rate, attempts):
    """Up to the default ceiling (49/s paced) 20 attempts close a window; above, 0.4 s of them."""
    assert window_attempts(rate) == attempts
    assert Window(attempts=attempts, throttled=0, seconds=0.1).is_closed(rate)
    assert not Window(attempts=attempts - 1, throttled=0, seconds=0.1).is_closed(rate)


def test_clean_window_rises_by_a_small_step():
    """Rise slowly: a clean window adds one percent."""
    window = Window(attempts=100, throttled=0, seconds=2.0)
    after = adjusted_rate(RateState(5.0, 5.0), window, floor=0.5, ceiling=10.0, threshold=0.02)
    assert after.rate == pytest.approx(5.05) and after.known_good == pytest.approx(5.05)


def test_rate_stays_within_floor_and_ceiling():
    """Whatever the window, the rate stays between the admin's floor and the ceiling."""
    assert adjusted_rate(RateState(0.6, 5.0), Window(10, 9, 1.0), floor=0.5, ceiling=10.0, threshold=0.02).rate == 0.5
    assert (
        adjusted_rate(RateState(10.0, 10.0), Window(10, 0, 1.0), floor=0.5, ceiling=10.0, threshold=0.02).rate == 10.0
    )


def test_a_pause_halves_the_rate_once():
    """Windows throttled through and through (a blanket wait) halve the rate once, not once each:
    the insurer's wait holds the callers back, and a rate halved again only leaves a backlog."""
    state = RateState(rate=20.0, known_good=20.0)
    for _ in range(3):
        state = adjusted_rate(state, Window(40, 40, 2.0), floor=0.5, ceiling=20.0, threshold=0.02)
    assert state.rate == pytest.approx(10.0) and state.known_good == 20.0


def test_a_pause_that_lets_some_through_keeps_halving():
    """Mostly throttled but not all: a limit far under the rate, found by halving on."""
    state = RateState(rate=20.0, known_good=20.0)
    for _ in range(3):
        state = adjusted_rate(state, Window(40, 30, 2.0), floor=0.5, ceiling=20.0, threshold=0.02)
    assert state.rate == pytest.approx(2.5) and state.known_good == 20.0


def test_a_pause_halves_the_rate_and_is_recovered_steadily():
    """After a pause the rate climbs back within about 40 s."""
    state = RateState(rate=20.0, known_good=20.0)
    for _ in range(3):
        state = adjusted_rate(state, Window(40, 35, 2.0), floor=0.5, ceiling=20.0, threshold=0.02)
    assert state.rate == pytest.approx(2.5) and state.known_good == 20.0
    windows = 0
    while state.rate < 19.0:
        state = adjusted_rate(state, Window(40, 0, 2.0), floor=0.5, ceiling=20.0, threshold=0.02)
        windows += 1
    assert windows <= 20  # 40 s of 2-s windows, not the hundreds a 1 % climb would take


def test_recovery_after_a_pause_follows_the_clock_not_the_window_count():
    """A backlog draining after a pause closes windows faster; the rate must not climb faster for it.

    Ten 1-s windows and five 2-s windows (the same 10 s) bring the rate to the same place.
    """
    paused = adjusted_rate(RateState(40.0, 40.0), Window(40, 40, 2.0), floor=0.5, ceiling=40.0, threshold=0.02)
    assert paused.rate == pytest.approx(20.0)
    short, long = paused, paused
    for _ in range(10):
        short = adjusted_rate(short, Window(40, 0, 1.0), floor=0.5, ceiling=40.0, threshold=0.02)
    for _ in range(5):
        long = adjusted_rate(long, Window(40, 0, 2.0), floor=0.5, ceiling=40.0, threshold=0.02)
    assert short.rate == pytest.approx(long.rate)
    # Raised slowly: 10 s after the pause, a quarter of the way back, not all of it.
    assert short.rate == pytest.approx(30.0)


def test_gcra_spaces_calls_evenly():
    """Back-to-back reservations are spaced by 1/rate."""
    tat, waits = 0.0, []
    for _ in range(5):
        wait, tat = gcra_reserve(tat, now=100.0, rate=4.0)
        waits.append(wait)
    assert waits == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0])


def test_gcra_with_a_burst_lets_that_many_go_at_once_and_keeps_the_rate():
    """A burst of 3 at 4/s: three calls at once, then 1/rate apart; over time still 4/s."""
    tat, waits = 0.0, []
    for _ in range(6):
        wait, tat = gcra_reserve(tat, now=100.0, rate=4.0, burst=3)
        waits.append(wait)
    assert waits == pytest.approx([0.0, 0.0, 0.0, 0.25, 0.5, 0.75])
    # After a quiet second the tolerance is back: a new burst goes at once.
    wait, _ = gcra_reserve(tat, now=100.0 + 1.5 + 0.75, rate=4.0, burst=3)
    assert wait == 0.0


def test_retry_budget_refills_with_time_then_applies_the_change_never_above_the_reserve():
    """Tokens come back at the refill rate, deposits and refunds stop at the reserve, a spend takes one."""
    assert budget_tokens_after(0.0, 5.0) == pytest.approx(5.0 * RETRY_BUDGET_REFILL_PER_SECOND)
    assert budget_tokens_after(0.0, 3600.0) == RETRY_BUDGET_RESERVE
    assert budget_tokens_after(RETRY_BUDGET_RESERVE, 0.0, change=0.2) == RETRY_BUDGET_RESERVE
    assert budget_tokens_after(14.5, 0.0, change=1.0) == RETRY_BUDGET_RESERVE
    # Refill first, then the spend: a full bucket that waited still has only its reserve to spend from.
    assert budget_tokens_after(RETRY_BUDGET_RESERVE, 60.0, change=-1.0) == RETRY_BUDGET_RESERVE - 1
    assert budget_tokens_after(0.5, 1.0, change=-1.0) == pytest.approx(-0.3)  # below zero: refused
    assert budget_tokens_after(2.0, -10.0) == 2.0  # a lagging clock neither refills nor drains
    assert budget_tokens_after(1.0, 2.0, change=0.5, refill=1.0, capacity=3.0) == 3.0


def test_under_half_the_known_good_rate_the_climb_back_to_half_is_quick():
    """Two pauses read back to back leave a quarter; clean windows bring it back to half by a
    quarter a window, then the steady climb takes over."""
    state = RateState(rate=10.0, known_good=40.0)
    state = adjusted_rate(state, Window(20, 0, 1.0), floor=0.5, ceiling=40.0, threshold=0.02)
    assert state.rate == pytest.approx(12.5)
    for _ in range(2):
        state = adjusted_rate(state, Window(20, 0, 1.0), floor=0.5, ceiling=40.0, threshold=0.02)
    assert state.rate == pytest.approx(12.5 * 1.25 * 1.25)
    # Past half: one fortieth of the known-good rate a second.
    state = adjusted_rate(state, Window(20, 0, 1.0), floor=0.5, ceiling=40.0, threshold=0.02)
    assert state.rate == pytest.approx(12.5 * 1.25 * 1.25 + 1.0)


def test_a_pause_that_starts_mid_window_is_not_learnt_as_a_limit():
    """The window a pause starts in is partly throttled and cut as a limit; when the next window
    is the pause itself, the known-good rate from before that cut is what the rate climbs back
    to, not the cut's accepted rate."""
    knobs = {"floor": 0.5, "ceiling": 40.0, "threshold": 0.02}
    onset = adjusted_rate(RateState(40.0, 40.0), Window(20, 6, 0.5), **knobs)  # 30 % throttled: cut
    assert onset.rate == pytest.approx(40.0 * 0.7 * 0.97) and onset.known_good == pytest.approx(28.0)
    assert onset.good_before_cut == 40.0
    paused = adjusted_rate(onset, Window(20, 20, 0.7), **knobs)
    assert paused.known_good == 40.0 and paused.good_before_cut == 0.0
    assert paused.rate == pytest.approx(onset.rate / 2)
    state = paused
    for _ in range(40):  # the insurer is back: 40 s of clean 1-s windows
        state = adjusted_rate(state, Window(20, 0, 1.0), **knobs)
    assert state.rate > 38.0  # back to the contract's pace, not stuck near 28


def test_a_limit_confirmed_by_a_clean_window_stays_learnt_through_a_later_pause():
    """A cut followed by a clean window was a real limit: a later pause recovers to it, not above."""
    knobs = {"floor": 0.5, "ceiling": 40.0, "threshold": 0.02}
    cut = adjusted_rate(RateState(40.0, 40.0), Window(20, 6, 0.5), **knobs)
    confirmed = adjusted_rate(cut, Window(20, 0, 0.8), **knobs)
    assert confirmed.good_before_cut == 0.0 and confirmed.known_good == pytest.approx(28.0)
    paused = adjusted_rate(confirmed, Window(20, 20, 0.8), **knobs)
    assert paused.known_good == pytest.approx(28.0)
