"""Starting and stopping sandbox servers from Python (tests, demo, benchmarks)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from .anka import Anka
from .bogazici import Bogazici
from .cinar import Cinar
from .core import INSURER_CODES, SandboxState, realistic_config
from .deniz import Deniz
from .http import LogFn, SandboxHTTPServer
from .insurer import Insurer

INSURERS: dict[str, type[Insurer]] = {"anka": Anka, "bogazici": Bogazici, "cinar": Cinar, "deniz": Deniz}
DEFAULT_BASE_PORT = 8101


class SandboxServer:
    """One insurer's test environment on a daemon thread.

    ``config`` becomes this server's baseline: ``state.reset()`` returns to it.
    """

    def __init__(
        self,
        code: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        config: Mapping[str, Any] | None = None,
        log: LogFn | None = None,
    ) -> None:
        if code not in INSURERS:
            raise ValueError(f"unknown insurer {code!r}; expected one of {INSURER_CODES}")
        insurer_cls = INSURERS[code]
        self.code = code
        self.state = SandboxState(
            code,
            operations=insurer_cls.operations,
            fault_kinds=insurer_cls.fault_kinds(),
            prefix=insurer_cls.prefix,
            base_config=config,
        )
        self.insurer = insurer_cls(self.state)
        self._httpd = SandboxHTTPServer((host, port), self.insurer, log)
        self.host = host
        self.port: int = self._httpd.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> SandboxServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, name=f"sandbox-{self.code}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, end hangs and latencies early, and close kept-alive connections."""
        self.insurer.stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.close_connections()
        self._httpd.server_close()

    def __enter__(self) -> SandboxServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<SandboxServer {self.code} {self.base_url}>"


def start_sandbox(
    code: str,
    host: str = "127.0.0.1",
    port: int = 0,
    config: Mapping[str, Any] | None = None,
    *,
    log: LogFn | None = None,
) -> SandboxServer:
    """Start one insurer's sandbox; ``port=0`` picks a free port (see ``server.base_url``)."""
    return SandboxServer(code, host=host, port=port, config=config, log=log).start()


def start_all(
    host: str = "127.0.0.1",
    base_port: int | None = None,
    config: Mapping[str, Any] | None = None,
    *,
    realistic: bool = False,
    log: LogFn | None = None,
) -> dict[str, SandboxServer]:
    """Start all four sandboxes: free ports, or ``base_port`` .. ``base_port + 3`` in INSURER_CODES order.

    ``config`` is either one config for all, or a mapping of insurer code -> config.
    ``realistic`` adds the demo latencies underneath it.
    """
    per_insurer = config is not None and bool(config) and set(config) <= set(INSURER_CODES)
    servers: dict[str, SandboxServer] = {}
    try:
        for offset, code in enumerate(INSURER_CODES):
            own = (config or {}).get(code, {}) if per_insurer else (config or {})
            merged = {**(realistic_config(code) if realistic else {}), **own}
            port = 0 if base_port is None else base_port + offset
            servers[code] = start_sandbox(code, host=host, port=port, config=merged, log=log)
    except BaseException:
        for server in servers.values():
            server.stop()
        raise
    return servers
