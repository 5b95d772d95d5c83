"""The one translation point between the platform and an insurer.

Every request to every insurer goes through `Channel.exchange`: it sends with `requests`
(library-level retries off: retrying belongs to the retry engine alone), turns transport
failures and the adapter's reading of the answer into an `InsurerError` of the taxonomy, and
records the attempt. Adapters only describe their insurer: URLs, bodies and a code table.
"""

from __future__ import annotations

import heapq
import html
import itertools
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import quote, quote_plus, urlsplit
from xml.sax.saxutils import escape as xml_escape

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import NewConnectionError

from insurehub.dbpool import db_connection_release
from insurehub.masking import decode_body, mask_and_cut
from integrations.answers.classification import classify
from integrations.answers.taxonomy import LOCAL_RATE_LIMIT, ErrorClass, ErrorKind, InsurerError, Refusal
from integrations.attempts.recording import MAX_RAW_SAMPLE, AttemptRecord, AttemptRecorder
from integrations.insurer_hosts import insurer_host_problem, insurer_ip_problem

T = TypeVar("T")

logger = logging.getLogger("integrations.calling")

# provider_code of a request refused before sending: never recorded as an attempt.
NOT_SENT = "REQUEST_NOT_SENT"
# provider_code of a request refused because the insurer's address is not one the platform may
# send credentials to (`integrations.insurer_hosts`): permanent, nothing sent, never an attempt.
HOST_NOT_ALLOWED = "HOST_NOT_ALLOWED"
_UNSENT = frozenset({NOT_SENT, HOST_NOT_ALLOWED})

# An answer larger than this is not an insurer's answer to a quote; refuse to hold it.
MAX_RESPONSE_BYTES = 2 * 1024 * 1024

# A policy document is a PDF of up to 5 MiB (CONTRACTS.md), sent base64 in JSON or XML by some
# insurers (4/3 of its size, plus the envelope): a call that fetches one may ask for this much.
MAX_DOCUMENT_RESPONSE_BYTES = 8 * 1024 * 1024

# provider_code of an exchange cut short (or refused) because this process is stopping.
WORKER_STOPPED = "WORKER_STOPPED"


class ExchangeStopped(Exception):
    """This process is stopping and the exchange was cut short (`sent`) or never started.

    Not an `InsurerError` on purpose: it is no answer of the insurer, so no adapter may read it
    as one (Deniz's poll loop keeps polling through any insurer error, to its deadline), the
    engine does not count it as a failure or retry it, and the caller that made the exchange
    stoppable (`exchanges_stoppable`) hands its record back. `error` is what the attempt log
    holds for a cut exchange: the request went out, so the insurer may have acted on it.
    """

    def __init__(self, *, sent: bool) -> None:
        super().__init__("cut short: this worker is stopping" if sent else "not sent: this worker is stopping")
        self.sent = sent
        self.error = InsurerError(ErrorKind.CONNECTION, provider_code=WORKER_STOPPED, message=str(self), ambiguous=sent)


@dataclass
class Call:
    """One HTTP request an adapter wants sent. `name` tells helper calls apart in the log."""

    method: str
    path: str
    json: Any = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] | None = None
    name: str = "main"
    # The largest answer this call may bring back; beyond it the answer is refused unread.
    max_bytes: int = MAX_RESPONSE_BYTES


@dataclass
class Reply:
    status: int
    headers: CaseInsensitiveDict
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";")[0].strip().lower()

    def sample(self, scrub: Callable[[str], str] | None = None) -> str:
        """What the attempt log keeps of this answer: decoded, `scrub`bed (the channel takes the
        call's credentials out), masked, then cut; scrubbed before the cut, or a cut through a
        password would leave its head."""
        charset = self.headers.get("Content-Type", "").partition("charset=")[2].split(";")[0].strip(" \"'")
        text = decode_body(self.content, charset or None)[: MAX_RAW_SAMPLE + _SCRUB_WINDOW]
        return mask_and_cut(scrub(text) if scrub else text, MAX_RAW_SAMPLE)


@dataclass
class CallContext:
    """Who is calling, for what: written on every attempt row."""

    insurer_code: str
    operation: str
    product: str = ""
    account_key: str = ""
    reference: str = ""
    attempt_no: int = 1
    # time.monotonic() instant after which no request may be started or waited on.
    deadline_at: float | None = None
    attempt_timeout: float = 10.0


