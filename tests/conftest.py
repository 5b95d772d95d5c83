"""Shared fixtures: sandbox insurers on loopback, and stored accounts pointing at them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

# The fifth, test-only insurer (tests/fifth_insurer, docs/adding-an-insurer.md): importing it
# registers its adapter and sandbox before test modules are collected, so every test over the
# registered insurers runs at it too. On for every run: that is the proof a new insurer needs
# nothing more.
import tests.fifth_insurer  # noqa: F401

REPO_ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS_DIR = os.environ.get("TEST_ARTIFACTS_DIR", str(REPO_ROOT / "test-artifacts"))
os.makedirs(ARTIFACTS_DIR, exist_ok=True)


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    """The test settings' memory cache emptied around every test: open-stream slots, lock-out
    codes and throttle windows counted there never reach the next test."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


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
    from integrations.adapters.registry import forget_process_state

    for server in sandbox_servers.values():
        server.state.reset()
    # A reset sandbox has forgotten every token it issued; forget them here too, so each test
    # starts from the same place (the refresh path itself is tested in the Çınar tests).
    forget_process_state()
    yield sandbox_servers
    for server in sandbox_servers.values():
        server.state.reset()


@pytest.fixture
def endpoint_for(sandbox: dict) -> Callable:
    """An `Endpoint` for one insurer in the sandbox, as agency ACENTE1 (or the n-th agency)."""
    from integrations.calling.calls import Endpoint
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
    from integrations.demo import demo_data_seed
    from sandbox import DEFAULT_ACCOUNTS

    return demo_data_seed(
        base_urls={code: server.base_url for code, server in sandbox.items()}, accounts=DEFAULT_ACCOUNTS
    )


# Every desk suite logs in the same way: the two sample agencies' agents.
AGENT_PASSWORD = "test-pass-123"


@pytest.fixture
def agents(seeded_accounts) -> dict:
    """Agent users of ACENTE1 and ACENTE2 (the seeded sample agencies)."""
    from django.contrib.auth import get_user_model

    from agencies.models import Agency, AgentProfile

    users = {}
    for code in ("ACENTE1", "ACENTE2"):
        user = get_user_model().objects.create_user(f"ajan-{code.lower()}", password=AGENT_PASSWORD)
        AgentProfile.objects.create(user=user, agency=Agency.objects.get(code=code))
        users[code] = user
    return users


def _logged_in(user):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def desk(agents):
    """ACENTE1's agent, logged in on the desk."""
    return _logged_in(agents["ACENTE1"])


@pytest.fixture
def other_desk(agents):
    """ACENTE2's agent, logged in: the other agency of every isolation check."""
    return _logged_in(agents["ACENTE2"])


def api_as(user):
    """An API client acting as `user` (authenticated without a token: the API's rules, not its login)."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user)
    return client


def token_api_as(user):
    """An API client sending `user`'s token, as an agency's own software does."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def api(agents):
    """ACENTE1's agent on the API."""
    return api_as(agents["ACENTE1"])


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


@pytest.fixture(scope="session")
def worker_env(django_db_setup, django_db_blocker) -> dict:
    """Environment for a process that must use the test database (qcluster, management commands)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "insurehub.settings.test", "INSUREHUB_USE_TEST_DB": "1"}
    env.pop("PYTEST_CURRENT_TEST", None)
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set for Playwright in this process only
    # Such a process registers the test-only fifth insurer too (tests/fifth_insurer/subprocess_site).
    site = REPO_ROOT / "tests" / "fifth_insurer" / "subprocess_site"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="session")
def qcluster(worker_env) -> Iterator[subprocess.Popen]:
    """A real django-q2 cluster in its own process, on the test database and the ORM broker."""
    log = open(os.path.join(ARTIFACTS_DIR, "qcluster.log"), "ab")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=REPO_ROOT,
        env={**worker_env, "Q_WORKERS": os.environ.get("TEST_Q_WORKERS", "2")},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    time.sleep(1.0)
    if process.poll() is not None:
        raise RuntimeError("qcluster exited at start; see test-artifacts/qcluster.log")
    yield process
    # SIGTERM to the cluster's main process only: it stops its own workers in a few seconds
    # (signalling the whole group at once makes django-q2 hang until the timeout).
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    log.close()


def in_forked_child(report: Callable[[], str]) -> tuple[int, str]:
    """Fork, as django-q2 does for its workers; the child runs `report` and its text comes back.

    The child leaves with os._exit: no atexit hooks, no test-runner teardown in a copy of it.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.write(write_end, report().encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read_end) as pipe:
        return os.waitstatus_to_exitcode(status), pipe.read()


_T = TypeVar("_T")


def wait_until(predicate: Callable[[], _T], *, timeout: float = 20.0, interval: float = 0.1) -> _T:
    """Poll `predicate` until it returns something truthy; fail the test with a clear message if not."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory) -> Iterator[str]:
    """A private Redis server on a free loopback port (Debian's redis-server, installed by scripts/)."""
    import shutil
    import socket

    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed: run scripts/install-services.sh")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    workdir = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(port=port)
    wait_until(lambda: _pings(client), timeout=10)
    yield f"redis://127.0.0.1:{port}/0"
    process.terminate()
    process.wait(timeout=10)


def _pings(client) -> bool:
    try:
        return bool(client.ping())
    except Exception:
        return False
