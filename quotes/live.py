"""Insurers' answers pushed to the agent's screen as they are stored (server-sent events).

The desk's results table used to poll every second, so an answer reached the screen up to a
second after it was stored. Now the page holds an `EventSource` on the request's stream and the
server sends the re-rendered table the moment a row changes.

How a process learns of a change depends on what is installed (`insurehub.change_feed`):

- **Pushed, where a server exists** (Redis with `REDIS_URL`, else PostgreSQL): the writer calls
  `change_feed.publish(topic, key)` (`quotes.services.quote_requests.rows_changed` for a request's
  rows; the issuance and document services after a try), sent once its transaction commits. One
  listener thread per process holds the subscription and pokes the streams watching that key
  (`Subscription.poke`): the stream renders at once, reading the committed rows itself.
- **Looked for, on the embedded SQLite**: **one watcher thread per process** asks, every
  `WATCH_INTERVAL` seconds and only while some stream is open, for the rows of every key a stream
  of this process is watching — one indexed query per topic (`request_id IN (...)`) for all the
  agents served here, not one per agent — and folds each key's rows into a short version
  (`results_version`: ids, states and tries). A stream whose version moved is woken (an `Event`
  per stream). The database is the message bus, so this works across processes with no server.

With push on, the watcher still looks, every `SAFETY_INTERVAL` (1 s): the guard against a lost
message (a publish that failed — it never fails the write, it is logged and counted — or one
sent while the listener was reconnecting; after a reconnect the listener pokes every stream
once). The trade-off: a lost message costs up to a second, never an answer; the price is one
batched query per process per second while streams are open, instead of forty.

Topics: `results` (a quote request's insurer rows, key: the request), `issuance` (key: the
issuance; its status page, `templates/quotes/_issuance_status.html`), and `document` (key: the
document record; registered by `documents.apps`, the policy page's document state). Each has
its versions function in `TOPICS`; `status_events` serves any of them, `results_events` the
results.

A stream (`status_events`, `results_events`):
- is checked like the fragment it replaces (login, the agency-scoped selector: another agency's
  request, issuance or policy is a 404 before the first byte);
- sends the whole fragment (a few rows: cheaper than a second round trip to fetch it),
  with the version as the event id; the page's own version travels as `?v=` and, after a
  reconnect, as `Last-Event-ID`, so a stream sends at once only what the page has not seen and a
  reconnect never misses an answer;
- wakes at the request's deadline too: rendering is what closes overdue insurers;
- ends with a `done` event once every insurer is final (the page closes its `EventSource`, or
  the browser would reconnect), and after `STREAM_MAX_SECONDS` anyway (the browser reconnects
  and the login and agency are checked again), so a held thread is bounded;
- never holds a database connection while it waits: the connection is closed after each
  render (Django opens the next one lazily). The watcher keeps one connection while streams
  are open at its 25 ms pace (reopening it each time would cost more than the query, and an
  autocommit read holds no snapshot between looks), closes it between its one-second safety
  looks, and closes it as soon as no stream is open. The PostgreSQL listener holds one
  connection of its own (not the pool's) while any stream listens.

A held stream ties one server thread: gunicorn's gthread workers need threads for the agents
watching at once (scripts/serve.sh), runserver and the test server start a thread per request.
The page keeps the one-second htmx poll as its fallback: it polls whenever the stream is not
open (no `EventSource`, the endpoint unreachable or refusing, a reconnect in progress); the
issuance and document fragments do the same (static/insurehub/live-status.js).

So one agent cannot hold every thread (issue 21: forty tabs, or a script opening streams), open
streams are capped per user (`QUOTE_LIVE_STREAMS_PER_USER`) and per session
(`QUOTE_LIVE_STREAMS_PER_SESSION`), counted in the shared cache (`insurehub.cache_slots`: every
web process and machine meets the same count). A stream past either cap answers 429 with a
Turkish sentence and `Retry-After`; a cache that does not answer, 503. Either way the browser's
`EventSource` gives up and the page's poll takes over. The slots are given back when the stream
ends, whichever way: its last event, its time limit, or the browser gone (the server closes the
response, `StreamLease.close`); a process killed mid-stream leaves them to expire after
`STREAM_SLOT_TTL_SECONDS`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connections
from django.utils import timezone

from insurehub import change_feed
from insurehub.cache_slots import Slots, slots_acquire
from quotes.models import InsurerQuote, Issuance

logger = logging.getLogger(__name__)

# How often the watcher looks: half of it is the mean wait an answer adds before its push.
WATCH_INTERVAL = float(getattr(settings, "QUOTE_LIVE_WATCH_INTERVAL", 0.025))
# With a change feed (Redis, PostgreSQL) messages wake the streams; the watcher's look is then
# only the guard against a lost message, this often.
SAFETY_INTERVAL = float(getattr(settings, "QUOTE_LIVE_SAFETY_INTERVAL", 1.0))
# The feed's topics: a quote request's insurer rows, an issuance (documents adds its own).
RESULTS_TOPIC = "results"
ISSUANCE_TOPIC = "issuance"
# A comment line now and then: proxies keep the connection, and a gone browser is noticed.
KEEPALIVE_SECONDS = 15.0
# A stream's life is bounded: the browser reconnects (login and agency checked again).
STREAM_MAX_SECONDS = float(getattr(settings, "QUOTE_LIVE_STREAM_MAX_SECONDS", 45.0))
# The browser waits this long before reconnecting after the stream ends or breaks.
RECONNECT_MS = 1000
# A stream's slot outlives the stream's longest life (and a slow last render) before it expires.
STREAM_SLOT_TTL_SECONDS = int(STREAM_MAX_SECONDS) + 30

STREAMS_FULL_MESSAGE = (
    "Aynı anda açık canlı sonuç bağlantısı sınırına ulaşıldı; sonuçlar her saniye yenilenerek gösteriliyor."
)
STREAMS_UNAVAILABLE_MESSAGE = "Canlı sonuç bağlantısı şu an açılamıyor; sonuçlar her saniye yenilenerek gösteriliyor."


def streams_per_user() -> int:
    return int(getattr(settings, "QUOTE_LIVE_STREAMS_PER_USER", 6))


def streams_per_session() -> int:
    return int(getattr(settings, "QUOTE_LIVE_STREAMS_PER_SESSION", 3))


def stream_scopes(*, user_id: int, session_key: str) -> list[tuple[str, int]]:
    """The caps a stream counts against: its session's, then its user's.

    The session key is a credential: only a digest of it goes into a cache key.
    """
    scopes = [(f"live-stream:user:{user_id}", streams_per_user())]
    if session_key:
        session = hashlib.blake2b(session_key.encode(), digest_size=12).hexdigest()
        scopes.insert(0, (f"live-stream:session:{session}", streams_per_session()))
    return scopes


def stream_slots_take(*, user_id: int, session_key: str) -> tuple[Slots | None, str]:
    """A slot under both caps, or None and the full scope (`insurehub.cache_slots.slots_acquire`)."""
    return slots_acquire(scopes=stream_scopes(user_id=user_id, session_key=session_key), ttl=STREAM_SLOT_TTL_SECONDS)


class StreamLease:
    """A stream's events, holding its slots until the stream ends.

    `StreamingHttpResponse` calls `close()` when the server is done with the response: after
    the last event, and when the browser went away (a write failed, or the server was stopping).
    That is the only hook that also runs for a stream whose body never started: a generator's
    `finally` does not run when it is closed before its first step.
    """

    def __init__(self, events: Iterator[str], slots: Slots) -> None:
        self._events = events
        self._slots = slots

    def __iter__(self) -> StreamLease:
        return self

    def __next__(self) -> str:
        try:
            return next(self._events)
        except BaseException:
            # The last event went (or the body failed): the thread is free again, and so the slot.
            self._slots.release()
            raise

    def close(self) -> None:
        try:
            close = getattr(self._events, "close", None)
            if close is not None:
                close()
        finally:
            self._slots.release()


def results_version(rows: Iterable[tuple[int, str, int, int]]) -> str:
    """A short name for what the results table shows of its rows: (id, state, try, tries)."""
    text = ";".join(f"{pk}:{state}:{attempt}:{max_attempts}" for pk, state, attempt, max_attempts in sorted(rows))
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def row_version_fields(row: InsurerQuote) -> tuple[int, str, int, int]:
    return (row.pk, str(row.state), row.attempt, row.max_attempts)


def results_versions(request_ids: Iterable[int]) -> dict[int, str]:
    """The current version of each request's results, in one query."""
    grouped: dict[int, list[tuple[int, str, int, int]]] = {}
    ids = list(request_ids)
    if not ids:
        return {}
    rows = InsurerQuote.objects.filter(request_id__in=ids).values_list(
        "request_id", "id", "state", "attempt", "max_attempts"
    )
    for request_id, pk, state, attempt, max_attempts in rows:
        grouped.setdefault(request_id, []).append((pk, state, attempt, max_attempts))
    return {request_id: results_version(grouped.get(request_id, [])) for request_id in ids}