class Pacer(Protocol):
    """Paces every exchange of one operation: the main call and every helper call (a token, a
    poll, a lookup, a download) take a send slot of the account, because the insurer counts
    them all against the contract."""

    def before_send(self, call: Call, *, remaining: float | None) -> None:
        """Wait for the account's next send slot; raise a local THROTTLED `InsurerError`
        (`LOCAL_RATE_LIMIT`) when the slot leaves too little of the `remaining` seconds before
        the deadline for the call itself: the call is then not sent."""

    def after_answer(self, call: Call, *, throttled: bool) -> None:
        """The insurer answered (`throttled`: with its own throttle signal)."""


_sessions = threading.local()


def _prepared(session: requests.Session, call: Call, url: str) -> requests.PreparedRequest:
    """The request as `session.prepare_request` would build it for our sessions, without its merges.

    Our sessions carry no cookies, auth or parameters and ignore the environment (`trust_env`
    off): all `prepare_request` adds to a call is the session's default headers and response
    hooks, and its merging of empty settings cost a nightly sync a seventh of its CPU per call.
    """
    headers = CaseInsensitiveDict(session.headers)
    for name, value in (call.headers or {}).items():
        if value is None:  # as requests merges: None removes a session default
            headers.pop(name, None)
        else:
            headers[name] = value
    prepared = requests.PreparedRequest()
    prepared.prepare(
        method=call.method,
        url=url,
        headers=headers,
        data=call.body,
        params=call.params,
        json=call.json,
        hooks=session.hooks,
    )
    return prepared


def _session() -> requests.Session:
    """One keep-alive session per thread: `requests.Session` is not safe to share across threads."""
    session = getattr(_sessions, "session", None)
    if session is None:
        session = requests.Session()
        # max_retries=0: urllib3 must never resend behind the retry engine's back.
        adapter = HTTPAdapter(max_retries=0, pool_connections=8, pool_maxsize=8)
        # Pools whose connections hand their socket to the deadline watchdog (`_DeadlineWatch`).
        adapter.poolmanager.pool_classes_by_scheme = _WATCHED_POOLS
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        session.trust_env = False
        _sessions.session = session
    return session


