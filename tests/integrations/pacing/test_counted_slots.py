"""The hot path's one step: a send slot that also counts the attempt in the send rate's window.

Both backends: the database (one statement) and Redis (the slot and the count, two scripts).
"""

from __future__ import annotations

import pytest

from integrations.pacing.arithmetic import WINDOW_ATTEMPTS
from integrations.pacing.send_rate import SharedSendRate
from integrations.pacing.shared_state import DatabaseSharedState, RedisSharedState
from integrations.retry_policies import default_policy

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(params=["database", "redis"])
def state(request):
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        RedisSharedState(url)._redis.flushdb()
        return RedisSharedState(url)
    return DatabaseSharedState()


def _window(state, key: str) -> tuple[int, int]:
    if isinstance(state, RedisSharedState):
        attempts, throttled = state._redis.hmget(state._rate_key(key), "wattempts", "wthrottled")
        return int(attempts or 0), int(throttled or 0)
    from integrations.models import SendRateState

    return SendRateState.objects.values_list("window_attempts", "window_throttled").get(account_key=key)


def test_a_slot_taken_is_counted_once_and_a_success_writes_nothing_more(state):
    rate = SharedSendRate(contracted_rate=1000.0, state=state, sleep=lambda s: None)
    policy = default_policy("policy_status")
    for _ in range(3):
        rate.acquire("anka:C1", policy=policy, max_wait=None, count=True)
        rate.observe("anka:C1", throttled=False, policy=policy, counted=True)
    rate.acquire("anka:C1", policy=policy, max_wait=None, count=True)
    rate.observe("anka:C1", throttled=True, policy=policy, counted=True)

    assert _window(state, "anka:C1") == (4, 1)


def test_a_slot_not_taken_is_not_counted(state):
    state.reserve_counted("anka:C2", initial_rate=1.0, ceiling=1.0, max_wait=None)
    wait, closed = state.reserve_counted("anka:C2", initial_rate=1.0, ceiling=1.0, max_wait=0.1)

    assert wait > 0.1 and closed is None
    assert _window(state, "anka:C2") == (1, 0)


def test_throttles_reported_on_counted_slots_lower_the_shared_rate(state):
    """The window closes on the slots' count and learns from the throttles reported after them."""
    policy = default_policy("policy_status")
    rate = SharedSendRate(contracted_rate=10.0, state=state, sleep=lambda s: None)
    rate.acquire("cinar:C3", policy=policy, max_wait=None, count=True)
    before = state.current_rate("cinar:C3")
    for i in range(WINDOW_ATTEMPTS):
        rate.observe("cinar:C3", throttled=i % 4 == 0, policy=policy, counted=True)
        rate.acquire("cinar:C3", policy=policy, max_wait=None, count=True)

    assert state.current_rate("cinar:C3") < before * 0.8
