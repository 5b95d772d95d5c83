"""An insurer that trickles its answer is cut at the exchange's deadline, not per socket read.

The insurer here is a real loopback socket that writes its answer in timed pieces, so the whole
path under test is production's: the thread's session, urllib3's connection, the watchdog.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence

import pytest

from integrations.answers.taxonomy import ErrorKind, InsurerError
from integrations.attempts.recording import BufferedRecorder
from integrations.calling.channel import Call, CallContext, Channel, Reply

# (seconds to wait first, bytes to write) — the answer as the insurer puts it on the wire.
Script = Sequence[tuple[float, bytes]]

BODY = json.dumps({"premium": "1234.50", "currency": "TRY", "note": "x" * 40}).encode()


def _status_and_headers(extra: str) -> bytes:
    # Connection: close, as the server hangs up after each answer: a kept-alive socket it had
    # just closed would fail the next test's request for a reason not under test.
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n{extra}\r\n".encode()


def _trickled(data: bytes, every: float) -> list[tuple[float, bytes]]:
    return [(every, data[i : i + 1]) for i in range(len(data))]


def _chunked(body: bytes) -> bytes:
    return f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"


class TrickleServer:
    """Answers each request on loopback by playing the next script, then closes the connection."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.scripts: list[Script] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            script = self.scripts.pop(0) if self.scripts else [(0, b"HTTP/1.1 500 No Script\r\n\r\n")]
            threading.Thread(target=self._play, args=(conn, script), daemon=True).start()

    @staticmethod
    def _play(conn: socket.socket, script: Script) -> None:
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                piece = conn.recv(65536)
                if not piece:
                    return
                request += piece
            try:
                for pause, data in script:
                    time.sleep(pause)
                    conn.sendall(data)
            except OSError:
                return  # the client cut us off: what the deadline is for

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def insurer() -> Iterator[TrickleServer]:
    server = TrickleServer()
    yield server
    server.close()


def _channel(insurer: TrickleServer, recorder: BufferedRecorder, attempt_timeout: float = 1.0) -> Channel:
    return Channel(
        base_url=insurer.base_url,
        context=CallContext(insurer_code="cinar", operation="trafik_quote", attempt_timeout=attempt_timeout),
        recorder=recorder,
        error_table={},
    )


def _read_json(reply: Reply) -> dict:
    return json.loads(reply.content)


def _assert_cut_at_deadline(insurer: TrickleServer) -> None:
    recorder = BufferedRecorder()
    began = time.monotonic()
    with pytest.raises(InsurerError) as caught:
        _channel(insurer, recorder).exchange(Call("POST", "/quote", json={}), _read_json)
    elapsed = time.monotonic() - began

    assert elapsed < 2.5, elapsed
    error = caught.value
    assert (error.kind, error.provider_code, error.ambiguous) == (ErrorKind.TIMEOUT, "READ_TIMEOUT", True)
    assert "still arriving at the deadline" in error.message
    assert [(r.provider_code, r.ambiguous, r.ok) for r in recorder.records] == [("READ_TIMEOUT", True, False)]


def test_body_trickled_with_content_length_is_cut_at_the_deadline(insurer):
    """A byte every 0.3 s of a sized body ends the exchange at the 1 s attempt timeout."""
    insurer.scripts.append([(0, _status_and_headers(f"Content-Length: {len(BODY)}\r\n")), *_trickled(BODY, every=0.3)])
    _assert_cut_at_deadline(insurer)


def test_chunked_body_trickled_is_cut_at_the_deadline(insurer):
    """A chunked body trickled byte by byte ends the exchange at the attempt timeout."""
    insurer.scripts.append(
        [(0, _status_and_headers("Transfer-Encoding: chunked\r\n")), *_trickled(_chunked(BODY), every=0.3)]
    )
    _assert_cut_at_deadline(insurer)


def test_headers_trickled_are_cut_at_the_deadline(insurer):
    """Headers that never finish arriving end the exchange at the attempt timeout too."""
    head = _status_and_headers(f"Content-Length: {len(BODY)}\r\nX-Padding: {'p' * 60}\r\n")
    insurer.scripts.append([(0, head[:17]), *_trickled(head[17:] + BODY, every=0.3)])
    _assert_cut_at_deadline(insurer)


def test_fast_answer_is_read(insurer):
    """An answer sent at once is read whole, and the next call on the thread's session works after a cut."""
    insurer.scripts.append([(0, _status_and_headers(f"Content-Length: {len(BODY)}\r\n")), *_trickled(BODY, 0.3)])
    insurer.scripts.append([(0, _status_and_headers(f"Content-Length: {len(BODY)}\r\n") + BODY)])
    with pytest.raises(InsurerError):
        _channel(insurer, BufferedRecorder()).exchange(Call("POST", "/quote", json={}), _read_json)

    recorder = BufferedRecorder()
    answer = _channel(insurer, recorder).exchange(Call("POST", "/quote", json={}), _read_json)

    assert answer["premium"] == "1234.50"
    assert [r.ok for r in recorder.records] == [True]


def test_answer_in_pieces_within_the_timeout_is_read(insurer):
    """A body arriving in a few pieces before the deadline is whole, sized or chunked."""
    third = len(BODY) // 3
    pieces = [(0.2, BODY[:third]), (0.2, BODY[third : 2 * third]), (0.2, BODY[2 * third :])]
    insurer.scripts.append([(0.1, _status_and_headers(f"Content-Length: {len(BODY)}\r\n")), *pieces])
    chunked = _chunked(BODY)
    insurer.scripts.append(
        [(0.1, _status_and_headers("Transfer-Encoding: chunked\r\n")), (0.2, chunked[:20]), (0.2, chunked[20:])]
    )

    for _ in range(2):
        recorder = BufferedRecorder()
        answer = _channel(insurer, recorder).exchange(Call("POST", "/quote", json={}), _read_json)
        assert answer["currency"] == "TRY"
        assert [r.ok for r in recorder.records] == [True]


def test_gzip_answer_is_still_decoded(insurer):
    """Content-Encoding decoding is untouched by the deadline watch."""
    packed = gzip.compress(BODY)
    head = _status_and_headers(f"Content-Encoding: gzip\r\nContent-Length: {len(packed)}\r\n")
    insurer.scripts.append([(0, head), (0.2, packed[:10]), (0.2, packed[10:])])

    answer = _channel(insurer, BufferedRecorder()).exchange(Call("POST", "/quote", json={}), _read_json)

    assert answer["note"] == "x" * 40
