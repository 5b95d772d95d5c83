"""Fixtures for the sandbox's own tests: all four servers on free ports, reset before each test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from sandbox import SandboxServer, start_all

from .sandbox_wire import CLIENTS, AnkaClient, BogaziciClient, CinarClient, DenizClient


@pytest.fixture(scope="session")
def servers() -> Iterator[dict[str, SandboxServer]]:
    running = start_all()
    yield running
    for server in running.values():
        server.stop()


@pytest.fixture(autouse=True)
def _fresh_state(servers: dict[str, SandboxServer]) -> None:
    for server in servers.values():
        server.state.reset()


@pytest.fixture
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


@pytest.fixture
def anka(servers: dict[str, SandboxServer], http: requests.Session) -> AnkaClient:
    return AnkaClient(servers["anka"], http)


@pytest.fixture
def bogazici(servers: dict[str, SandboxServer], http: requests.Session) -> BogaziciClient:
    return BogaziciClient(servers["bogazici"], http)


@pytest.fixture
def cinar(servers: dict[str, SandboxServer], http: requests.Session) -> CinarClient:
    return CinarClient(servers["cinar"], http)


@pytest.fixture
def deniz(servers: dict[str, SandboxServer], http: requests.Session) -> DenizClient:
    servers["deniz"].state.configure(issuance_processing_seconds=0.05)
    return DenizClient(servers["deniz"], http)


@pytest.fixture(params=list(CLIENTS))
def client(request: pytest.FixtureRequest, servers: dict[str, SandboxServer], http: requests.Session) -> Any:
    """Each insurer's client in turn, for behaviour every insurer shares."""
    return CLIENTS[request.param](servers[request.param], http)
