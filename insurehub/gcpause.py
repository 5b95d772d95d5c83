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
# A server froze its startup heap for good (`startup_heap_freeze`): a block leaves it frozen.
_for_good = False


@contextmanager
def heap_frozen() -> Iterator[None]:
    """Freeze the heap as it is for the block; nested and concurrent blocks share one freeze."""
    global _holders
    with _lock:
        if _holders == 0 and not _for_good:
            gc.collect()  # what is garbage already is freed, not frozen
            gc.freeze()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and not _for_good:
                gc.unfreeze()


def startup_heap_freeze() -> None:
    """Freeze, for the process's life, the heap a server has once its application is loaded.

    A web process renders pages and streams answers (`quotes/live.py`) from many threads; a full
    collection walking Django, the project and the libraries stops all of them, the watcher that
    pushes an insurer's answer to the agent's screen too. What is loaded at start stays loaded:
    only cyclic garbage among it that dies later is never freed, a bounded cost the forking
    servers (gunicorn) take for the same reason and for copy-on-write.
    """
    global _for_good
    with _lock:
        _for_good = True
        gc.collect()
        gc.freeze()
