"""Starting and stopping sandbox servers from Python (tests, demo, benchmarks)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from .core import SandboxState
from .http import LogFn, SandboxHTTPServer
from .registry import DEFAULT_ACCOUNTS, insurer_class, port_for, realistic_config, registered_codes

# ``python -m sandbox`` and the demo: each insurer on DEFAULT_BASE_PORT + its ``port_offset``.
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
        insurer_cls = insurer_class(code)  # ValueError naming the known ones
        self.code = code
        self.state = SandboxState(
            code,
            operations=insurer_cls.operations,
            fault_kinds=insurer_cls.fault_kinds(),
            prefix=insurer_cls.prefix,
            credential_keys=insurer_cls.credential_keys,
            default_accounts=insurer_cls.default_accounts,
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
    """Start every registered insurer: on free ports, or each on ``base_port`` + its ``port_offset``.

    ``config`` is either one config for all, or a mapping of insurer code -> config.
    ``realistic`` adds the demo latencies underneath it. Answers in ``registered_codes()`` order.
    """
    codes = registered_codes()
    per_insurer = config is not None and bool(config) and set(config) <= set(codes)
    servers: dict[str, SandboxServer] = {}
    try:
        for code in codes:
            own = (config or {}).get(code, {}) if per_insurer else (config or {})
            merged = {**(realistic_config(code) if realistic else {}), **own}
            port = 0 if base_port is None else port_for(code, base_port)
            servers[code] = start_sandbox(code, host=host, port=port, config=merged, log=log)
    except BaseException:
        for server in servers.values():
            server.stop()
        raise
    return servers


def fixed_port_urls(host: str = "127.0.0.1", base_port: int = DEFAULT_BASE_PORT) -> dict[str, str]:
    """Where ``start_all(host, base_port)`` serves each insurer, without starting anything."""
    shown = "127.0.0.1" if host in ("", "0.0.0.0") else host
    return {code: f"http://{shown}:{port_for(code, base_port)}" for code in registered_codes()}


def demo_manifest(host: str = "127.0.0.1", base_port: int = DEFAULT_BASE_PORT) -> dict[str, Any]:
    """What the sandbox insurers hand the demo: each one's URL and the sample agencies' accounts.

    The platform never imports the sandbox, so ``manage.py seed_demo`` reads this as JSON
    (``python -m sandbox --demo-manifest``), the way an agency is given its credentials by the
    insurer and types them in: one source for the accounts, and no table of them in product code.
    """
    return {
        "insurers": {
            code: {"base_url": url, "accounts": DEFAULT_ACCOUNTS[code]}
            for code, url in fixed_port_urls(host, base_port).items()
        }
    }