class Channel:
    def __init__(
        self,
        *,
        base_url: str,
        context: CallContext,
        recorder: AttemptRecorder,
        error_table: Mapping[str, ErrorKind],
        session: requests.Session | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.context = context
        self.recorder = recorder
        self.error_table = error_table
        self._session = session
        self.last_http_status: int | None = None
        # Every form in which a credential of this endpoint may come back in an answer (see
        # `keep_secret`): the account's credentials, a user and password in the address, and each
        # secret header value sent so far (a bearer token). Longest first, so no part of one is
        # left behind by a shorter one replaced inside it.
        self._secret_forms: set[str] = set()
        self._secret_order: list[str] = []
        address = urlsplit(self.base_url)
        try:
            self._host = address.hostname or ""
        except ValueError:
            self._host = ""
        self.keep_secret(address.username, address.password)
        # Installed by the retry engine for the operation's run; None: unpaced (a test, a probe).
        self.pacer: Pacer | None = None

    def keep_secret(self, *values: object) -> None:
        """Never let these values reach a stored text (attempt log, error, durable record).

        The adapter's base class hands over its account's credentials: an insurer's error page
        may echo the request, Boğaziçi's password in the SOAP body, Çınar's `client_secret` in the
        token body. Values shorter than four characters are not scrubbed: they would take out
        ordinary words, and no insurer issues a credential that short."""
        for value in values:
            if value is None or isinstance(value, bool):
                continue
            text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            self._secret_forms.update(secret_forms(text))
        self._secret_order = sorted(self._secret_forms, key=len, reverse=True)

    def scrubbed(self, text: str, call: Call | None = None, *, limit: int) -> str:
        """`text` fit to keep: credentials out (the endpoint's, and `call`'s header values),
        identity numbers masked, then cut to `limit`."""
        return mask_and_cut(self._scrub(text[: limit + _SCRUB_WINDOW], call), limit)

    def _scrub(self, text: str, call: Call | None) -> str:
        if not text:
            return text
        forms = self._secret_order
        if call is not None and call.headers:
            forms = sorted({*forms, *_header_secret_forms(call)}, key=len, reverse=True)
        for form in forms:
            if form in text:
                text = text.replace(form, _SCRUBBED)
        # A text cut before it reached us (an adapter's own message) may end in a credential's head.
        for form in forms:
            for size in range(len(form) - 1, _MIN_SECRET_LENGTH - 1, -1):
                if text.endswith(form[:size]):
                    return text[:-size] + _SCRUBBED
        return text

    def _scrub_error(self, error: InsurerError, call: Call) -> None:
        """Every text of `error` scrubbed in place, before it is recorded or raised: the attempt
        row and every record built from the error (a quote row, a durable record's
        `error_message` and `raw_answer`) get only what is left."""
        error.message = self.scrubbed(error.message or "", call, limit=500)
        error.raw_sample = self.scrubbed(error.raw_sample or "", call, limit=MAX_RAW_SAMPLE)
        error.provider_code = self.scrubbed(error.provider_code or "", call, limit=64)
        error.args = (f"{error.kind} ({error.provider_code}): {error.message}".strip(),)

    def remaining(self) -> float | None:
        if self.context.deadline_at is None:
            return None
        return self.context.deadline_at - time.monotonic()

    def exchange(self, call: Call, read: Callable[[Reply], T]) -> T:
        """Send `call`, read the answer with `read`; return its result or raise `InsurerError`
        (or `ExchangeStopped`, inside `exchanges_stoppable` once the process is stopping)."""
        if _stoppable() and _watchdog.stopped:
            raise ExchangeStopped(sent=False)  # nothing sent, nothing recorded
        self._refuse_unless_allowed_host(call)
        remaining = self.remaining()
        if remaining is not None and remaining <= 0.05:
            # Nothing is sent, so nothing is recorded: the insurer never saw this call.
            raise InsurerError(ErrorKind.TIMEOUT, provider_code="DEADLINE_EXCEEDED", message="deadline reached")
        pacer = self.pacer
        if pacer is not None:
            self._pace(pacer, call, remaining)
            if _stoppable() and _watchdog.stopped:
                raise ExchangeStopped(sent=False)  # the stop came while waiting for the slot
            remaining = self.remaining()
            if remaining is not None and remaining <= 0.05:
                raise InsurerError(ErrorKind.TIMEOUT, provider_code="DEADLINE_EXCEEDED", message="deadline reached")
        read_timeout = (
            self.context.attempt_timeout if remaining is None else min(self.context.attempt_timeout, remaining)
        )
        db_connection_release()  # do not sit on a pooled database connection while the insurer thinks
        started_at = datetime.now(UTC)
        started = time.perf_counter()
        reply: Reply | None = None
        try:
            reply = self._send(call, read_timeout)
            result = read(reply)
        except ExchangeStopped as stopped:
            self._record(call, started_at, started, reply, stopped.error)
            raise
        except InsurerError as error:
            if error.provider_code not in _UNSENT:
                self._record(call, started_at, started, reply, error)
                if pacer is not None:
                    pacer.after_answer(call, throttled=error.is_throttle)
            else:
                self._scrub_error(error, call)
            raise
        except Refusal as refusal:
            refused = self._from_refusal(refusal, reply, call)
            self._record(call, started_at, started, reply, refused)
            if pacer is not None:
                pacer.after_answer(call, throttled=refused.is_throttle)
            raise refused from refusal
        except Exception as exc:
            unreadable = InsurerError(
                ErrorKind.UNCLASSIFIED,
                provider_code="MALFORMED_RESPONSE",
                # The exception may quote the answer, identity numbers and echoed credentials included.
                message=self.scrubbed(f"{type(exc).__name__}: {exc}", call, limit=300),
                http_status=reply.status if reply else None,
                ambiguous=True,
                raw_sample=self._sample(reply, call),
            )
            self._record(call, started_at, started, reply, unreadable)
            if pacer is not None:
                pacer.after_answer(call, throttled=False)
            raise unreadable from exc
        self._record(call, started_at, started, reply, None)
        if pacer is not None:
            pacer.after_answer(call, throttled=False)
        return result

    def _refuse_unless_allowed_host(self, call: Call) -> None:
        """The address saved for the insurer is checked where it is saved; this is the check of
        the call itself (an address saved before the allow-list, a setting changed since, an
        address given by hand to the probe): a host the platform may not send credentials to is
        a permanent refusal on our side, nothing sent, no attempt row."""
        problem = insurer_host_problem(self._host)
        if problem:
            raise self._host_refusal(call, problem)

    def _host_refusal(self, call: Call, problem: str) -> InsurerError:
        ctx = self.context
        logger.error(
            "insurer=%s op=%s call=%s account=%s refused locally, host not allowed: %s (not sent)",
            ctx.insurer_code,
            ctx.operation,
            call.name,
            ctx.account_key,
            problem,
        )
        return InsurerError(ErrorKind.NOT_ALLOWED, provider_code=HOST_NOT_ALLOWED, message=problem)

    def _pace(self, pacer: Pacer, call: Call, remaining: float | None) -> None:
        """Take the call's send slot. One beyond the deadline (less the least time a call needs)
        is not taken and the call not sent: refused here and logged, never an attempt row (the send
        rate counts it for on-call, per insurer, in the shared state)."""
        try:
            pacer.before_send(call, remaining=remaining)
        except InsurerError as error:
            if error.provider_code == LOCAL_RATE_LIMIT:
                ctx = self.context
                logger.warning(
                    "insurer=%s op=%s call=%s attempt=%d account=%s refused locally: next send slot in %.2fs, "
                    "beyond the deadline (not sent)",
                    ctx.insurer_code,
                    ctx.operation,
                    call.name,
                    ctx.attempt_no,
                    ctx.account_key,
                    error.wait.seconds if error.wait else -1.0,
                )
            raise

    def _send(self, call: Call, read_timeout: float) -> Reply:
        # A token sent once may be echoed in a later answer, to this call or another.
        sent = _header_secret_forms(call)
        if not sent <= self._secret_forms:
            self._secret_forms |= sent
            self._secret_order = sorted(self._secret_forms, key=len, reverse=True)
        session = self._session or _session()
        try:
            prepared = _prepared(session, call, self.base_url + call.path)
        except (requests.exceptions.RequestException, ValueError) as exc:
            # Refused before a byte left (a header with a line break, a bad URL): the insurer
            # never saw it, so no attempt is recorded and nothing can have taken effect.
            raise InsurerError(
                ErrorKind.UNCLASSIFIED, provider_code=NOT_SENT, message=self._not_sent_message(exc, call)
            ) from exc
        try:
            with _DeadlineWatch(read_timeout, stoppable=_stoppable()):
                response = session.send(
                    prepared,
                    timeout=(settings.INSURER_CONNECT_TIMEOUT, max(read_timeout, 0.05)),
                    allow_redirects=False,
                    stream=True,
                )
                try:
                    content = _read_capped(response, call.max_bytes)
                finally:
                    response.close()
        except _AddressRefused as refused:
            # The name resolved to an address the platform may not send to: closed before a byte left.
            raise self._host_refusal(call, str(refused)) from refused
        except requests.exceptions.ConnectTimeout as exc:
            raise InsurerError(
                ErrorKind.TIMEOUT, provider_code="CONNECT_TIMEOUT", message=self.scrubbed(str(exc), call, limit=300)
            ) from exc
        except requests.exceptions.ReadTimeout as exc:
            # The request went out; the insurer may have acted on it.
            raise InsurerError(
                ErrorKind.TIMEOUT,
                provider_code="READ_TIMEOUT",
                message=self.scrubbed(str(exc), call, limit=300),
                ambiguous=True,
            ) from exc
        except requests.exceptions.ConnectionError as exc:
            if _never_connected(exc):
                raise InsurerError(
                    ErrorKind.CONNECTION,
                    provider_code="CONNECT_FAILED",
                    message=self.scrubbed(str(exc), call, limit=300),
                ) from exc
            raise InsurerError(
                ErrorKind.CONNECTION,
                provider_code="CONNECTION_RESET",
                message=self.scrubbed(str(exc), call, limit=300),
                ambiguous=True,
            ) from exc
        except requests.exceptions.RequestException as exc:
            raise InsurerError(
                ErrorKind.CONNECTION,
                provider_code="INCOMPLETE_RESPONSE",
                message=self.scrubbed(str(exc), call, limit=300),
                ambiguous=True,
            ) from exc
        return Reply(status=response.status_code, headers=response.headers, content=content)

    def _not_sent_message(self, exc: BaseException, call: Call) -> str:
        """`requests` quotes the offending header value in an InvalidHeader (a credential, with
        its stray line break); we name the header instead and never use its text."""
        if isinstance(exc, requests.exceptions.InvalidHeader):
            for name, value in (call.headers or {}).items():
                try:
                    requests.utils.check_header_validity((name, value))
                except requests.exceptions.InvalidHeader:
                    # Only a header name we wrote ourselves is named, and never its value.
                    shown = name if isinstance(name, str) and name.isprintable() and len(name) <= 64 else "?"
                    return f"InvalidHeader: header {shown!r} has an invalid name or value"
            return "InvalidHeader: a header has an invalid name or value"
        return self.scrubbed(f"{type(exc).__name__}: {exc}", call, limit=300)

    def _sample(self, reply: Reply | None, call: Call) -> str:
        return reply.sample(lambda text: self._scrub(text, call)) if reply else ""

    def _from_refusal(self, refusal: Refusal, reply: Reply | None, call: Call) -> InsurerError:
        kind = classify(self.context.insurer_code, refusal.code, table=self.error_table, fallback=refusal.kind)
        status = reply.status if reply else None
        if refusal.ambiguous is not None:
            ambiguous = refusal.ambiguous
        else:
            # A server-side failure or an answer we could not read may hide a done deed.
            ambiguous = kind.error_class is ErrorClass.UNKNOWN or (status is not None and status >= 500)
        return InsurerError(
            kind,
            provider_code=refusal.code,
            message=self.scrubbed(refusal.message, call, limit=500),
            http_status=status,
            field=refusal.field,
            wait=refusal.wait,
            ambiguous=ambiguous and kind is not ErrorKind.THROTTLED,
            raw_sample=self._sample(reply, call),
            # Only a refusal the adapter read as the insurer's verdict, and still a refusal after
            # the admin's mapping: a code remapped to a retryable kind proves nothing.
            settles_issuance=refusal.settles_issuance and kind.error_class is ErrorClass.PERMANENT,
        )

    def _record(
        self,
        call: Call,
        started_at: datetime,
        started: float,
        reply: Reply | None,
        error: InsurerError | None,
    ) -> None:
        ctx = self.context
        self.last_http_status = reply.status if reply else None
        if error is not None:
            self._scrub_error(error, call)
        self.recorder.record(
            AttemptRecord(
                insurer_code=ctx.insurer_code,
                account_key=ctx.account_key,
                operation=ctx.operation,
                product=ctx.product,
                call=call.name[:16],  # the column's width: a longer helper name must not lose the row
                attempt_no=ctx.attempt_no,
                reference=ctx.reference,
                ok=error is None,
                http_status=reply.status if reply else (error.http_status if error else None),
                provider_code=error.provider_code if error else "",
                error_class=error.error_class.value if error else "",
                error_kind=error.kind.value if error else "",
                ambiguous=bool(error and error.ambiguous),
                message=error.message if error else "",
                raw_sample=(error.raw_sample if error else ""),
                latency_ms=round((time.perf_counter() - started) * 1000, 2),
                started_at=started_at,
                finished_at=datetime.now(UTC),
            )
        )


# Headers that carry no secret: their values may be named in a message.
_PLAIN_HEADERS = frozenset({"accept", "accept-encoding", "content-type", "content-length", "soapaction", "user-agent"})
# What stands where a credential was.
_SCRUBBED = "***"
_MIN_SECRET_LENGTH = 4
# How far past a cut a text is scrubbed, so a credential straddling the cut is seen whole.
_SCRUB_WINDOW = 8192


def secret_forms(value: str) -> set[str]:
    """Every way `value` may come back in an answer that echoes the request: as sent, and as
    JSON (ASCII or not), XML and HTML (quotes escaped or not), Python's repr and URL encoding
    (either case of hex) write it. Only forms of four characters or more."""
    value = value.strip()
    percent = quote(value, safe="")
    forms = {
        value,
        repr(value)[1:-1],
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        xml_escape(value),
        xml_escape(value, {'"': "&quot;", "'": "&apos;"}),
        html.escape(value),
        html.escape(value).replace("&#x27;", "&#39;"),
        percent,
        percent.lower() if percent != value else value,
        quote(value),
        quote_plus(value, safe=""),
    }
    return {form for form in forms if len(form) >= _MIN_SECRET_LENGTH}


def _header_secret_forms(call: Call) -> set[str]:
    """The forms of every header value of `call` but the plain ones: as sent, as Python repr'd
    it, and each word of it ("Bearer <token>", "Basic <base64>")."""
    found: set[str] = set()
    for name, value in (call.headers or {}).items():
        if str(name).lower() in _PLAIN_HEADERS or value is None:
            continue
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        for form in (text, repr(value), *text.split()):
            if len(form.strip()) >= _MIN_SECRET_LENGTH:
                found |= secret_forms(form.strip())
    return found


def _read_capped(response: requests.Response, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(chunk_size=65536):
        size += len(chunk)
        if size > limit:
            raise InsurerError(
                ErrorKind.UNCLASSIFIED,
                provider_code="RESPONSE_TOO_LARGE",
                message=f"answer larger than {limit} bytes",
                http_status=response.status_code,
                ambiguous=True,
            )
        chunks.append(chunk)
    return b"".join(chunks)


class _DeadlineWatch:
    """Ends an exchange whose answer is still arriving `read_timeout` after the request went out.

    `requests`' read timeout bounds each socket read, not the answer: an insurer sending a
    byte every few seconds would hold the worker thread without limit. The connection arms
    the watch when it starts waiting for the answer (`_WatchedConnection`); at the deadline
    the watchdog shuts the socket down, the blocked read sees the end of the stream, and
    leaving the block turns whatever `requests` made of that into READ_TIMEOUT. A session
    passed to `Channel` by a test has no such connections: only the per-read timeout holds.

    A `stoppable` exchange is also cut, the same way, when the process stops (`exchanges_stop`),
    and leaving the block then raises `ExchangeStopped`.
    """

    __slots__ = ("cut", "done", "fired", "read_timeout", "sock", "stoppable")

    def __init__(self, read_timeout: float, *, stoppable: bool = False) -> None:
        self.read_timeout = read_timeout
        self.stoppable = stoppable
        self.sock: socket.socket | None = None
        self.done = False
        self.fired = False
        self.cut = False

    def __enter__(self) -> _DeadlineWatch:
        _watching.current = self
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        _watching.current = None
        fired = _watchdog.disarm(self)
        if self.cut:
            # Whatever arrived before the cut is not trusted: the answer may be incomplete.
            raise ExchangeStopped(sent=True) from exc
        if not fired:
            return
        if isinstance(exc, InsurerError):
            return  # refused for its own reason (too large) before the cut mattered
        # Also when no error surfaced: a body delimited by the connection's close ends
        # cleanly, and cut short, at the shutdown.
        raise InsurerError(
            ErrorKind.TIMEOUT,
            provider_code="READ_TIMEOUT",
            message=f"answer still arriving at the deadline ({self.read_timeout:.2f} s after the request went out)",
            ambiguous=True,
        ) from exc


_watching = threading.local()
_stoppable_scope = threading.local()


def _stoppable() -> bool:
    return getattr(_stoppable_scope, "depth", 0) > 0


@contextmanager
def exchanges_stoppable() -> Iterator[None]:
    """Exchanges this thread makes inside the block are cut short when the process stops.

    Only work that can be handed back whole opts in (a durable record's try: see
    `work.services.work_try`); a quote the agent is waiting for is left to finish.
    """
    _stoppable_scope.depth = getattr(_stoppable_scope, "depth", 0) + 1
    try:
        yield
    finally:
        _stoppable_scope.depth -= 1


def exchanges_stop() -> None:
    """The process is stopping: cut every stoppable exchange in flight, refuse new ones.

    For good (a stopping process does not start again). Called by the watch on the worker's
    cluster (`work.services.work_stop_event`).
    """
    _watchdog.stop()


class _Watchdog:
    """One thread for the process that shuts down sockets whose exchange outlived its deadline,
    or, once the process is stopping, whose exchange is stoppable.

    Not a thread or timer per call: the channel is the hot path. Arming is a heap push under a
    lock; a finished exchange is only marked done and dropped when it reaches the top.
    """

    def __init__(self) -> None:
        self._reset()
        # A forked worker inherits neither the thread nor a lock it may have held.
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._wake = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, _DeadlineWatch]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self.stopped = False

    def stop(self) -> None:
        with self._wake:
            self.stopped = True
            for _, _, watch in self._heap:
                if watch.stoppable and not watch.done:
                    _cut(watch)

    def arm(self, watch: _DeadlineWatch, sock: socket.socket) -> None:
        deadline = time.monotonic() + watch.read_timeout
        with self._wake:
            if watch.done:
                return
            watch.sock = sock
            if watch.stoppable and self.stopped:
                # Sent while the stop was being noticed: cut now rather than wait for the answer.
                _cut(watch)
                return
            heapq.heappush(self._heap, (deadline, next(self._order), watch))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="insurer-deadline-watchdog", daemon=True)
                self._thread.start()
            elif self._heap[0][2] is watch:
                self._wake.notify()

    def disarm(self, watch: _DeadlineWatch) -> bool:
        """Stop watching; True when the socket was already shut down at the deadline."""
        with self._wake:
            watch.done = True
            watch.sock = None
            return watch.fired

    def _run(self) -> None:
        wake = self._wake
        heap = self._heap
        with wake:
            while True:
                while heap and heap[0][2].done:
                    heapq.heappop(heap)
                if not heap:
                    wake.wait()
                    continue
                left = heap[0][0] - time.monotonic()
                if left > 0:
                    wake.wait(left)
                    continue
                watch = heapq.heappop(heap)[2]
                watch.fired = True
                if watch.sock is None:  # never: `arm` sets the socket before the heap holds the watch
                    continue
                try:
                    # socket.socket's own shutdown, also under TLS: SSLSocket.shutdown would
                    # drop its SSL object under the reading thread.
                    socket.socket.shutdown(watch.sock, socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed: nothing is reading any more


def _cut(watch: _DeadlineWatch) -> None:
    """Shut down the watched socket for the stop (the watchdog's lock is held)."""
    watch.cut = True
    if watch.sock is None:  # never: only armed watches are cut, and `arm` set the socket
        return
    try:
        socket.socket.shutdown(watch.sock, socket.SHUT_RDWR)  # as at the deadline, also under TLS
    except OSError:
        pass  # already closed: nothing is reading any more


_watchdog = _Watchdog()


class _AddressRefused(Exception):
    """The connection reached an address the platform may not send credentials to. Not an
    OSError on purpose: urllib3 and requests pass it through unwrapped, to the channel."""


if TYPE_CHECKING:
    from urllib3.response import HTTPResponse

    _ConnectionBase = HTTPConnection  # what the mixin below is mixed into, for its super() calls
else:
    _ConnectionBase = object


class _WatchedConnection(_ConnectionBase):
    """Arms the exchange's deadline watch once the request is out and the answer is awaited, and
    refuses a connection whose address is not allowed before anything is sent on it."""

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        try:
            peer = sock.getpeername()[0]
        except (OSError, IndexError):
            return sock
        # The allow-list holds names; the address the name resolved to must be public as well,
        # or a name (or a rebinding DNS answer) would lead inside the network.
        problem = insurer_ip_problem(str(peer))
        if problem:
            sock.close()
            raise _AddressRefused(problem)
        return sock

    # urllib3 overrides http.client's getresponse with its own response type, and ignores the same error.
    def getresponse(self) -> HTTPResponse:  # type: ignore[override]
        watch = getattr(_watching, "current", None)
        # Not through a TLS-in-TLS proxy tunnel (urllib3's SSLTransport): the channel uses none.
        if watch is not None and isinstance(self.sock, socket.socket):
            _watchdog.arm(watch, self.sock)
        return super().getresponse()


class _WatchedHTTPConnection(_WatchedConnection, HTTPConnection):
    pass


class _WatchedHTTPSConnection(_WatchedConnection, HTTPSConnection):
    pass


class _WatchedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_WATCHED_POOLS = {"http": _WatchedHTTPConnectionPool, "https": _WatchedHTTPSConnectionPool}


def _never_connected(exc: BaseException) -> bool:
    """True when the failure happened before a byte of the request left us."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, NewConnectionError | ConnectionRefusedError):
            return True
        reason = getattr(current, "reason", None)
        if isinstance(reason, BaseException) and id(reason) not in seen:
            current = reason
            continue
        nxt = current.__cause__ or current.__context__
        current = (
            nxt
            if nxt is not None
            else (current.args[0] if current.args and isinstance(current.args[0], BaseException) else None)
        )
    return False
