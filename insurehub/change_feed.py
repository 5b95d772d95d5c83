"""A change announced to every web process the moment it commits: "request 42's rows moved".

The desk's live streams (quotes/live.py) wait for changes to a few records: a quote request's
insurer rows, an issuance, a policy document. Without a server to carry the news, each web
process's watcher asks the database every 25 ms (the database is the bus: the embedded SQLite
default). Where a server exists, the writer says so instead and the stream wakes at once:

- Redis (`REDIS_URL`, the shared cache and broker): pub/sub on one channel;
- else PostgreSQL (`DATABASE_URL`): `NOTIFY` on one channel, `LISTEN` on a connection of its own;
- else nothing: `publish` does nothing and the watcher keeps its 25 ms look.

`CHANGE_FEED` (setting and environment variable) forces `redis`, `postgres` or `off`; `auto`
(the default) picks as above.

The interface is two calls. A writer calls `publish(topic, key)` wherever it changes what a stream
shows; the message leaves after the transaction commits (`transaction.on_commit`), so a reader
woken by it reads the committed rows, and a rolled-back change announces nothing. A reader calls
`listen(topic, key, wake)` and `wake()` runs (on the listener thread: it must only set an event)
when a message for that topic and key arrives; one listener thread per process holds the one
subscription and fans each message out to this process's readers.

Publishing never fails the write: a Redis that does not answer, a NOTIFY that errors, is logged
and counted (`stats()`), and the write stands; for a second after a failure the process does not
try again (a Redis that hangs would cost every stored answer its timeout).

A message can be lost (the publish failed, the listener was reconnecting): the readers keep a
slow safety re-check (quotes/live.py's watcher, at `QUOTE_LIVE_SAFETY_INTERVAL` with push on),
so a lost message delays an answer by about a second, never loses it; and after the listener
(re)connects it wakes every reader once, for whatever it may have missed meanwhile.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connections, transaction

logger = logging.getLogger(__name__)

# One channel for every topic: the messages are few and short ("results:42"); each process keeps
# those its own streams wait for.
CHANNEL = "insurehub_changes"
# How long the listener blocks for a message before it looks whether it is still needed.
LISTEN_TIMEOUT = 1.0
# After a failed connection, the listener waits this long before trying again.
RECONNECT_SECONDS = 1.0
# A publish must not hold the write's thread: a Redis that does not answer gives up this fast.
PUBLISH_TIMEOUT = 0.5

MODES = ("redis", "postgres")


def mode() -> str:
    """Which server carries the messages: "redis", "postgres", or "" (none: the database is the bus)."""
    chosen = str(getattr(settings, "CHANGE_FEED", "auto") or "auto").lower()
    if chosen == "off":
        return ""
    if chosen in MODES:
        return chosen
    if getattr(settings, "REDIS_URL", ""):
        return "redis"
    if connections["default"].vendor == "postgresql":
        return "postgres"
    return ""


def enabled() -> bool:
    return bool(mode())


# --- counts: what went wrong, for logs and tests ---------------------------------------------

_counts_lock = threading.Lock()
_counts = {"published": 0, "publish_failures": 0, "received": 0, "listener_failures": 0}


def _count(name: str) -> None:
    with _counts_lock:
        _counts[name] += 1


def stats() -> dict[str, int]:
    """Messages published and received by this process, and the failures of either side."""
    with _counts_lock:
        return dict(_counts)


# --- the writer's side -----------------------------------------------------------------------


def publish(topic: str, key: int | str) -> None:
    """Announce that what `topic`/`key` shows changed, once the current transaction commits.

    Outside a transaction it is sent at once. Never raises (see the module docstring)."""
    chosen = mode()
    if not chosen:
        return
    message = f"{topic}:{key}"
    try:
        transaction.on_commit(lambda: _send(chosen, message))
    except Exception:  # e.g. no database connection usable to register on: the write still stands
        logger.exception("change feed: could not register %s", message)
        _count("publish_failures")


# After a failed publish, the next ones are skipped (and counted) this long: a Redis that hangs
# must not cost every stored answer its timeout; the readers' safety re-check covers the gap.
PUBLISH_BACKOFF_SECONDS = 1.0
_publish_down_until = 0.0


def _send(chosen: str, message: str) -> None:
    global _publish_down_until
    if time.monotonic() < _publish_down_until:
        _count("publish_failures")
        return
    try:
        if chosen == "redis":
            _redis_publisher().publish(CHANNEL, message)
        else:
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, message])
    except Exception:
        logger.warning(
            "change feed: publishing %s failed; the readers' safety re-check will find it", message, exc_info=True
        )
        _count("publish_failures")
        _publish_down_until = time.monotonic() + PUBLISH_BACKOFF_SECONDS
        return
    _count("published")


_publisher: tuple[tuple[int, str], Any] | None = None
_publisher_lock = threading.Lock()


def _redis_publisher() -> Any:
    """One client per process (redis-py's pool is thread-safe); a forked worker makes its own."""
    global _publisher
    import redis

    where = (os.getpid(), settings.REDIS_URL)
    with _publisher_lock:
        if _publisher is None or _publisher[0] != where:
            client = redis.Redis.from_url(
                settings.REDIS_URL, socket_connect_timeout=PUBLISH_TIMEOUT, socket_timeout=PUBLISH_TIMEOUT
            )
            _publisher = (where, client)
        return _publisher[1]


# --- the reader's side: one listener thread per process ----------------------------------------


@dataclass(eq=False)
class Listening:
    message: str
    wake: Callable[[], None]


class Listener:
    """Holds the process's one subscription while any reader listens, and wakes the readers."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._by_message: dict[str, set[Listening]] = {}
        self._thread: threading.Thread | None = None
        self._pid = 0
        # Set while subscribed (tests wait on it: a message sent before is not heard).
        self.connected = threading.Event()

    def listen(self, topic: str, key: int | str, wake: Callable[[], None]) -> Listening:
        listening = Listening(f"{topic}:{key}", wake)
        with self._lock:
            self._by_message.setdefault(listening.message, set()).add(listening)
            self._ensure_thread()
            self._lock.notify_all()
        return listening

    def unlisten(self, listening: Listening) -> None:
        with self._lock:
            waiting = self._by_message.get(listening.message)
            if waiting is not None:
                waiting.discard(listening)
                if not waiting:
                    del self._by_message[listening.message]

    def dispatch(self, message: str) -> None:
        _count("received")
        with self._lock:
            waiting = list(self._by_message.get(message, ()))
        for listening in waiting:
            listening.wake()

    def wake_all(self) -> None:
        with self._lock:
            waiting = [listening for group in self._by_message.values() for listening in group]
        for listening in waiting:
            listening.wake()

    def _needed(self) -> bool:
        with self._lock:
            return bool(self._by_message)

    def _ensure_thread(self) -> None:
        # A forked worker (gunicorn) inherits the object but not the thread: start its own.
        if self._thread is not None and self._thread.is_alive() and self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self.connected.clear()
        self._thread = threading.Thread(target=self._run, name="change-feed-listener", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._by_message:
                    self._lock.wait()
            chosen = mode()
            if chosen not in MODES:  # no server (switched off meanwhile): the watcher alone serves
                time.sleep(LISTEN_TIMEOUT)
                continue
            try:
                if chosen == "redis":
                    self._serve_redis()
                else:
                    self._serve_postgres()
            except Exception:
                logger.warning("change feed: the %s listener lost its connection; retrying", chosen, exc_info=True)
                _count("listener_failures")
                self.connected.clear()
                # Whatever was sent while not subscribed is re-checked by every reader.
                self.wake_all()
                time.sleep(RECONNECT_SECONDS)
            finally:
                self.connected.clear()

    def _subscribed(self) -> None:
        self.connected.set()
        # Messages sent before the subscription (while connecting) were not heard: look once.
        self.wake_all()

    def _serve_redis(self) -> None:
        import redis

        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, health_check_interval=15)
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        try:
            pubsub.subscribe(CHANNEL)
            self._subscribed()
            while self._needed():
                message = pubsub.get_message(timeout=LISTEN_TIMEOUT)
                if message and message.get("type") == "message":
                    data = message["data"]
                    self.dispatch(data.decode() if isinstance(data, bytes) else str(data))
        finally:
            pubsub.close()
            client.close()

    def _serve_postgres(self) -> None:
        import psycopg

        with psycopg.connect(**postgres_params(), autocommit=True) as connection:
            connection.execute(f"LISTEN {CHANNEL}")
            self._subscribed()
            while self._needed():
                for notify in connection.notifies(timeout=LISTEN_TIMEOUT):
                    self.dispatch(notify.payload)


def postgres_params() -> dict[str, Any]:
    """How to reach the default database with a plain psycopg connection (not the pool's: a
    LISTEN is held for as long as readers listen, which a pooled connection must not be)."""
    database = connections["default"].settings_dict
    params = {
        "dbname": database.get("NAME"),
        "user": database.get("USER"),
        "password": database.get("PASSWORD"),
        "host": database.get("HOST"),
        "port": database.get("PORT"),
        "sslmode": (database.get("OPTIONS") or {}).get("sslmode"),
        "connect_timeout": 2,
        "application_name": "insurehub-change-feed",
    }
    return {name: value for name, value in params.items() if value not in (None, "")}


listener = Listener()


def listen(topic: str, key: int | str, wake: Callable[[], None]) -> Listening | None:
    """Run `wake()` whenever `topic`/`key` is published; None when no server carries messages."""
    if not enabled():
        return None
    return listener.listen(topic, key, wake)


def unlisten(listening: Listening | None) -> None:
    if listening is not None:
        listener.unlisten(listening)
