"""A stopping process cuts its stoppable insurer exchanges short instead of waiting for the answer.

The insurer is a real loopback socket that answers late, and the exchange goes through the
thread's own session and the watchdog, as in production.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from integrations.attempts.recording import BufferedRecorder
from integrations.calling import channel
from integrations.calling.channel import WORKER_STOPPED, Call, ExchangeStopped, exchanges_stop, exchanges_stoppable
from tests.integrations.calling.test_channel_deadline import (
    BODY,
    TrickleServer,
    _channel,
    _read_json,
    _status_and_headers,
)

# The insurer's answer comes this long after the request: far past any cut.
SLOW_ANSWER_SECONDS = 3.0


@pytest.fixture
def insurer() -> Iterator[TrickleServer]:
    server = TrickleServer()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def running_process(monkeypatch) -> None:
    """The stop is for good in a process: undo it after each test (monkeypatch restores False)."""
    monkeypatch.setattr(channel._watchdog, "stopped", False)


def _slow_answer(insurer: TrickleServer, seconds: float = SLOW_ANSWER_SECONDS) -> None:
    insurer.scripts.append([(seconds, _status_and_headers(f"Content-Length: {len(BODY)}\r\n") + BODY)])


def _exchange_in_thread(insurer: TrickleServer, recorder: BufferedRecorder, *, stoppable: bool) -> dict:
    outcome: dict = {}

    def run() -> None:
        began = time.monotonic()
        try:
            if stoppable:
                with exchanges_stoppable():
                    outcome["result"] = _channel(insurer, recorder, 10.0).exchange(Call("POST", "/x"), _read_json)
            else:
                outcome["result"] = _channel(insurer, recorder, 10.0).exchange(Call("POST", "/x"), _read_json)
        except Exception as exc:
            outcome["error"] = exc
        outcome["ended"] = time.monotonic()
        outcome["began"] = began

    outcome["thread"] = threading.Thread(target=run)
    outcome["thread"].start()
    return outcome


def test_a_stoppable_exchange_is_cut_at_the_stop_and_recorded_as_ours(insurer):
    """Waiting on a slow answer, the exchange ends within a moment of the stop: ExchangeStopped
    (sent, so the insurer may have acted), and an attempt row that says WORKER_STOPPED."""
    _slow_answer(insurer)
    recorder = BufferedRecorder()
    outcome = _exchange_in_thread(insurer, recorder, stoppable=True)
    time.sleep(0.5)  # the request is out; the answer is seconds away
    stopped_at = time.monotonic()
    exchanges_stop()
    outcome["thread"].join(timeout=5)

    assert outcome["ended"] - stopped_at < 0.5
    error = outcome["error"]
    assert isinstance(error, ExchangeStopped) and error.sent
    assert [(r.provider_code, r.ambiguous, r.ok) for r in recorder.records] == [(WORKER_STOPPED, True, False)]


def test_an_exchange_outside_the_stoppable_scope_gets_its_answer(insurer):
    """A call somebody waits on (a quote at the desk) is not durable work: the stop lets it finish."""
    _slow_answer(insurer, 1.0)
    outcome = _exchange_in_thread(insurer, BufferedRecorder(), stoppable=False)
    time.sleep(0.3)
    exchanges_stop()
    outcome["thread"].join(timeout=5)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["result"]["premium"] == "1234.50"


def test_after_the_stop_a_stoppable_exchange_is_not_sent(insurer):
    """Once stopping, a stoppable exchange is refused before a byte leaves: nothing to record."""
    _slow_answer(insurer)
    exchanges_stop()
    recorder = BufferedRecorder()
    with exchanges_stoppable(), pytest.raises(ExchangeStopped) as caught:
        _channel(insurer, recorder).exchange(Call("POST", "/x"), _read_json)
    assert caught.value.sent is False
    assert recorder.records == []
    assert len(insurer.scripts) == 1  # no connection came to take the answer
