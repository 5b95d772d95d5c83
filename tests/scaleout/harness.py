"""The scale-out and chaos suites' machinery: real qcluster processes, a sandbox probe, invariants.

Used by `tests/scaleout/conftest.py` and `tests/chaos/conftest.py`. Everything here talks to the
real engines the suites run on (PostgreSQL, Redis as django-q2's broker and as the shared
send-rate/budget state). The fixtures at the end are imported by both conftests.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from bench.procfs import children_of, session_members
from sandbox import insurer_class, registered_codes
from tests.conftest import ARTIFACTS_DIR, REPO_ROOT, wait_until

# The sandbox insurers the clusters are run against, and the prefix of each one's numbers.
CODES = tuple(registered_codes())
PREFIX = {code: insurer_class(code).prefix for code in CODES}
AGENCIES = ("ACENTE1", "ACENTE2")
FINAL_STATES = ("SUBMITTED", "FAILED", "DEFERRED")
OPEN_STATES = ("QUEUED", "IN_FLIGHT", "PENDING")

# --- qcluster processes ---------------------------------------------------------------------------


class Cluster:
    """One `manage.py qcluster` (a "machine"): its own session, so SIGKILL takes the whole group
    (sentinel, pusher, monitor and workers) down at once, as a machine crash would."""

    def __init__(
        self, name: str, env: Mapping[str, str], *, workers: int = 2, extra_env: Mapping[str, str] | None = None
    ):
        self.name = name
        extra = dict(extra_env or {})
        if extra.get("PYTHONPATH") and env.get("PYTHONPATH"):
            # Both apply: a skewed clock first, then the worker environment's (the test-only
            # insurer's registration, tests/fifth_insurer/subprocess_site).
            extra["PYTHONPATH"] = os.pathsep.join([extra["PYTHONPATH"], env["PYTHONPATH"]])
        self.env = {**env, "Q_WORKERS": str(workers), **extra}
        self.workers = workers
        self.process: subprocess.Popen | None = None
        self.log_path = os.path.join(ARTIFACTS_DIR, f"qcluster-{name}.log")
        self.kills = 0
        self._log: IO[bytes] | None = None

    def start(self) -> Cluster:
        assert self.process is None or self.process.poll() is not None, f"{self.name} is already running"
        self._log = log = open(self.log_path, "ab")
        log.write(f"\n===== {time.strftime('%H:%M:%S')} start {self.name}\n".encode())
        log.flush()
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=REPO_ROOT,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        time.sleep(0.5)
        if self.process.poll() is not None:
            raise RuntimeError(f"qcluster {self.name} exited at start; see {self.log_path}")
        return self

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def pids(self) -> list[int]:
        """The cluster's processes (its session): main, sentinel, pusher, monitor, workers."""
        if self.process is None:
            return []
        return session_members(self.process.pid)

    def kill(self) -> None:
        """SIGKILL every process of the cluster at once: no clean-up of any kind runs."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=10)
        wait_until(lambda: not self.pids(), timeout=10)
        self.kills += 1
        self._close_log("killed")

    def kill_one_worker(self) -> int:
        """SIGKILL one worker process of the cluster (its sentinel starts a new one); returns its pid.

        The sentinel is the main process's child; it spawns the workers first, then the monitor
        and the pusher, so its oldest children are the workers.
        """
        assert self.process is not None, f"{self.name} was never started"
        sentinel = min(children_of(self.process.pid))
        workers = sorted(children_of(sentinel))[: self.workers]
        victim = workers[0]
        os.kill(victim, signal.SIGKILL)
        return victim

    def restart(self) -> Cluster:
        if self.alive:
            self.kill()
        return self.start()

    def stop(self) -> None:
        """End of a test: SIGKILL too. A graceful stop waits for a running pump (up to 50 s), and
        the database is flushed next anyway; graceful shutdown is not what these suites test."""
        if self.alive:
            self.kill()
        self._close_log("stopped")

    def _close_log(self, why: str) -> None:
        if self._log is not None and not self._log.closed:
            self._log.write(f"===== {time.strftime('%H:%M:%S')} {why} {self.name}\n".encode())
            self._log.close()


# --- services ---------------------------------------------------------------------------------------


def service_script(name: str, *args: str, timeout: float = 60) -> str:
    """Run `scripts/<name>.sh <args>` (the project's own start/stop scripts); returns stdout."""
    command = [shutil.which("bash") or "/bin/bash", f"scripts/{name}.sh", *args]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"scripts/{name}.sh {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def redis_flush() -> None:
    """A clean broker and shared state: no task or rate/budget key of an earlier test survives."""
    import redis
    from django.conf import settings

    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def reset_shared_state_cache() -> None:
    """Forget the process's shared-state client (it reconnects to Redis by itself; this is for tidiness)."""
    from integrations.pacing import shared_state

    with shared_state._state_lock:
        shared_state._state = None


# --- the sandbox ----------------------------------------------------------------------------------------


@dataclass
class Served:
    """One business call as the insurer served it (recorded by `Probe`)."""

    at: float
    insurer: str
    operation: str
    agency: str
    note: str
    status: int
    key: str

    @property
    def clean(self) -> bool:
        """Served by the business logic: not throttled, not faulted, not an auth failure."""
        return not self.note


class Probe:
    """Wraps each sandbox insurer's `serve` and records every call it receives."""

    def __init__(self, servers: Mapping[str, Any]) -> None:
        self.events: list[Served] = []
        self._originals: dict[str, Callable] = {}
        for code, server in servers.items():
            self._wrap(code, server)

    def _wrap(self, code: str, server: Any) -> None:
        insurer = server.insurer
        original = insurer.serve
        self._originals[code] = original
        events = self.events

        def serve(request: Any) -> Any:
            response, call = original(request)
            agency = call.account.agency_code if call.account is not None else ""
            fields = call.fields or {}
            key = str(fields.get("policy_no") or fields.get("quote_no") or fields.get("plate") or "")
            events.append(Served(time.time(), code, call.operation, agency, call.note, response.status, key))
            return response, call

        insurer.serve = serve
        self._servers = getattr(self, "_servers", {})
        self._servers[code] = server

    def close(self) -> None:
        for code, server in self._servers.items():
            server.insurer.serve = self._originals[code]

    def calls(self, *, operation: str | None = None, insurer: str | None = None) -> list[Served]:
        return [
            e
            for e in list(self.events)
            if (operation is None or e.operation == operation) and (insurer is None or e.insurer == insurer)
        ]


def sandbox_contracts(sandbox: Mapping[str, Any], rates: Mapping[tuple[str, str], float], *, burst: int = 5) -> None:
    """Give each (insurer, agency) account its contracted rate at the sandbox insurer (its token bucket)."""
    from sandbox import DEFAULT_ACCOUNTS

    for code, server in sandbox.items():
        accounts = []
        for account in DEFAULT_ACCOUNTS[code]:
            rate = rates.get((code, account["agency_code"]))
            if rate is not None:
                accounts.append({**account, "rate_per_second": rate, "burst": burst})
        if accounts:
            server.state.add_accounts(accounts)


def platform_contracts(rates: Mapping[tuple[str, str], float]) -> None:
    """What the platform believes each agency's contract is (`InsurerAccount.contracted_rate`)."""
    from integrations.models import InsurerAccount

    for (code, agency), rate in rates.items():
        InsurerAccount.objects.filter(insurer__code=code, agency__code=agency).update(contracted_rate=rate)


def quick_policies(**per_operation: Mapping[str, Any]) -> None:
    """Admin overrides (`OperationPolicy`) that make retries and leases take seconds, not minutes.

    Worker processes read them through the 5-second policy cache, so set them before starting
    the clusters.
    """
    from integrations.models import Insurer, OperationPolicy
    from integrations.retry_policies import clear_policy_cache

    for insurer in Insurer.objects.all():
        for operation, values in per_operation.items():
            OperationPolicy.objects.update_or_create(insurer=insurer, operation=operation, defaults=dict(values))
    clear_policy_cache()


# Status checks: tenths of a second between tries; the lease (min(deadline, 4 x (timeout +
# connect)) + 30 s margin) is then ~36 s, so a dead worker's item comes back within the test.
# Six tries (the nightly default is eight): with ~6 % of calls faulted, four in a row happen to
# one item in 2,400 in about one run of thirty, and the suite asserts that every item is synced.
QUICK_STATUS = {
    "max_attempts": 6,
    "base_delay": 0.1,
    "max_delay": 0.5,
    "deadline": 6.0,
    "attempt_timeout": 2.0,
    "unknown_max_attempts": 2,
    "retry_budget_ratio": 0.5,
}
# Issuance: the lease is deadline + 30 s margin = 40 s.
QUICK_ISSUE = {
    "max_attempts": 5,
    "base_delay": 0.2,
    "max_delay": 1.0,
    "deadline": 10.0,
    "attempt_timeout": 2.0,
    "unknown_max_attempts": 2,
    "retry_budget_ratio": 0.2,
}
QUICK_QUOTE = {
    "max_attempts": 3,
    "base_delay": 0.1,
    "max_delay": 0.5,
    "deadline": 6.0,
    "attempt_timeout": 2.0,
    "unknown_max_attempts": 2,
    "retry_budget_ratio": 0.2,
}


# --- data --------------------------------------------------------------------------------------------------


def bulk_policies(count: int, *, tag: str, cancelled_every: int = 0, sandbox: Mapping[str, Any] | None = None):
    """`count` ACTIVE policies spread evenly over the eight (insurer, agency) accounts.

    Numbers are well-formed for the sandbox (`<PREFIX>-P-...`), which answers ACTIVE for them
    (`known_policies_only=False`); every `cancelled_every`-th one is seeded CANCELLED at its
    insurer, so the sync has real changes to apply. Returns {policy_no: expected status}.
    """
    from integrations.models import InsurerAccount
    from policies.models import Policy

    accounts = list(
        InsurerAccount.objects.select_related("insurer", "agency").order_by("insurer__code", "agency__code")
    )
    rows, expected = [], {}
    seeds: dict[str, list[dict]] = defaultdict(list)
    for i in range(count):
        account = accounts[i % len(accounts)]
        code = account.insurer.code
        number = f"{PREFIX[code]}-P-{tag}-{i:06d}"
        status = "ACTIVE"
        if cancelled_every and i % cancelled_every == 0:
            status = "CANCELLED"
            seeds[code].append({"policy_no": number, "status": status})
        expected[number] = status
        rows.append(
            Policy(
                agency=account.agency,
                insurer=account.insurer,
                account=account,
                product="trafik",
                policy_no=number,
                owner_id="10000000146",
            )
        )
    Policy.objects.bulk_create(rows, batch_size=1000)
    if sandbox is not None:
        for code, policies in seeds.items():
            sandbox[code].state.seed_policies(policies)
    return expected


def sync_start_enqueued():
    """What `manage.py sync_policies --enqueue` does: one durable item per policy, each handed to the workers."""
    from sync.models import SyncRun
    from sync.services import sync_run_enqueue, sync_run_start

    run = sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    sync_run_enqueue(run)
    return run


def run_states(run) -> Counter:
    return Counter(run.items.values_list("state", flat=True))


# --- invariants --------------------------------------------------------------------------------------------


@dataclass
class Report:
    """What a test saw, written to test-artifacts so a failure in CI can be read afterwards."""

    name: str
    lines: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.lines.append(text)

    def write(self) -> None:
        path = Path(ARTIFACTS_DIR) / f"{self.name}.txt"
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")


def assert_no_duplicate_policies(sandbox: Mapping[str, Any]) -> dict[str, int]:
    """Zero duplicate policies at every insurer: every quote has at most one policy."""
    issued = {}
    for code, server in sandbox.items():
        by_quote = server.state.counts()["policies_by_quote"]
        doubles = {quote: policies for quote, policies in by_quote.items() if len(policies) > 1}
        assert not doubles, f"{code} issued more than one policy for a quote: {doubles}"
        issued[code] = sum(len(policies) for policies in by_quote.values())
    return issued


def open_work_records() -> dict[str, list[tuple]]:
    """Work records not in a final state, per model: (id, state, attempts, error kind, next attempt)."""
    from quotes.models import Issuance
    from sync.models import SyncItem

    found = {}
    for model in (SyncItem, Issuance):
        rows = list(
            model.objects.filter(state__in=OPEN_STATES)
            .order_by("pk")
            .values_list("pk", "state", "attempts", "error_kind", "next_attempt_at", "updated_at")[:20]
        )
        if rows:
            found[model.__name__] = rows
    return found


def wait_all_final(*, timeout: float, what: str = "work records", poll: float = 0.5) -> None:
    """Wait until no work record (sync item, issuance) is open; fail listing the stuck ones."""
    deadline = time.monotonic() + timeout
    while True:
        stuck = open_work_records()
        if not stuck:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} still open after {timeout:.0f} s (no human may help): {stuck}")
        time.sleep(poll)


