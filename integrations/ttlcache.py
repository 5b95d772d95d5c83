"""A small per-process cache whose entries live a few seconds: admin settings read by workers.

Admins change retry policies and error mappings in the database; every worker must see the
change within seconds without a restart, and must not read the database on every insurer call.
One implementation, so "within N seconds" means the same thing wherever an admin reads it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._entries: dict[K, tuple[float, V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K, load: Callable[[], V]) -> V:
        """The cached value, or `load()`'s (outside the lock: a slow read never blocks hits)."""
        now = self._clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and now - entry[0] < self.seconds:
                return entry[1]
        value = load()
        with self._lock:
            self._entries[key] = (now, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
