"""A fake insurer at the transport layer: `requests` talks to it as to a socket.

`FakeInsurerTransport` is a real `requests.adapters.HTTPAdapter` whose connection pool hands
back a urllib3 response built from whatever a test (or hypothesis) decided the insurer says:
status, headers and body bytes. Everything above the socket is the production code path:
`requests`' exception mapping and content decoding, `Channel.exchange`, the adapter's reading.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, TypeVar

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPResponse
from urllib3.util import Url

from integrations.adapters.base import InsurerAdapter
from integrations.adapters.registry import adapter_class
from integrations.attempts.recording import BufferedRecorder
from integrations.calling.channel import Call, CallContext, Channel, Reply
from sandbox import DEFAULT_ACCOUNTS

BASE_URL = "http://insurer.test"
T = TypeVar("T")


@dataclass(frozen=True)
class Answer:
    """What the insurer says on the wire."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass
class Exchange:
    request: requests.PreparedRequest
    answer: Answer


class _FakePool:
    """Stands where urllib3's connection pool would: `urlopen` answers instead of a socket."""

    def __init__(self, transport: FakeInsurerTransport) -> None:
        self.transport = transport
        self.cert_reqs = None
        self.ca_certs = None

    def urlopen(self, method: str, url: str, body: Any = None, headers: Any = None, **_: Any) -> HTTPResponse:
        request = self.transport.current_request
        assert request is not None  # `send` set it before the pool was asked for a connection
        try:
            answer = self.transport.answer_for(request)
        except Exception as exc:
            # A fault of the test itself, not of the code under test: kept so the test re-raises it
            # instead of it passing for an insurer's garbage inside the channel.
            self.transport.harness_error = exc
            raise
        self.transport.exchanges.append(Exchange(request, answer))
        # Built the way urllib3 builds a real one (not preloaded, not yet decoded), so a lying
        # Content-Length or Content-Encoding fails where it would fail on a real connection.
        return HTTPResponse(
            body=io.BytesIO(answer.body),
            headers=dict(answer.headers),
            status=answer.status,
            reason="Fake",
            preload_content=False,
            decode_content=False,
            enforce_content_length=True,
            request_method=method,
            request_url=url,
        )


class FakeInsurerTransport(HTTPAdapter):
    """An `HTTPAdapter` whose every request is answered by `answer_for(request)`."""

    def __init__(self, answer_for: Callable[[requests.PreparedRequest], Answer]) -> None:
        super().__init__(max_retries=0)
        self.answer_for = answer_for
        self.exchanges: list[Exchange] = []
        self.current_request: requests.PreparedRequest | None = None
        self.harness_error: Exception | None = None

    def raise_harness_error(self) -> None:
        if self.harness_error is not None:
            raise self.harness_error

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        self.current_request = request
        return super().send(request, *args, **kwargs)

    def get_connection_with_tls_context(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> Any:
        return _FakePool(self)

    def request_url(self, request: requests.PreparedRequest, proxies: Any) -> str:
        return Url(path=request.path_url).url


def fake_session(transport: FakeInsurerTransport) -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.mount("http://", transport)
    session.mount("https://", transport)
    return session


class VirtualClock:
    """Time that moves only when the code under test exchanges (a fixed step) or sleeps.

    How many times an adapter polls before its deadline then depends on the answers alone, never
    on how busy the machine is: hypothesis must see the same draws for the same choices, and a
    poll's pause costs no wall-clock time.
    """

    def __init__(self, deadline_seconds: float, *, exchange_seconds: float = 0.01) -> None:
        self.now = 0.0
        self.deadline_at = deadline_seconds
        self.exchange_seconds = exchange_seconds

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)

    def remaining(self) -> float:
        return self.deadline_at - self.now


class _ClockedChannel(Channel):
    """A real `Channel` whose deadline is read from a `VirtualClock`."""

    def __init__(self, *, clock: VirtualClock, **channel: Any) -> None:
        super().__init__(**channel)
        self.clock = clock

    def remaining(self) -> float | None:
        return self.clock.remaining()

    def exchange(self, call: Call, read: Callable[[Reply], T]) -> T:
        self.clock.sleep(self.clock.exchange_seconds)
        return super().exchange(call, read)


@contextmanager
def adapter_sleeps_on(clock: VirtualClock, adapter: InsurerAdapter) -> Iterator[None]:
    """The adapter's module sleeps and reads the time on `clock` while the block runs."""
    module = sys.modules[type(adapter).__module__]
    if getattr(module, "time", None) is not time:
        yield
        return
    module.time = SimpleNamespace(sleep=clock.sleep, monotonic=clock.monotonic)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        module.time = time  # type: ignore[attr-defined]


def adapter_over(
    insurer_code: str,
    transport: FakeInsurerTransport,
    *,
    operation: str = "trafik_quote",
    deadline_seconds: float | None = None,
    clock: VirtualClock | None = None,
    recorder: BufferedRecorder | None = None,
) -> tuple[InsurerAdapter, BufferedRecorder]:
    """The real adapter on a real `Channel`, talking to the fake insurer; returns it and its recorder.

    With `clock`, the deadline is the clock's (see `VirtualClock`) and `deadline_seconds` is unused.
    """
    cls = adapter_class(insurer_code)
    recorder = recorder if recorder is not None else BufferedRecorder()
    context = CallContext(
        insurer_code=insurer_code,
        operation=operation,
        account_key=f"{insurer_code}:FUZZ",
        reference="IH-FUZZ",
        deadline_at=None if deadline_seconds is None else time.monotonic() + deadline_seconds,
        attempt_timeout=5.0,
    )
    wiring: dict[str, Any] = dict(
        base_url=BASE_URL,
        context=context,
        recorder=recorder,
        error_table=cls.error_table,
        session=fake_session(transport),
    )
    channel = Channel(**wiring) if clock is None else _ClockedChannel(clock=clock, **wiring)
    credentials = DEFAULT_ACCOUNTS[insurer_code][0]["credentials"]
    return cls(channel=channel, credentials=credentials), recorder
