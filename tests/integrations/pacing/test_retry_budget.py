"""The retry budget's token bucket: the arithmetic, the SQL and the Lua agree, and the numbers hold.

The model below is the rule in words: refill since the last step, then the change, never above
the reserve; a spend that would leave less than nothing is refused and changes nothing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from integrations.pacing.arithmetic import (
    RETRY_BUDGET_REFILL_PER_SECOND,
    RETRY_BUDGET_RESERVE,
    RETRY_COST,
    TOKEN_TOLERANCE,
    budget_tokens_after,
)
from integrations.pacing.shared_state import _BUDGET_STEP, _TOKENS_READ, DatabaseSharedState, RedisSharedState

pytestmark = pytest.mark.django_db


@dataclass
class Bucket:
    """One insurer's bucket in plain Python, driven with explicit times."""

    reserve: float = RETRY_BUDGET_RESERVE
    refill: float = RETRY_BUDGET_REFILL_PER_SECOND
    tokens: float | None = None
    at: float | None = None

    def _after(self, now: float, change: float) -> tuple[float, float]:
        if self.tokens is None or self.at is None:  # set together, by the first change
            tokens, at = self.reserve, now
        else:
            tokens, at = self.tokens, self.at
        return budget_tokens_after(tokens, now - at, change=change, refill=self.refill, capacity=self.reserve), max(
            at, now
        )

    def record_first(self, now: float, *, ok: bool, ratio: float) -> None:
        if ok and ratio > 0:
            self.tokens, self.at = self._after(now, ratio)

    def try_spend(self, now: float) -> bool:
        tokens, at = self._after(now, -RETRY_COST)
        if tokens < -TOKEN_TOLERANCE:
            return False
        self.tokens, self.at = tokens, at
        return True

    def refund(self, now: float) -> None:
        self.tokens, self.at = self._after(now, RETRY_COST)

    def tokens_at(self, now: float) -> float:
        return self._after(now, 0.0)[0]


# --- The numbers: low traffic, and an outage ------------------------------------------------------


def test_low_traffic_failures_are_always_retried():
    """Ten calls a minute, every first attempt failing and every third retry too, for three minutes:
    no retry is refused (the old sliding-window rule refused from about the sixth)."""
    bucket = Bucket()
    refused = 0
    for call in range(30):
        start = call * 6.0
        bucket.record_first(start, ok=False, ratio=0.2)
        if not bucket.try_spend(start + 1.0):
            refused += 1
        elif call % 3 != 2:
            bucket.refund(start + 1.5)
    assert refused == 0


def test_low_traffic_failures_are_retried_even_when_every_retry_fails():
    """Twelve tokens a minute of refill outpace ten wasted retries a minute, whatever the successes."""
    bucket = Bucket()
    assert all(bucket.try_spend(call * 6.0 + 1.0) for call in range(30))


def test_low_traffic_failures_are_retried_through_the_database():
    """The same sequence through the shared state at real time, back to back: nothing refused."""
    state = DatabaseSharedState()
    for call in range(30):
        state.budget_record_first("anka", ok=False, ratio=0.2)
        assert state.budget_try_spend("anka"), f"call {call} refused"
        if call % 3 != 2:
            state.budget_refund("anka")
    assert state.budget_snapshot("anka")["denied"] == 0


def test_an_outage_costs_at_most_one_retry_in_ten_first_attempts():
    """10 s healthy at 10/s, then 30 s of failures each wanting a retry that fails: the reserve and
    the refill, ~21 retries for 300 first attempts (≤ 1.1 calls per first attempt)."""
    bucket = Bucket()
    for i in range(100):
        bucket.record_first(i * 0.1, ok=True, ratio=0.2)
    retries = 0
    for i in range(300):
        now = 10.0 + i * 0.1
        bucket.record_first(now, ok=False, ratio=0.2)
        retries += bucket.try_spend(now)
    assert RETRY_BUDGET_RESERVE <= retries <= 30
    assert retries == pytest.approx(RETRY_BUDGET_RESERVE + 30 * RETRY_BUDGET_REFILL_PER_SECOND, abs=1)


# --- Python, SQL and Lua agree --------------------------------------------------------------------

RESERVE, REFILL = 4.0, 0.3  # small, so that random sequences reach the empty and the full bucket
START = 1_780_000_000.0  # a real epoch: the backends see times of today's magnitude
OPERATIONS = ["ok_quote", "ok_sync", "failed", "spend", "spend", "spend", "refund"]

events = st.lists(
    st.tuples(st.integers(min_value=0, max_value=80).map(lambda tenths: tenths / 10), st.sampled_from(OPERATIONS)),
    min_size=1,
    max_size=25,
)


class _Clock:
    now = START

    def __call__(self) -> float:
        return self.now


_codes = (f"eq{n}" for n in itertools.count())


def _apply(target, operation: str, *args) -> bool | None:
    if operation in ("ok_quote", "ok_sync", "failed"):
        ratio = 0.2 if operation == "ok_quote" else 0.1
        return target.record_first(*args, ok=operation != "failed", ratio=ratio)
    return getattr(target, "try_spend" if operation == "spend" else "refund")(*args)


class _StateAt:
    """A shared-state backend called like the model: `record_first(insurer)`, `try_spend(insurer)`…"""

    def __init__(self, state, code: str) -> None:
        self.state, self.code = state, code

    def record_first(self, *, ok: bool, ratio: float) -> None:
        self.state.budget_record_first(self.code, ok=ok, ratio=ratio)

    def try_spend(self) -> bool:
        return self.state.budget_try_spend(self.code)

    def refund(self) -> None:
        self.state.budget_refund(self.code)


def _check_against_the_model(sequence, state, set_now) -> None:
    model, backend = Bucket(reserve=RESERVE, refill=REFILL), _StateAt(state, next(_codes))
    now = START
    for gap, operation in sequence:
        now += gap
        set_now(now)
        expected = _apply(model, operation, now)
        assert _apply(backend, operation) == expected, (now - START, operation)
        assert state.budget_tokens(backend.code) == pytest.approx(model.tokens_at(now), abs=1e-9)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="PostgreSQL reads its own clock")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=events)
def test_the_sql_computes_what_the_arithmetic_does(sequence):
    """Random sequences of deposits, spends and refunds at random times: same answers, same tokens."""
    clock = _Clock()

    def set_now(now: float) -> None:
        clock.now = now

    _check_against_the_model(
        sequence, DatabaseSharedState(budget_reserve=RESERVE, budget_refill=REFILL, clock=clock), set_now
    )


@pytest.fixture(scope="module")
def redis_at_a_set_time(redis_url):
    """The Redis backend with its scripts' clock read from a key instead of TIME: the same Lua body."""
    state = RedisSharedState(redis_url, budget_reserve=RESERVE, budget_refill=REFILL)
    read_now = "local now = tonumber(redis.call('GET', 'test:now'))\n"
    state._budget = state._redis.register_script(read_now + _BUDGET_STEP)
    state._tokens = state._redis.register_script(read_now + _TOKENS_READ)
    return state


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=events)
def test_the_lua_computes_what_the_arithmetic_does(sequence, redis_at_a_set_time):
    """Random sequences of deposits, spends and refunds at random times: same answers, same tokens."""
    state = redis_at_a_set_time
    _check_against_the_model(sequence, state, lambda now: state._redis.set("test:now", repr(now)))
