"""Shared send-rate and retry-budget state, on both backends: the database and Redis."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from integrations.pacing.arithmetic import RETRY_BUDGET_RESERVE, WINDOW_ATTEMPTS, WINDOW_RATE_SECONDS, RateState
from integrations.pacing.retry_budget import SharedRetryBudget
from integrations.pacing.send_rate import SharedSendRate
from integrations.pacing.shared_state import DatabaseSharedState, RedisSharedState
from integrations.retry_policies import default_policy

# Committed transactions: the threads below each use their own database connection.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(params=["database", "redis"])
def make_state(request):
    """A backend of this parameter's kind; the retry budget's reserve and refill may be set."""
    redis_url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    if redis_url:
        RedisSharedState(redis_url)._redis.flushdb()

    def make(**budget):
        return RedisSharedState(redis_url, **budget) if redis_url else DatabaseSharedState(**budget)

    return make


@pytest.fixture
def state(make_state):
    return make_state()


def test_slots_are_spaced_by_the_rate_across_threads(make_state, request):
    """Twenty threads reserving at once get twenty distinct slots, 1/rate apart (a lost update
    would show as a gap of zero). At one send a second the gaps are wide beside a busy
    machine's scheduling noise; nothing sleeps, the waits are only reckoned.

    A slot is a moment: the clock reading the wait was reckoned from, plus the wait. On SQLite
    the worker reads its clock before it queues for the database's write lock, so two waits
    differ by the slots' gap *and* by how long each thread queued; comparing waits alone fails
    whenever the machine is busy, though every caller sends at or after its slot."""
    readings = threading.local()

    def recording_clock() -> float:
        readings.last = time.time()
        return readings.last

    backend = request.node.callspec.params["make_state"]
    state = DatabaseSharedState(clock=recording_clock) if backend == "database" else make_state()
    slots: list[float] = []
    lock = threading.Lock()

    def reserve():
        wait = state.reserve_send_slot("anka:A1", initial_rate=1.0, ceiling=1.0, max_wait=None)
        # Redis reckons from its own TIME inside one atomic script, a moment after the call.
        reckoned_from = readings.last if backend == "database" else time.time()
        with lock:
            slots.append(reckoned_from + wait)

    threads = [threading.Thread(target=reserve) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    slots.sort()
    gaps = [b - a for a, b in itertools.pairwise(slots)]
    assert len(slots) == 20
    assert all(gap == pytest.approx(1.0, abs=0.1) for gap in gaps), gaps


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


def test_a_full_budget_allows_its_reserve_of_wasted_retries_then_refuses(state):
    """A never-seen insurer starts with a full bucket: 15 failed retries back to back, then no more."""
    budget = SharedRetryBudget(state)
    allowed = sum(budget.try_spend("bogazici") for _ in range(int(RETRY_BUDGET_RESERVE) + 5))
    assert allowed == RETRY_BUDGET_RESERVE
    assert state.budget_tokens("bogazici") == pytest.approx(0.0, abs=0.01)
    assert budget.try_spend("anka")  # another insurer has its own budget
    snapshot = state.budget_snapshot("bogazici")
    assert snapshot["retries"] == RETRY_BUDGET_RESERVE and snapshot["denied"] == 5


def test_the_budget_refills_with_time_up_to_its_reserve(make_state):
    """Time alone brings tokens back, never more than the reserve."""
    state = make_state(budget_reserve=2.0, budget_refill=10.0)
    assert [state.budget_try_spend("deniz") for _ in range(3)] == [True, True, False]
    time.sleep(0.15)  # 1.5 tokens
    assert [state.budget_try_spend("deniz") for _ in range(2)] == [True, False]
    time.sleep(0.5)  # 5 tokens' worth, capped at 2
    assert state.budget_tokens("deniz") == pytest.approx(2.0)
    assert [state.budget_try_spend("deniz") for _ in range(3)] == [True, True, False]


def test_successful_first_attempts_deposit_their_ratio(make_state):
    """Ten successes at 0.2 buy two retries; failed first attempts buy nothing."""
    state = make_state(budget_reserve=3.0, budget_refill=0.0)
    assert sum(state.budget_try_spend("cinar") for _ in range(4)) == 3
    for _ in range(10):
        state.budget_record_first("cinar", ok=False, ratio=0.2)
    assert not state.budget_try_spend("cinar")
    for _ in range(10):
        state.budget_record_first("cinar", ok=True, ratio=0.2)
    assert state.budget_tokens("cinar") == pytest.approx(2.0)
    assert [state.budget_try_spend("cinar") for _ in range(3)] == [True, True, False]
    for _ in range(100):  # never above the reserve
        state.budget_record_first("cinar", ok=True, ratio=0.1)
    assert state.budget_tokens("cinar") == pytest.approx(3.0)
    snapshot = state.budget_snapshot("cinar")
    assert (snapshot["first_successes"], snapshot["first_failures"]) == (110, 10)


def test_first_attempts_counted_together_leave_what_one_by_one_would(make_state):
    """`times`: ten at once deposit and count like ten in a row (a drain writes them per batch)."""
    one_by_one, together = (
        make_state(budget_reserve=3.0, budget_refill=0.0),
        make_state(budget_reserve=3.0, budget_refill=0.0),
    )
    for state, insurer in ((one_by_one, "anka"), (together, "deniz")):
        assert sum(state.budget_try_spend(insurer) for _ in range(3)) == 3
    for _ in range(7):
        one_by_one.budget_record_first("anka", ok=True, ratio=0.2)
    for _ in range(4):
        one_by_one.budget_record_first("anka", ok=False, ratio=0.2)
    together.budget_record_first("deniz", ok=True, ratio=0.2, times=7)
    together.budget_record_first("deniz", ok=False, ratio=0.2, times=4)
    together.budget_record_first("deniz", ok=True, ratio=0.2, times=0)  # nothing to count: nothing written
    assert together.budget_tokens("deniz") == pytest.approx(one_by_one.budget_tokens("anka")) == pytest.approx(1.4)
    counted = ("first_successes", "first_failures")
    assert [together.budget_snapshot("deniz")[k] for k in counted] == [7, 4]
    assert [one_by_one.budget_snapshot("anka")[k] for k in counted] == [7, 4]
    together.budget_record_first("deniz", ok=True, ratio=0.5, times=100)  # the cap absorbs, as in a row
    assert together.budget_tokens("deniz") == pytest.approx(3.0)


def test_a_batched_budget_writes_its_first_attempts_only_when_flushed(make_state):
    """A drain's budget: spends go at once, first attempts wait for the batch write, and a failed
    write keeps them for the next one."""
    from integrations.pacing.retry_budget import BatchedRetryBudget

    state = make_state(budget_reserve=2.0, budget_refill=0.0)
    budget = BatchedRetryBudget(state)
    assert [budget.try_spend("cinar") for _ in range(3)] == [True, True, False]
    for _ in range(5):
        budget.record_first_attempt("cinar", ok=True, ratio=0.2)
    budget.record_first_attempt("cinar", ok=False, ratio=0.2)
    assert state.budget_snapshot("cinar")["first_successes"] == 0 and not budget.try_spend("cinar")

    class Unreachable:
        def budget_record_first(self, *args, **kwargs):
            raise ConnectionError("state restarting")

    budget.state = Unreachable()
    with pytest.raises(ConnectionError):
        budget.flush()
    budget.state = state
    assert budget.flush() == 6 and budget.flush() == 0
    snapshot = state.budget_snapshot("cinar")
    assert (snapshot["first_successes"], snapshot["first_failures"]) == (5, 1)
    assert state.budget_tokens("cinar") == pytest.approx(1.0)
    assert budget.try_spend("cinar") and not budget.try_spend("cinar")


def test_successful_retries_are_refunded(make_state):
    """The budget caps wasted calls: a retry that succeeds gives its token back."""
    budget = SharedRetryBudget(make_state(budget_reserve=5.0, budget_refill=0.0))
    spent = sum(budget.try_spend("cinar") for _ in range(5))
    assert spent == 5 and not budget.try_spend("cinar")
    for _ in range(3):
        budget.refund("cinar")
    assert sum(budget.try_spend("cinar") for _ in range(10)) == 3
    assert budget.state.budget_snapshot("cinar")["retry_successes"] == 3


def test_concurrent_spenders_never_overspend(make_state):
    """Eight workers racing for ten tokens get exactly ten retries between them."""
    from django.db import connection

    state = make_state(budget_reserve=10.0, budget_refill=0.0)
    granted: list[bool] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def spend():
        try:
            start.wait()
            for _ in range(5):
                allowed = state.budget_try_spend("anka")
                with lock:
                    granted.append(allowed)
        finally:
            connection.close()

    threads = [threading.Thread(target=spend) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(granted) == 40 and sum(granted) == 10
    snapshot = state.budget_snapshot("anka")
    assert (snapshot["retries"], snapshot["denied"]) == (10, 30)
    assert state.budget_tokens("anka") == pytest.approx(0.0)


def test_a_moment_of_throttles_at_a_high_rate_is_judged_over_0_4_seconds(state):
    """At 245 calls/s a gateway's hiccup throttles five calls in a row: over the window's 0.4 s
    that is 5 %, a cut of under a tenth, not the quarter that 5 in 20 calls would read as."""
    policy = default_policy("policy_status").with_overrides(rate_ceiling=250.0)
    pacer = SharedSendRate(contracted_rate=250.0, state=state, sleep=lambda s: None)
    pacer.acquire("anka:H1", policy=policy, max_wait=None)
    before = state.current_rate("anka:H1")
    assert before == pytest.approx(245.0)
    for i in range(WINDOW_ATTEMPTS):
        pacer.observe("anka:H1", throttled=i < 5, policy=policy)
    assert state.current_rate("anka:H1") == before  # 20 calls are not yet a window at this rate
    for _ in range(int(before * WINDOW_RATE_SECONDS) - WINDOW_ATTEMPTS):
        pacer.observe("anka:H1", throttled=False, policy=policy)
    after = state.current_rate("anka:H1")
    assert before * 0.9 < after < before  # judged, and cut a little


def test_local_refusals_are_counted_per_insurer_beside_the_budget(state):
    """A call refused on our side is no retry and no first attempt: its own counter, same window."""
    for _ in range(3):
        state.count_local_refusal("anka")
    state.count_local_refusal("deniz")
    anka = state.budget_snapshot("anka")
    assert anka["local_refusals"] == 3 and anka["retries"] == anka["denied"] == anka["first_failures"] == 0
    assert state.budget_snapshot("deniz")["local_refusals"] == 1
    assert state.budget_snapshot("cinar")["local_refusals"] == 0
    assert state.budget_tokens("anka") == pytest.approx(RETRY_BUDGET_RESERVE)  # no token spent


def test_the_known_good_rate_before_a_cut_is_kept_with_the_rate(state):
    """What `adjusted_rate` needs to tell a pause's onset from a limit travels through the state:
    the rate set, read back by the caller that closes the next window."""
    state.reserve_send_slot("deniz:A1", initial_rate=40.0, ceiling=40.0, max_wait=None)
    state.set_rate("deniz:A1", RateState(rate=27.16, known_good=28.0, good_before_cut=40.0))
    closed = [state.record_outcome("deniz:A1", throttled=True) for _ in range(WINDOW_ATTEMPTS)]
    current, window = next(c for c in closed if c is not None)
    assert current == RateState(rate=27.16, known_good=28.0, good_before_cut=40.0)
    assert window.throttled == window.attempts == WINDOW_ATTEMPTS

    policy = default_policy("policy_status")
    pacer = SharedSendRate(contracted_rate=50.0, state=state, sleep=lambda s: None)
    pacer._adjust("deniz:A1", (current, window), policy)  # the pause: the cut was its onset
    state.reserve_send_slot("deniz:A1", initial_rate=40.0, ceiling=40.0, max_wait=None)
    closed = [state.record_outcome("deniz:A1", throttled=False) for _ in range(WINDOW_ATTEMPTS)]
    after, _ = next(c for c in closed if c is not None)
    assert after.known_good == pytest.approx(40.0) and after.good_before_cut == 0.0
