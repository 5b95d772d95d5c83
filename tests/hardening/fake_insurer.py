"""A fake insurer at the transport layer: `requests` talks to it as to a socket.

`FakeInsurerTransport` is a real `requests.adapters.HTTPAdapter` whose connection pool hands
back a urllib3 response built from whatever a test (or hypothesis) decided the insurer says:
status, headers and body bytes. Everything above the socket is the production code path:
`requests`' exception mapping and content decoding, `Channel.exchange`, the adapter's reading.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPResponse
from urllib3.util import Url

from integrations.adapters.base import InsurerAdapter
from integrations.adapters.registry import adapter_class
from integrations.attempts.recording import BufferedRecorder
from integrations.calling.channel import CallContext, Channel
from sandbox import DEFAULT_ACCOUNTS

BASE_URL = "http://insurer.test"


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


def adapter_over(
    insurer_code: str,
    transport: FakeInsurerTransport,
    *,
    operation: str = "trafik_quote",
    deadline_seconds: float | None = None,
    recorder: BufferedRecorder | None = None,
) -> tuple[InsurerAdapter, BufferedRecorder]:
    """The real adapter on a real `Channel`, talking to the fake insurer; returns it and its recorder."""
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
    channel = Channel(
        base_url=BASE_URL,
        context=context,
        recorder=recorder,
        error_table=cls.error_table,
        session=fake_session(transport),
    )
    credentials = DEFAULT_ACCOUNTS[insurer_code][0]["credentials"]
    return cls(channel=channel, credentials=credentials), recorder
