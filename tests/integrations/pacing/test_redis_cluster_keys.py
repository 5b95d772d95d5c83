"""The Redis scripts name every key they touch in KEYS, and a script's keys share one Cluster slot (issue 21).

Redis Cluster sends a script to the node that owns its KEYS and refuses keys of different slots
(CROSSSLOT); a key the script builds for itself may live on another node altogether. Checked on
a plain Redis: after every kind of step, each key that exists was declared by the call that wrote it.
"""

from __future__ import annotations

import pytest
from redis.crc import key_slot

from integrations.pacing.shared_state import RedisSharedState


@pytest.fixture
def state(redis_url):
    shared = RedisSharedState(redis_url)
    shared._redis.flushdb()
    declared: list[list[str]] = []
    for name in ("_reserve", "_record", "_budget", "_tokens"):
        script = getattr(shared, name)

        def recording(keys=(), args=(), client=None, _script=script):
            declared.append(list(keys))
            return _script(keys=keys, args=args, client=client)

        setattr(shared, name, recording)
    shared.declared = declared
    return shared


def test_every_key_a_script_writes_is_one_it_declared_in_one_slot(state):
    """Send slots, window counts, budget spends, refunds, first attempts, refusals, token reads."""
    for code in ("anka", "cinar"):
        state.reserve_counted(f"{code}:ACENTE1", initial_rate=10.0, ceiling=20.0, max_wait=None, burst=2)
        state.record_outcome(f"{code}:ACENTE1", throttled=True)
        state.budget_record_first(code, ok=True, ratio=0.2, times=3)
        state.budget_record_first(code, ok=False, ratio=0.2)
        assert state.budget_try_spend(code) is True
        state.budget_refund(code)
        state.count_local_refusal(code)
        state.budget_tokens(code)
    declared = {key for keys in state.declared for key in keys}
    written = {key.decode() for key in state._redis.keys("*")}
    assert written and written <= declared, sorted(written - declared)
    for keys in state.declared:
        assert len({key_slot(key.encode()) for key in keys}) == 1, keys


def test_the_budget_window_still_counts_after_the_layout_change(state):
    """The counters moved into one hash per insurer: the snapshot reads the same totals."""
    state.budget_record_first("anka", ok=True, ratio=0.2, times=4)
    state.budget_record_first("anka", ok=False, ratio=0.2)
    state.budget_try_spend("anka")
    state.count_local_refusal("anka")
    snapshot = state.budget_snapshot("anka")
    assert snapshot["first_successes"] == 4 and snapshot["first_failures"] == 1
    assert snapshot["retries"] == 1 and snapshot["local_refusals"] == 1
    assert state.budget_snapshot("cinar") == dict.fromkeys(snapshot, 0)


def test_buckets_that_left_the_window_are_forgotten(redis_url):
    """With the script's clock set by hand: a step a window later deletes the old bucket's fields."""
    from integrations.pacing.shared_state import _BUDGET_STEP

    shared = RedisSharedState(redis_url)
    shared._redis.flushdb()
    shared._budget = shared._redis.register_script("local now = tonumber(ARGV[9])\n" + _BUDGET_STEP)

    def step_at(now: float) -> None:
        keys = [shared._budget_key("anka"), shared._tokens_key("anka")]
        shared._budget(keys=keys, args=[5, 12, "ok", "", "15", "0.2", "", 1, repr(now)])

    step_at(1000.0)
    step_at(1000.0 + 5 * 13)  # 13 buckets later: the first one left the 12-bucket window
    fields = {field.decode() for field in shared._redis.hkeys(shared._budget_key("anka"))}
    assert "200:ok" not in fields and "213:ok" in fields
