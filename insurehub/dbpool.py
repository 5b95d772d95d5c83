"""PostgreSQL connection pooling that survives django-q2's forks and insurer waits.

Scale-out runs on Django's own psycopg pool (`OPTIONS["pool"]`, set in settings when
`DATABASE_URL` is PostgreSQL). Two things make it safe and useful here:

* django-q2 forks its workers from a process that may already hold pooled connections. A
  forked child must never use them: the socket is shared with the parent, and two processes
  talking on one PostgreSQL session corrupt it. After a fork the child forgets the inherited
  pools and connections — without closing them, since closing would end the parent's sessions
  too — and opens its own on first use.
* An insurer call can take seconds. A thread must not sit on a pooled connection while it
  waits for an insurer or sleeps out a backoff, or a few slow insurers would empty the pool
  for everyone. `db_connection_release` hands it back first; the next query borrows one again.
  Without a pool (SQLite, or pooling switched off) it does nothing: closing would only cost a
  reconnect.
"""

from __future__ import annotations

import os
import time
from typing import Any

from django.db import connections

# Objects inherited across a fork, kept referenced so they are never garbage-collected (and so
# never closed) in the child: their sockets belong to the parent.
_inherited: list[Any] = []
_installed = False


def install_fork_guard() -> None:
    """Register `forget_inherited_connections` to run in every forked child (once per process)."""
    global _installed
    if not _installed and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=forget_inherited_connections)
        _installed = True


def forget_inherited_connections() -> None:
    for wrapper in connections.all(initialized_only=True):
        if wrapper.connection is not None:
            _inherited.append(wrapper.connection)
            wrapper.connection = None
    pools = _postgres_pools()
    if pools:
        _inherited.append(dict(pools))
        pools.clear()


def _postgres_pools() -> dict[str, Any] | None:
    if not any(conn.settings_dict["ENGINE"] == "django.db.backends.postgresql" for conn in connections.all()):
        return None
    from django.db.backends.postgresql.base import DatabaseWrapper

    # The backend's class-level registry of pools (Django 5.1+), which django-stubs does not declare.
    return DatabaseWrapper._connection_pools  # type: ignore[attr-defined]


def db_connection_release() -> None:
    """Give this thread's pooled connections back to the pool before a long wait.

    Never inside a transaction: closing there would roll it back under the caller's feet.
    """
    for wrapper in connections.all(initialized_only=True):
        if (
            wrapper.connection is not None
            and not wrapper.in_atomic_block
            and wrapper.settings_dict.get("OPTIONS", {}).get("pool")
        ):
            wrapper.close()


def sleep_released(seconds: float) -> None:
    """`time.sleep` for waits on insurers (backoff, pacing): the pooled connection is handed back first."""
    db_connection_release()
    time.sleep(seconds)
