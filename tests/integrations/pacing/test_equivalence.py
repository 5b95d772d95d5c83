"""The send rate's slot arithmetic exists three times — Python (`arithmetic.gcra_reserve`), SQL
(the database backend) and Lua (the Redis backend). Random sequences hold them to one answer."""

from __future__ import annotations

import itertools

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from integrations.pacing.arithmetic import gcra_reserve
from integrations.pacing.shared_state import _RESERVE_STEP, DatabaseSharedState, RedisSharedState

pytestmark = pytest.mark.django_db

START = 1_780_000_000.0  # a real epoch: the backends see times of today's magnitude
INITIAL_RATE = 10.0

calls = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=40).map(lambda hundredths: hundredths / 100),  # gap since the last call
        st.sampled_from([None, 0.0, 0.15, 1.0]),  # the longest wait the caller takes
        st.sampled_from([1, 3]),  # burst
        st.sampled_from([5.0, 20.0]),  # ceiling (the agency's contracted rate)
    ),
    min_size=1,
    max_size=25,
)


class Slots:
    """The model: one account's theoretical arrival time and rate, stepped by `gcra_reserve`."""

    def __init__(self) -> None:
        self.tat, self.rate = 0.0, INITIAL_RATE

    def reserve(self, now: float, *, ceiling: float, max_wait: float | None, burst: int) -> float:
        rate = min(self.rate, ceiling)
        wait, tat = gcra_reserve(self.tat, now=now, rate=rate, burst=burst)
        if max_wait is not None and wait > max_wait:
            return wait  # not taken: the state stays as it was
        self.tat, self.rate = tat, rate
        return wait


class _Clock:
    now = START

    def __call__(self) -> float:
        return self.now


_keys = (f"gcra-eq:{n}" for n in itertools.count())


def _check(sequence, state, set_now) -> None:
    model, key, now = Slots(), next(_keys), START
    for gap, max_wait, burst, ceiling in sequence:
        now += gap
        set_now(now)
        expected = model.reserve(now, ceiling=ceiling, max_wait=max_wait, burst=burst)
        got = state.reserve_send_slot(key, initial_rate=INITIAL_RATE, ceiling=ceiling, max_wait=max_wait, burst=burst)
        # Equal up to the last bit of today's epoch (2.4e-7 s): SQLite may round one step of the
        # arithmetic differently; the Lua writes 17 significant digits, so it does not drift.
        assert got == pytest.approx(expected, abs=1e-6), (now - START, max_wait, burst, ceiling)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="PostgreSQL reads its own clock")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=calls)
def test_the_sql_reserves_the_slots_the_arithmetic_does(sequence):
    clock = _Clock()

    def set_now(now: float) -> None:
        clock.now = now

    _check(sequence, DatabaseSharedState(clock=clock), set_now)


@pytest.fixture(scope="module")
def redis_at_a_set_time(redis_url):
    """The Redis backend with the slot script's clock read from a key instead of TIME: same body."""
    state = RedisSharedState(redis_url)
    state._reserve = state._redis.register_script(
        "local now = tonumber(redis.call('GET', 'test:now'))\n" + _RESERVE_STEP
    )
    return state


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=calls)
def test_the_lua_reserves_the_slots_the_arithmetic_does(sequence, redis_at_a_set_time):
    state = redis_at_a_set_time
    _check(sequence, state, lambda now: state._redis.set("test:now", repr(now)))
