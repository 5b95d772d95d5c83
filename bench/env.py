"""The benchmark's world: sandbox insurers with a probe on their door, accounts, a clean slate.

The probe wraps each sandbox insurer's `serve`: every business call it receives is recorded
with the time it arrived, how long the insurer itself took (bucket, latency, fault, answer),
the agency that sent it and what the insurer did with it. Attempts and throttles are counted
there, by the insurer, the same way for every client; delivered and failed come from the clients.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

THROTTLE_NOTES: tuple[str, ...] = ("throttled", "fault=throttle", "fault=error:RATE_LIMITED", "fault=error:BS-901")
THROTTLE_NOTES += ("fault=error:TOO_MANY_REQUESTS",)


class Event(NamedTuple):
    start: float  # time.monotonic() when the insurer started serving the call
    end: float
    insurer: str
    operation: str
    agency: str
    note: str  # "", "throttled", "fault=<kind>[:code]", "auth-failed"
    status: int
    key: str  # plate or policy number

    @property
    def throttled(self) -> bool:
        return self.note in THROTTLE_NOTES

    @property
    def duration(self) -> float:
        return self.end - self.start


class Probe:
    """Records every call the sandbox insurers serve (list.append is atomic under the GIL)."""

    def __init__(self, servers: Mapping[str, Any]) -> None:
        self.events: list[Event] = []
        for code, server in servers.items():
            self._wrap(code, server.insurer)

    def _wrap(self, code: str, insurer: Any) -> None:
        original = insurer.serve
        events = self.events

        def serve(request: Any) -> Any:
            started = time.monotonic()
            response, call = original(request)
            agency = call.account.agency_code if call.account is not None else ""
            key = str(call.fields.get("plate") or call.fields.get("policy_no") or "")
            events.append(
                Event(started, time.monotonic(), code, call.operation, agency, call.note, response.status, key)
            )
            return response, call

        insurer.serve = serve

    def mark(self) -> int:
        return len(self.events)

    def since(self, mark: int, *, agency: str | None = None, insurer: str | None = None) -> list[Event]:
        return [
            e
            for e in self.events[mark:]
            if (agency is None or e.agency == agency) and (insurer is None or e.insurer == insurer)
        ]


def credentials_for(code: str, agency: str) -> dict[str, str]:
    """Credentials of a benchmark agency's account at one sandbox insurer (the keys it states)."""
    from sandbox import insurer_class

    slug = agency.lower()
    return {key: f"bench-{key}-{slug}" for key in insurer_class(code).credential_keys}