def budget_bound(*, first_attempts: int, ratio: float, seconds: float, throttled: int, reclaimed: int = 0) -> int:
    """The most calls of one operation an insurer may see for `first_attempts` records.

    Every record's first try is one call. Retries are capped by the retry budget, a token bucket
    per insurer: the wasted ones by its full reserve plus what it refills over the run plus
    `ratio` per successful first attempt; `ratio` x first_attempts also covers the retries that
    succeed (given back to the budget) at the suites' fault rates, well under `ratio`. Throttled
    answers do not spend budget (the insurer paces them with its own signal), so they are added
    as seen; so is one extra call per record whose worker was killed mid-call (its lease
    brought it back).
    """
    from integrations.pacing.arithmetic import RETRY_BUDGET_REFILL_PER_SECOND, RETRY_BUDGET_RESERVE

    refill = math.ceil(RETRY_BUDGET_REFILL_PER_SECOND * seconds)
    return math.floor(first_attempts * (1 + ratio)) + int(RETRY_BUDGET_RESERVE) + refill + throttled + reclaimed


SKEWED_CLOCK_DIR = Path(__file__).resolve().parent / "skewed_clock"


def skewed_clock_env(seconds: float) -> dict[str, str]:
    """Environment for a process whose wall clock is off by `seconds` (see `skewed_clock/sitecustomize.py`)."""
    path = os.pathsep.join(p for p in (str(SKEWED_CLOCK_DIR), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "INSUREHUB_TEST_CLOCK_SKEW_SECONDS": str(seconds)}


# --- fixtures (imported by the scale-out and chaos conftests) ------------------------------------


@pytest.fixture
def engines(settings) -> None:
    """The real engines: PostgreSQL and Redis (the scale-out setup), or a clear failure."""
    from django.db import connection

    if connection.vendor != "postgresql" or not settings.REDIS_URL:
        pytest.fail(
            "the scale-out and chaos suites run on PostgreSQL + Redis: export DATABASE_URL=$(bash scripts/postgres.sh "
            "start) REDIS_URL=$(bash scripts/redis.sh start) (scripts/test.sh phase 2 does)"
        )


@pytest.fixture
def world(engines, transactional_db, seeded_accounts, sandbox) -> dict:
    """Seeded insurers and agencies (both agencies at all four sandbox insurers), an empty broker
    and shared state, the platform's schedules (the work pump) as `ensure_schedules` makes them."""
    from django_q.models import Schedule

    from integrations.retry_policies import clear_policy_cache
    from work.schedules import ensure_schedules

    redis_flush()
    reset_shared_state_cache()
    clear_policy_cache()
    for server in sandbox.values():
        server.state.configure(known_policies_only=False)
    ensure_schedules()
    # Only the work pump: the nightly sync must not start a run of its own mid-test.
    Schedule.objects.exclude(func="work.tasks.work_pump").delete()
    return sandbox


@pytest.fixture
def clusters(transactional_db, worker_env) -> Iterator[Callable[..., Cluster]]:
    """Start qcluster processes: `clusters("a", workers=2, extra_env={...})`. All are killed at the end
    (before the database is flushed)."""
    started: list[Cluster] = []

    def start(name: str, *, workers: int = 2, extra_env: dict | None = None) -> Cluster:
        cluster = Cluster(name, worker_env, workers=workers, extra_env={"LOG_LEVEL": "WARNING", **(extra_env or {})})
        started.append(cluster)
        return cluster.start()

    yield start
    for cluster in started:
        cluster.stop()


@pytest.fixture
def probe(sandbox) -> Iterator[Probe]:
    """Every business call the sandbox insurers receive, as they served it."""
    recorder = Probe(sandbox)
    yield recorder
    recorder.close()
