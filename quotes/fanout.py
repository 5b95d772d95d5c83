"""A process-wide pool of I/O threads for insurer quote calls.

Quote calls spend their time waiting on insurers, so a worker process must not be blocked on
one call at a time: the django-q2 task only hands the calls to this pool and returns, and one
worker process keeps many agents' calls in flight at once. A quote lives for seconds; if the
process dies, the request's deadline turns the unanswered rows into "Yanıt alınamadı".
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.db import close_old_connections, connections

logger = logging.getLogger(__name__)

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def pool_size() -> int:
    return int(os.environ.get("QUOTE_IO_THREADS", "64"))


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=pool_size(), thread_name_prefix="quote-io")
        return _pool


def _keeps_connections() -> bool:
    """SQLite connections stay open in a pool thread between calls (up to CONN_MAX_AGE, as Django
    keeps a web thread's): an idle one holds no lock, while opening one — the pragmas, Django's
    functions — would sit before every call. A server database's connection goes back to its pool
    after each call instead: 64 threads per worker must not each hold a session."""
    return all(connection.vendor == "sqlite" for connection in connections.all())


def _run_closing_connection(fn: Callable[..., Any], *args: Any) -> Any:
    close_old_connections()  # one past its age, or broken by an earlier call, is not reused
    try:
        return fn(*args)
    except Exception:
        logger.exception("quote call %s%r crashed", getattr(fn, "__name__", fn), args)
        raise
    finally:
        if _keeps_connections():
            close_old_connections()
        else:
            connections.close_all()


def submit(fn: Callable[..., Any], *args: Any) -> Future:
    # The caller's log context (its request id, agency) goes with the call to the pool's thread.
    return _executor().submit(contextvars.copy_context().run, _run_closing_connection, fn, *args)
