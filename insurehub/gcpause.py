"""Short garbage-collector pauses for a process that paces calls to the millisecond.

A full collection walks every object the collector tracks: in a worker that has imported
Django, the project and its libraries that is a few hundred thousand objects, about 60 ms on a
small machine, and a busy drain triggers one every few seconds. Every thread stops meanwhile,
so a drain pacing calls at 250/s misses some fifteen send slots each time (the nightly sync's
throughput lost 1.5 % to it). Those objects live as long as the process; nothing they hold is
garbage. `heap_frozen()` moves them out of the collector's sight for the block (`gc.freeze`),
so a full collection walks only what was made since, and gives them back afterwards
(`gc.unfreeze`), so nothing that dies later is kept for ever.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0


@contextmanager
def heap_frozen() -> Iterator[None]:
    """Freeze the heap as it is for the block; nested and concurrent blocks share one freeze."""
    global _holders
    with _lock:
        if _holders == 0:
            gc.collect()  # what is garbage already is freed, not frozen
            gc.freeze()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                gc.unfreeze()
