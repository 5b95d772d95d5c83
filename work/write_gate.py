"""One writer at a time per process on SQLite: threads queue on a lock, not in SQLite's busy loop.

SQLite lets one writer in at a time and makes the others wait in its busy handler, which sleeps
(1, 2, 5, 10 … 100 ms) and looks again. A drain keeps dozens of threads writing small
transactions (send slots, throttle counts, budget tokens, batch claims and writes): under the
GIL a writer that holds SQLite's lock is often not running, the waiters sleep past the moment it
is free, and throughput collapses into those sleeps. Queued on a Python lock instead, the next
writer is woken the moment the lock is released. Other processes still wait in SQLite's busy
handler, as before; on PostgreSQL (and with the shared state in Redis) the gate is open.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection

_gate = threading.RLock()


def _gated_here() -> bool:
    return connection.vendor == "sqlite"


@contextmanager
def write_gate() -> Iterator[None]:
    """Hold this process's SQLite write gate for the block (nothing to hold elsewhere)."""
    if not _gated_here():
        yield
        return
    with _gate:
        yield


class GatedState:
    """The shared send-rate and budget state with each call under the write gate.

    Only each call: never a wait for a send slot, which happens outside the state.
    """

    def __init__(self, state: Any) -> None:
        self._state = state

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._state, name)
        if not callable(attr):
            return attr

        def gated(*args: Any, **kwargs: Any) -> Any:
            with write_gate():
                return attr(*args, **kwargs)

        return gated


def gated_shared_state() -> Any:
    """The shared state, gated when it lives in this process's SQLite database."""
    from integrations.pacing.shared_state import DatabaseSharedState, shared_state

    state = shared_state()
    return GatedState(state) if isinstance(state, DatabaseSharedState) and _gated_here() else state


def gated(call: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        with write_gate():
            return call(*args, **kwargs)

    return run
