"""A bounded number of holders per key, counted in the shared cache (a counting semaphore).

The live-results streams (quotes/live.py) are capped per user and per session across every web
process and machine: each holder takes one of `limit` numbered slots with `cache.add`, which is
atomic on every backend the settings choose (Redis `SET NX`; the database table's unique key;
the test settings' memory cache under its lock). A counter with `incr` would need a second
round trip and, on the database cache, is a read and a write that two processes can interleave.

A slot is released when its holder ends, and it expires by itself after `ttl` seconds: a process
killed mid-stream (SIGKILL, an OOM) gives its slots back within a stream's life, never holds them
for ever. `ttl` must outlive the holder's longest life, or a second holder could take the slot.

A cache that cannot be reached counts nothing: `slots_acquire` raises `SlotsUnavailable` and the
caller decides. The live stream then refuses (503): the page's one-second poll serves the agent,
and an uncounted stream is exactly what one agent could pile up while Redis restarts.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field

from django.core.cache import caches

logger = logging.getLogger(__name__)


class SlotsUnavailable(Exception):
    """The cache did not answer: nothing was counted."""


@dataclass
class Slots:
    """The slots one holder took (one per scope); `release` gives them back, once."""

    keys: list[str] = field(default_factory=list)
    token: str = ""
    cache_alias: str = "default"
    released: bool = False

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        cache = caches[self.cache_alias]
        for key in self.keys:
            try:
                # Only a slot still ours: after its TTL another holder may own the key.
                if cache.get(key) == self.token:
                    cache.delete(key)
            except Exception:  # noqa: BLE001 - the slot expires by itself; a release must never break a response
                logger.warning("cache slot %s not released (cache unreachable); it expires by itself", key)


def slots_acquire(*, scopes: list[tuple[str, int]], ttl: int, cache_alias: str = "default") -> tuple[Slots | None, str]:
    """One slot in every `(scope, limit)`, or none at all.

    Returns the slots and "" when every scope had room; `None` and the first full scope's name
    otherwise. Raises `SlotsUnavailable` when the cache cannot be reached.
    """
    cache = caches[cache_alias]
    held = Slots(token=secrets.token_hex(8), cache_alias=cache_alias)
    try:
        for scope, limit in scopes:
            for index in range(max(0, limit)):
                key = f"slot:{scope}:{index}"
                if cache.add(key, held.token, timeout=ttl):
                    held.keys.append(key)
                    break
            else:
                held.release()
                return None, scope
    except Exception as exc:
        held.release()
        raise SlotsUnavailable(str(exc)) from exc
    return held, ""


def slots_in_use(*, scope: str, limit: int, cache_alias: str = "default") -> int:
    """How many of a scope's slots are held now (for tests and the bench)."""
    keys = [f"slot:{scope}:{index}" for index in range(limit)]
    return len(caches[cache_alias].get_many(keys))
