"""A loopback stand-in for Netgsm's `sms/send/get`, as Netgsm publishes it: a real HTTP server
on 127.0.0.1 the Netgsm backend talks to over real sockets.

It checks what Netgsm checks and answers as Netgsm does (plain text, HTTP 200 for refusals
too): the subscriber code and password ("30"), the approved sender name ("40"), the number
and the other parameters ("70"), the text ("20"), repeated sends to one number ("85"), and
"00 <bulk id>" for a message taken. `answer_next` forces one answer (a "80" limit, a "100"
system error, an HTTP 503) and `delay` makes it slow, for the timeout.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

USERCODE = "8503330000"
PASSWORD = "gizli-Şifre-42"
HEADER = "ACENTE1"
# Netgsm's text limit with Turkish characters (dil=TR): 6 parts of 155 characters.
TEXT_LIMIT = 930
# More than this many sends to one number in the stand-in's life is the duplicate-send limit.
SAME_NUMBER_LIMIT = 20


@dataclass
class Received:
    params: dict[str, str]
    answer: str


@dataclass
class StandInState:
    received: list[Received] = field(default_factory=list)
    answer_next: list[tuple[int, str]] = field(default_factory=list)
    delay: float = 0.0
    bulk_ids: itertools.count = field(default_factory=lambda: itertools.count(1_310_000_001))


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet in the test output
        pass

    def do_GET(self) -> None:
        state = self.server.state
        if state.delay:
            time.sleep(state.delay)
        url = urlsplit(self.path)
        if url.path != "/sms/send/get":
            self._answer(404, "Not Found")
            return
        params = {name: values[0] for name, values in parse_qs(url.query, encoding="utf-8").items()}
        if state.answer_next:
            status, body = state.answer_next.pop(0)
        else:
            status, body = 200, self._netgsm_answer(params)
        state.received.append(Received(params=params, answer=body))
        self._answer(status, body)

    def _netgsm_answer(self, params: dict[str, str]) -> str:
        state = self.server.state
        if params.get("usercode") != USERCODE or params.get("password") != PASSWORD:
            return "30"
        if params.get("msgheader") != HEADER:
            return "40"
        number = params.get("gsmno", "")
        if not (len(number) == 10 and number.isdigit() and number.startswith("5")):
            return "70"
        text = params.get("message", "")
        if not text.strip() or len(text) > TEXT_LIMIT:
            return "20"
        if params.get("dil") not in (None, "TR"):
            return "70"
        if sum(1 for r in state.received if r.params.get("gsmno") == number and r.answer.startswith("00")) >= (
            SAME_NUMBER_LIMIT
        ):
            return "85"
        return f"00 {next(state.bulk_ids)}"

    def _answer(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = StandInState()

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (the timeout test) closed its end: nothing to report."""


class NetgsmStandIn:
    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, name="netgsm-standin", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address: ("127.0.0.1", port)
        return f"http://{host}:{port}/sms/send/get"

    @property
    def state(self) -> StandInState:
        return self._server.state

    def start(self) -> NetgsmStandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def netgsm_configured(settings) -> Iterator[NetgsmStandIn]:
    """A fresh stand-in, and the (pytest-django) settings sending every SMS through it."""
    standin = NetgsmStandIn().start()
    settings.SMS_BACKEND = "outreach.sms.netgsm.NetgsmBackend"
    settings.NETGSM_API_URL = standin.url
    settings.NETGSM_USERCODE = USERCODE
    settings.NETGSM_PASSWORD = PASSWORD
    settings.NETGSM_MSGHEADER = HEADER
    settings.SMS_CONNECT_TIMEOUT = 2
    settings.SMS_READ_TIMEOUT = 2
    try:
        yield standin
    finally:
        standin.stop()