@dataclass
class World:
    servers: dict[str, Any]
    probe: Probe
    raw_dir: str
    quick: bool
    notes: list[str] = field(default_factory=list)
    workdir: str = ""  # the run's temporary directory (its database lives there)
    # Which of the runner's repeats of a scenario this is (0-based), and `--repeats N` if given.
    repeat: int = 0
    repeats_override: int | None = None
    _redis: tuple[str, Any] | None = None
    _postgres: tuple[str, str] | None = None  # (database URL, data directory)

    def redis_url(self) -> str:
        """A throw-away `redis-server` on a free port (started on first use), or "" without one."""
        if self._redis is None:
            self._redis = _start_redis(self.raw_dir)
        return self._redis[0]

    def postgres_url(self) -> str:
        """A throw-away PostgreSQL cluster (its own data directory and port, started on first use),
        or "" where PostgreSQL's server programs are not installed. Never the project's own server."""
        if self._postgres is None:
            self._postgres = _start_postgres(self.raw_dir)
        return self._postgres[0]

    def close(self) -> None:
        if self._postgres is not None and self._postgres[1]:
            _stop_postgres(self._postgres[1])
            self._postgres = None
        if self._redis is not None and self._redis[1] is not None:
            process = self._redis[1]
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            self._redis = None

    def repeats(self, declared: int) -> int:
        """How many times a scenario that repeats part of itself does so: `declared` in a full
        run, once in quick mode, `--repeats N` when given (as the runner counts its own repeats)."""
        if self.repeats_override is not None:
            return max(self.repeats_override, 1)
        return 1 if self.quick else declared

    def url(self, code: str) -> str:
        return self.servers[code].base_url

    def reset(
        self, config: Mapping[str, Any] | None = None, *, per_insurer: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        """Sandbox insurers back to their start (faults, buckets, counts), the platform's shared
        rate and budget state and caches cleared: every scenario starts from the same place."""
        from integrations.adapters.registry import forget_process_state
        from integrations.models import RetryBudgetBucket, RetryBudgetState, SendRateState
        from integrations.retry_policies import clear_policy_cache

        for code, server in self.servers.items():
            server.state.reset()
            server.state.configure(known_policies_only=False, **(config or {}), **(per_insurer or {}).get(code, {}))
        SendRateState.objects.all().delete()
        RetryBudgetBucket.objects.all().delete()
        RetryBudgetState.objects.all().delete()
        forget_process_state()
        clear_policy_cache()
        _reset_shared_state()

    def add_accounts(
        self, code: str, agencies: Iterable[str], *, rate: float | None = None, burst: int | None = None
    ) -> None:
        self.servers[code].state.add_accounts(
            [
                {
                    "agency_code": agency,
                    "credentials": credentials_for(code, agency),
                    **({"rate_per_second": rate} if rate else {}),
                    **({"burst": burst} if burst else {}),
                }
                for agency in agencies
            ]
        )


def _start_redis(raw_dir: str) -> tuple[str, Any]:
    binary = shutil.which("redis-server")
    if not binary:
        return "", None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(os.path.join(raw_dir, "redis.log"), "w")
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"redis://127.0.0.1:{port}/0"
    import redis

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            redis.Redis.from_url(url).ping()
            return url, process
        except redis.RedisError:
            time.sleep(0.1)
    process.terminate()
    process.wait()
    return "", None


def _postgres_bin() -> str:
    for version in ("17", "16", "15", "14"):
        candidate = f"/usr/lib/postgresql/{version}/bin"
        if os.path.exists(os.path.join(candidate, "initdb")):
            return candidate
    return ""


def _as_postgres_user() -> list[str]:
    """PostgreSQL refuses to run as root: run its programs as the `postgres` user then."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _start_postgres(raw_dir: str) -> tuple[str, str]:
    """initdb + pg_ctl start on a free port, with the server's default durability settings
    (fsync and synchronous commit on: what a production server runs with)."""
    bin_dir = _postgres_bin()
    if not bin_dir:
        return "", ""
    import tempfile

    data = tempfile.mkdtemp(prefix="insurehub-bench-pg-")
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run_as = _as_postgres_user()
    log = os.path.join(raw_dir, "postgres.log")
    try:
        subprocess.run(
            [*run_as, f"{bin_dir}/initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8"],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [
                *run_as,
                f"{bin_dir}/pg_ctl",
                "-D",
                data,
                "-l",
                os.path.join(data, "server.log"),
                "-w",
                "-o",
                f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c max_connections=200",
                "start",
            ],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [f"{bin_dir}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "insurehub_bench"],
            check=True,
            capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        with open(log, "w") as out:
            out.write(f"PostgreSQL did not start: {exc}\n{getattr(exc, 'stderr', b'') or b''!r}\n")
        _stop_postgres(data)
        return "", ""
    return f"postgres://postgres@127.0.0.1:{port}/insurehub_bench", data


def _stop_postgres(data: str) -> None:
    bin_dir = _postgres_bin()
    if bin_dir and os.path.exists(os.path.join(data, "postmaster.pid")):
        subprocess.run(
            [*_as_postgres_user(), f"{bin_dir}/pg_ctl", "-D", data, "-m", "immediate", "stop"],
            capture_output=True,
        )
    shutil.rmtree(data, ignore_errors=True)


def _reset_shared_state() -> None:
    """Redis-backed shared state keeps keys between scenarios; the database one was deleted above."""
    from integrations.pacing import shared_state

    state = shared_state.shared_state()
    redis = getattr(state, "_redis", None)
    if redis is not None:
        for key in redis.scan_iter("insurehub:*"):
            redis.delete(key)


def platform_account(world: World | None, code: str, agency_code: str, *, contracted_rate: float) -> Any:
    """The platform's stored account for a benchmark agency at one insurer (created or updated)."""
    from agencies.models import Agency
    from integrations.models import Insurer, InsurerAccount

    agency, _ = Agency.objects.get_or_create(code=agency_code.lower(), defaults={"name": f"Bench {agency_code}"})
    insurer = Insurer.objects.get(code=code)
    account, _ = InsurerAccount.objects.get_or_create(
        agency=agency, insurer=insurer, defaults={"agency_code": agency_code}
    )
    account.agency_code = agency_code
    account.contracted_rate = contracted_rate
    account.is_active = True
    account.set_credentials(credentials_for(code, agency_code))
    account.save()
    return account


def policy_override(code: str, operation: str, **fields: Any) -> None:
    """An admin's override of one insurer's operation policy (as Django admin would store it)."""
    from dataclasses import asdict

    from integrations.models import Insurer, OperationPolicy
    from integrations.retry_policies import clear_policy_cache, default_policy

    values = {**asdict(default_policy(operation)), **fields}
    OperationPolicy.objects.update_or_create(
        insurer=Insurer.objects.get(code=code), operation=operation, defaults=values
    )
    clear_policy_cache()


def policy_overrides_clear() -> None:
    from integrations.models import OperationPolicy
    from integrations.retry_policies import clear_policy_cache

    OperationPolicy.objects.all().delete()
    clear_policy_cache()


def sync_tables_clear() -> None:
    """Durable sync records and policies of earlier scenarios: a new scenario must not see them."""
    from policies.models import Policy
    from sync.models import SyncItem, SyncRun

    SyncItem.objects.all().delete()
    SyncRun.objects.all().delete()
    Policy.objects.all().delete()


class Arrivals:
    """Open-loop arrivals: calls `submit(item)` at each item's offset from `start` (seconds)."""

    def __init__(self, schedule: list[tuple[float, Any]], submit: Any) -> None:
        self.schedule = schedule
        self.submit = submit
        self.start = 0.0
        self.thread = threading.Thread(target=self._run, name="arrivals", daemon=True)

    def begin(self, start: float) -> Arrivals:
        self.start = start
        self.thread.start()
        return self

    def _run(self) -> None:
        for offset, item in self.schedule:
            delay = self.start + offset - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.submit(item)

    def join(self) -> None:
        self.thread.join()