def _short(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def version_of(fields: Iterable[object]) -> str:
    """A short name for a record's fields as a status fragment shows them."""
    return _short(":".join(str(value) for value in fields))


ISSUANCE_VERSION_FIELDS = ("state", "attempts", "maybe_sent", "policy_no", "error_message")


def issuance_version(issuance: Issuance) -> str:
    """A short name for what the issuance status fragment shows of its issuance (the policy
    link comes with SUBMITTED, in the same transaction)."""
    return version_of(getattr(issuance, name) for name in ISSUANCE_VERSION_FIELDS)


def issuance_versions(issuance_ids: Iterable[int]) -> dict[int, str]:
    """The current version of each issuance's status, in one query."""
    ids = list(issuance_ids)
    rows = Issuance.objects.filter(pk__in=ids).values_list("pk", *ISSUANCE_VERSION_FIELDS)
    found = {pk: version_of(fields) for pk, *fields in rows}
    return {pk: found.get(pk, "") for pk in ids}


# What a topic's key names, and how the watcher reads the versions of many at once. A desk app
# whose fragment streams registers its topic (documents: `documents.apps`).
VersionsOf = Callable[[Iterable[int]], dict[int, str]]
TOPICS: dict[str, VersionsOf] = {
    RESULTS_TOPIC: results_versions,
    ISSUANCE_TOPIC: issuance_versions,
}


def topic_register(topic: str, versions: VersionsOf) -> None:
    TOPICS[topic] = versions


def versions_of(topic: str, keys: Iterable[int]) -> dict[int, str]:
    return TOPICS[topic](keys)


# --- the watcher: one per process ----------------------------------------------------------


@dataclass(eq=False)
class Subscription:
    key: int
    topic: str = RESULTS_TOPIC
    version: str | None = None
    # When the change was seen (epoch s): by the watcher's look or the feed's message. The bench
    # splits a row's time there.
    seen_at: float | None = None
    # A message said the key changed (the version is not known until the stream reads it).
    poked: bool = False
    changed: threading.Event = field(default_factory=threading.Event)
    listening: change_feed.Listening | None = None

    @property
    def request_id(self) -> int:
        return self.key

    def poke(self) -> None:
        """The feed's wake-up (on the listener thread): the stream reads what changed itself."""
        self.seen_at = time.time()
        self.poked = True
        self.changed.set()


class Watcher:
    """Looks at the watched keys every `interval` seconds and wakes their streams.

    With a change feed (`insurehub.change_feed`: Redis or PostgreSQL), each subscription also
    listens for its key's messages, which wake it at once; the look then runs only every
    `safety_interval` seconds, as the guard against a lost message.
    """

    def __init__(self, interval: float = WATCH_INTERVAL, safety_interval: float = SAFETY_INTERVAL) -> None:
        self.interval = interval
        self.safety_interval = safety_interval
        self._lock = threading.Condition()
        self._subscriptions: set[Subscription] = set()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def subscribe(self, key: int, topic: str = RESULTS_TOPIC) -> Subscription:
        subscription = Subscription(key, topic)
        subscription.listening = change_feed.listen(topic, key, subscription.poke)
        with self._lock:
            self._subscriptions.add(subscription)
            self._ensure_thread()
            self._lock.notify_all()
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        change_feed.unlisten(subscription.listening)
        with self._lock:
            self._subscriptions.discard(subscription)

    def pause(self) -> float:
        """The time between looks: the fast one with the database as the bus, else the safety one."""
        return max(self.interval, self.safety_interval) if change_feed.enabled() else self.interval

    def _ensure_thread(self) -> None:
        # A forked worker (gunicorn) inherits the object but not the thread: start its own.
        if self._thread is not None and self._thread.is_alive() and self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name="quote-live-watcher", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._subscriptions:
                    # Idle: hand the connection back before waiting for the next stream.
                    connections.close_all()
                while not self._subscriptions:
                    self._lock.wait()
                watched = list(self._subscriptions)
            pause = self.pause()
            try:
                self.look(watched)
            except Exception:  # a database hiccup must not end the watcher: the streams keep waiting
                logger.exception("quote live watcher: look failed")
                connections.close_all()  # a broken connection is opened afresh on the next look
                pause = max(pause, 1.0)  # meanwhile the pages' streams time out into keep-alives, or their poll runs
            if pause >= 1.0:
                # A slow look does not keep its connection between looks (the pool, or a new one).
                connections.close_all()
            time.sleep(pause)

    def look(self, watched: list[Subscription]) -> None:
        keys: dict[str, set[int]] = {}
        for subscription in watched:
            keys.setdefault(subscription.topic, set()).add(subscription.key)
        versions = {topic: versions_of(topic, topic_keys) for topic, topic_keys in keys.items()}
        for subscription in watched:
            version = versions[subscription.topic].get(subscription.key)
            if version != subscription.version:
                subscription.version = version
                subscription.seen_at = time.time()
                subscription.changed.set()


watcher = Watcher()


# --- one agent's stream ------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    html: str
    version: str
    all_final: bool


def _event(name: str, data: str, event_id: str = "") -> str:
    lines = [f"event: {name}"]
    if event_id:
        lines.append(f"id: {event_id}")
    lines.extend(f"data: {line}" for line in data.splitlines() or [""])
    return "\n".join(lines) + "\n\n"


def results_events(
    *,
    request_id: int,
    deadline_at_epoch: float,
    render: Callable[[float | None], Rendered],
    seen_version: str,
    watch: Watcher = watcher,
    max_seconds: float = STREAM_MAX_SECONDS,
) -> Iterator[str]:
    """The results stream's body: a `results` event per change, `done` when every insurer is final.

    `render(seen_at)` gets when the change was seen (None when the stream found it itself).
    """
    return status_events(
        topic=RESULTS_TOPIC,
        key=request_id,
        deadline_at_epoch=deadline_at_epoch,
        render=render,
        seen_version=seen_version,
        watch=watch,
        max_seconds=max_seconds,
        event_name="results",
    )


def status_events(
    *,
    topic: str,
    key: int,
    render: Callable[[float | None], Rendered],
    seen_version: str,
    deadline_at_epoch: float = float("inf"),
    watch: Watcher = watcher,
    max_seconds: float = STREAM_MAX_SECONDS,
    event_name: str = "status",
) -> Iterator[str]:
    """A stream's body: an `event_name` event per change of `topic`/`key`, `done` once final."""
    subscription = watch.subscribe(key, topic)
    started = time.monotonic()
    sent = seen_version
    try:
        yield f"retry: {RECONNECT_MS}\n\n"
        current = versions_of(topic, [key]).get(key)
        poked = False
        while True:
            if current != sent or poked or _overdue(deadline_at_epoch):
                rendered = render(subscription.seen_at)
                _close_connection()
                if rendered.version != sent or rendered.all_final:
                    sent = rendered.version
                    yield _event("done" if rendered.all_final else event_name, rendered.html, sent)
                if rendered.all_final:
                    return
                # Past the deadline the render closed what was open; nothing to wait for then.
                deadline_at_epoch = float("inf") if _overdue(deadline_at_epoch) else deadline_at_epoch
            _close_connection()
            left = max_seconds - (time.monotonic() - started)
            if left <= 0:
                return
            timeout = min(left, KEEPALIVE_SECONDS, max(0.0, deadline_at_epoch - time.time()) + 0.05)
            poked = False
            if subscription.changed.wait(timeout):
                subscription.changed.clear()
                poked, subscription.poked = subscription.poked, False
                current = subscription.version
            elif not _overdue(deadline_at_epoch):
                yield ": keepalive\n\n"
    finally:
        watch.unsubscribe(subscription)
        _close_connection()


def _overdue(deadline_at_epoch: float) -> bool:
    return timezone.now().timestamp() >= deadline_at_epoch


def _close_connection() -> None:
    connections["default"].close()
