"""Shared send-rate and retry-budget state, on both backends: the database and Redis."""

from __future__ import annotations

import itertools
import threading

import pytest

from integrations.pacing import SharedRetryBudget, SharedSendRate
from integrations.policies import default_policy
from integrations.ratecontrol import BUDGET_MIN_RETRIES, WINDOW_ATTEMPTS
from integrations.sharedstate import DatabaseSharedState, RedisSharedState

# Committed transactions: the threads below each use their own database connection.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(params=["database", "redis"])
def state(request):
    if request.param == "database":
        return DatabaseSharedState()
    backend = RedisSharedState(request.getfixturevalue("redis_url"))
    backend._redis.flushdb()
    return backend


def test_slots_are_spaced_by_the_rate_across_threads(state):
    """Twenty threads reserving at once get twenty distinct slots, 1/rate apart."""
    waits: list[float] = []
    lock = threading.Lock()

    def reserve():
        wait = state.reserve_send_slot("anka:A1", initial_rate=10.0, ceiling=10.0, max_wait=None)
        with lock:
            waits.append(wait)

    threads = [threading.Thread(target=reserve) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    waits.sort()
    gaps = [b - a for a, b in itertools.pairwise(waits)]
    assert len(waits) == 20
    assert all(gap == pytest.approx(0.1, abs=0.03) for gap in gaps)


def test_a_burst_goes_at_once_then_the_rate_spaces_the_rest(state):
    """With a burst of 4 at 10/s, four calls wait nothing, the next ones 0.1 s apart; a caller
    that cannot wait for its slot does not take it."""
    waits = [
        state.reserve_send_slot("anka:B1", initial_rate=10.0, ceiling=10.0, max_wait=None, burst=4) for _ in range(7)
    ]
    assert waits[:4] == [0.0] * 4
    assert waits[4:] == pytest.approx([0.1, 0.2, 0.3], abs=0.03)
    far = state.reserve_send_slot("anka:B1", initial_rate=10.0, ceiling=10.0, max_wait=0.2, burst=4)
    assert far == pytest.approx(0.4, abs=0.03)
    assert state.reserve_send_slot("anka:B1", initial_rate=10.0, ceiling=10.0, max_wait=None, burst=4) == (
        pytest.approx(0.4, abs=0.03)
    )


def test_quotes_may_burst_and_the_nightly_sync_is_evenly_paced(state):
    """The operation's policy sets the burst: a customer's quote calls are not queued 1/rate apart."""
    slept: list[float] = []
    pacer = SharedSendRate(contracted_rate=10.0, state=state, sleep=slept.append)
    for _ in range(5):
        pacer.acquire("bogazici:Q1", policy=default_policy("trafik_quote"), max_wait=None)
    assert slept == []
    for _ in range(2):
        pacer.acquire("bogazici:S1", policy=default_policy("policy_status"), max_wait=None)
    assert len(slept) == 1 and slept[0] == pytest.approx(1 / (10.0 * 0.98), abs=0.03)


def test_a_slot_beyond_max_wait_is_not_taken(state):
    """A caller that cannot wait that long does not take (and waste) a far slot."""
    for _ in range(10):
        state.reserve_send_slot("deniz:A1", initial_rate=2.0, ceiling=2.0, max_wait=None)
    far = state.reserve_send_slot("deniz:A1", initial_rate=2.0, ceiling=2.0, max_wait=0.5)
    again = state.reserve_send_slot("deniz:A1", initial_rate=2.0, ceiling=2.0, max_wait=None)
    assert far > 0.5
    assert again == pytest.approx(far, abs=0.05)


def test_accounts_are_paced_apart(state):
    """One agency's queue of calls never delays another agency's."""
    for _ in range(10):
        state.reserve_send_slot("anka:A1", initial_rate=1.0, ceiling=1.0, max_wait=None)
    assert state.reserve_send_slot("anka:A2", initial_rate=1.0, ceiling=1.0, max_wait=None) == 0.0


def test_throttled_window_lowers_the_shared_rate(state):
    """A window with throttles above the threshold cuts the rate every worker paces at."""
    policy = default_policy("policy_status")
    pacer = SharedSendRate(contracted_rate=10.0, state=state, sleep=lambda s: None)
    pacer.acquire("cinar:A1", policy=policy, max_wait=None)
    before = state.current_rate("cinar:A1")
    for i in range(WINDOW_ATTEMPTS):
        pacer.observe("cinar:A1", throttled=i % 4 == 0, policy=policy)
    assert state.current_rate("cinar:A1") < before * 0.8


def test_retry_budget_caps_retries_per_insurer(state):
    """Retries beyond ratio × first successes (plus the allowance) are refused, per insurer."""
    budget = SharedRetryBudget(state)
    for _ in range(50):
        budget.record_first_attempt("bogazici", ok=True)
    allowed = sum(budget.try_spend("bogazici", 0.2) for _ in range(40))
    assert allowed == 10 + BUDGET_MIN_RETRIES
    assert budget.try_spend("anka", 0.2)  # another insurer has its own budget
    snapshot = state.budget_snapshot("bogazici")
    assert snapshot["retries"] == allowed and snapshot["denied"] == 40 - allowed


def test_successful_retries_are_refunded(state):
    """The budget caps wasted calls: a retry that succeeds gives its unit back."""
    budget = SharedRetryBudget(state)
    spent = sum(budget.try_spend("cinar", 0.2) for _ in range(BUDGET_MIN_RETRIES))
    assert spent == BUDGET_MIN_RETRIES and not budget.try_spend("cinar", 0.2)
    for _ in range(3):
        budget.refund("cinar")
    assert sum(budget.try_spend("cinar", 0.2) for _ in range(10)) == 3
    assert state.budget_snapshot("cinar")["retry_successes"] == 3
