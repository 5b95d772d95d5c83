"""Shared fixtures: sandbox insurers on loopback, and stored accounts pointing at them."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

ARTIFACTS_DIR = os.environ.get("TEST_ARTIFACTS_DIR", "test-artifacts")


@pytest.fixture(scope="session")
def sandbox_servers() -> Iterator[dict]:
    """The four sandbox insurers, started once per test run on free loopback ports."""
    from sandbox import start_all

    servers = start_all(host="127.0.0.1")
    yield servers
    for server in servers.values():
        server.stop()


@pytest.fixture
def sandbox(sandbox_servers: dict) -> Iterator[dict]:
    """The sandbox insurers with faults, counts and stored quotes cleared for this test."""
    for server in sandbox_servers.values():
        server.state.reset()
    yield sandbox_servers
    for server in sandbox_servers.values():
        server.state.reset()


@pytest.fixture
def endpoint_for(sandbox: dict) -> Callable:
    """An `Endpoint` for one insurer in the sandbox, as agency ACENTE1 (or the n-th agency)."""
    from integrations.services.calls import Endpoint
    from sandbox import DEFAULT_ACCOUNTS

    def make(code: str, agency: int = 0) -> Endpoint:
        account = DEFAULT_ACCOUNTS[code][agency]
        return Endpoint(
            insurer_code=code,
            base_url=sandbox[code].base_url,
            credentials=account["credentials"],
            account_key=f"{code}:{account['agency_code']}",
        )

    return make


@pytest.fixture
def seeded_accounts(db, sandbox: dict):
    """Insurers and both sample agencies' accounts stored in the database, pointing at the sandbox."""
    from integrations.services.setup import demo_data_seed

    return demo_data_seed(base_urls={code: server.base_url for code, server in sandbox.items()})


class RecordingSleep:
    """Really sleeps, and remembers how long: lets a test check the wait the engine chose."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        import time

        self.waits.append(seconds)
        time.sleep(seconds)


@pytest.fixture
def recording_sleep() -> RecordingSleep:
    return RecordingSleep()
