"""The one TTL cache behind admin-tuned settings: a hit within its seconds, a fresh read after."""

from __future__ import annotations

from integrations.ttlcache import TtlCache


def test_entries_are_reused_within_their_seconds_and_read_again_after():
    now = [100.0]
    loads = []
    cache: TtlCache[str, int] = TtlCache(5.0, clock=lambda: now[0])

    def load() -> int:
        loads.append(now[0])
        return len(loads)

    assert cache.get("anka", load) == 1
    now[0] += 4.9
    assert cache.get("anka", load) == 1
    now[0] += 0.2
    assert cache.get("anka", load) == 2
    assert cache.get("deniz", load) == 3
    cache.clear()
    assert cache.get("anka", load) == 4
