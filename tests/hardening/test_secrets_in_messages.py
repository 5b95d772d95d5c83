"""Credentials never reach an error message (which agents read on the desk) or an Endpoint's repr."""

from __future__ import annotations

import pytest
import requests

from integrations.answers.taxonomy import InsurerError
from integrations.attempts.recording import BufferedRecorder
from integrations.calling.calls import Endpoint
from integrations.calling.channel import NOT_SENT, Call, CallContext, Channel

API_KEY = "ak-live-7f3c9e1d5b"
BEARER = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.sig"


def channel(session: requests.Session | None = None) -> tuple[Channel, BufferedRecorder]:
    recorder = BufferedRecorder()
    ctx = CallContext(insurer_code="anka", operation="trafik_quote", attempt_timeout=1.0)
    return Channel(
        base_url="http://127.0.0.1:9", context=ctx, recorder=recorder, error_table={}, session=session
    ), recorder


@pytest.mark.parametrize("bad", [API_KEY + "\n", API_KEY + "\r\nX-Injected: 1", " " + API_KEY])
def test_invalid_header_names_the_header_not_its_value(bad):
    """A credential with a line break is refused before sending; the message says which header."""
    chan, recorder = channel()
    call = Call("POST", "/v1/quotes", json={}, headers={"Content-Type": "application/json", "X-Api-Key": bad})
    with pytest.raises(InsurerError) as caught:
        chan.exchange(call, lambda reply: reply)
    error = caught.value
    assert error.provider_code == NOT_SENT
    assert "X-Api-Key" in error.message
    assert API_KEY not in error.message and API_KEY[:8] not in error.message and API_KEY not in str(error)
    assert recorder.records == []  # never sent, never recorded


def test_non_text_header_value_is_not_quoted_either():
    """`requests` quotes a non-text header value in full; we name the header only."""
    chan, _ = channel()
    call = Call("GET", "/v1/x", headers={"Authorization": ("Bearer", BEARER)})
    with pytest.raises(InsurerError) as caught:
        chan.exchange(call, lambda reply: reply)
    assert "Authorization" in caught.value.message and BEARER not in caught.value.message


class _FailingSession(requests.Session):
    """Prepares like requests, then fails the send quoting what it was given, as proxies and
    urllib3 errors may."""

    def __init__(self, exc_type: type[Exception]) -> None:
        super().__init__()
        self.exc_type = exc_type

    def send(self, request, **kwargs):
        raise self.exc_type(f"failed with headers {dict(request.headers)!r} auth={request.headers['Authorization']}")


@pytest.mark.parametrize(
    "exc_type",
    [requests.exceptions.ConnectionError, requests.exceptions.ReadTimeout, requests.exceptions.ChunkedEncodingError],
)
def test_transport_error_messages_have_the_calls_credentials_masked(exc_type):
    """Whatever a transport error quotes, the call's header values are masked out of the message."""
    chan, recorder = channel(_FailingSession(exc_type))
    call = Call("POST", "/api/v2/x", json={}, headers={"Authorization": f"Bearer {BEARER}", "X-Api-Key": API_KEY})
    with pytest.raises(InsurerError) as caught:
        chan.exchange(call, lambda reply: reply)
    for text in (caught.value.message, str(caught.value), *(r.message for r in recorder.records)):
        assert BEARER not in text and API_KEY not in text, text
    assert "***" in caught.value.message


def test_endpoint_repr_and_str_leave_credentials_out():
    """An Endpoint in a traceback or log names its credential fields, never their values."""
    endpoint = Endpoint(
        insurer_code="anka",
        base_url="https://svc-user:svc-pass@api.anka.example/v1",
        credentials={"api_key": API_KEY, "client_secret": "cs-123456"},
        account_key="anka:ACN-1",
    )
    for shown in (repr(endpoint), str(endpoint), f"{endpoint}", repr([endpoint])):
        assert API_KEY not in shown and "cs-123456" not in shown and "svc-pass" not in shown
        assert "api_key" in shown and "api.anka.example" in shown and "anka:ACN-1" in shown
    assert endpoint.credentials["api_key"] == API_KEY  # still there for the call itself
