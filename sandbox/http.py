"""HTTP/1.1 transport of the sandboxes: read a request, answer it, or misbehave on purpose.

``protocol_version = "HTTP/1.1"`` keeps connections alive, as a ``requests.Session`` expects,
which is also why "reset" and "hang" faults must deal with the socket themselves.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
import traceback
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from .control import PREFIX, handle_control
from .insurer import Call, Insurer, Request, Response

LogFn = Callable[[str], None]


class SandboxHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # benchmarks open many connections at once

    def __init__(self, address: tuple[str, int], insurer: Insurer, log: LogFn | None = None) -> None:
        self.insurer = insurer
        self.log = log
        self.stopping = insurer.stopping
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, SandboxRequestHandler)

    def track(self, connection: socket.socket, alive: bool) -> None:
        with self._connections_lock:
            (self._connections.add if alive else self._connections.discard)(connection)

    def close_connections(self) -> None:
        """Close kept-alive connections, so a stopped server really stops answering."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class SandboxRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: SandboxHTTPServer

    def setup(self) -> None:
        super().setup()
        # Headers and body leave in two writes; with Nagle on, the body would wait ~40 ms
        # for the client's delayed ACK on every call of a kept-alive connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, alive=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, alive=False)

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def log_message(self, format: str, *args: object) -> None:
        """Silence http.server's own stderr lines; the sandbox logs one line per call itself."""

    def _dispatch(self) -> None:
        started = time.monotonic()
        body = self._read_body()
        url = urlsplit(self.path)
        request = Request(self.command, unquote(url.path), parse_qs(url.query), self.headers, body)
        call: Call | None = None
        try:
            if request.path.startswith(PREFIX):
                response = handle_control(self.server.insurer.state, request)
            else:
                response, call = self.server.insurer.serve(request)
        except Exception:  # a sandbox bug must be loud, not a hung client
            traceback.print_exc()
            response = Response(500, b"sandbox internal error\n", "text/plain; charset=utf-8")
        delivered = True
        try:
            self._emit(response)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (read timeout) while the insurer was still working: normal for
            # a slow call, and what was done (an issuance, say) stays done.
            delivered = False
            self.close_connection = True
        self._log(request, response, call, started, delivered=delivered)

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _emit(self, response: Response) -> None:
        if response.drop == "reset":
            self._reset_connection()
            return
        if response.drop == "hang":
            # Read the request, say nothing, then close (FIN): the client sees a read timeout.
            self.server.stopping.wait(response.drop_seconds)
            self.close_connection = True
            return
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        if response.content_type:
            self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def _reset_connection(self) -> None:
        """Close with SO_LINGER (1, 0): the kernel sends RST instead of FIN, and no bytes."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # rfile (a makefile()) holds a reference: the socket only really closes without it.
        # wfile is a plain writer without one, and http.server still flushes it afterwards.
        self.rfile.close()
        self.connection.close()
        self.close_connection = True

    def _log(
        self, request: Request, response: Response, call: Call | None, started: float, *, delivered: bool = True
    ) -> None:
        if self.server.log is None:
            return
        outcome = response.drop.upper() if response.drop else str(response.status)
        if not delivered:
            outcome += "-GONE"  # answered after the client had left
        parts = [
            time.strftime("%H:%M:%S"),
            f"{self.server.insurer.code:<8}",
            request.method,
            request.path,
            outcome,
            call.operation if call else "control",
        ]
        if call is not None and call.account is not None:
            parts.append(call.account.agency_code)
        if call is not None and call.note:
            parts.append(call.note)
        parts.append(f"{(time.monotonic() - started) * 1000:.0f}ms")
        self.server.log(" ".join(parts))
