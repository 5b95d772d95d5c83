"""Several "hosts" on one machine: network namespaces, a bridge, PostgreSQL and Redis on a db host.

The scale-out test `tests/scaleout/test_netns_hosts.py` and the bench scenario `bench/s9_hosts.py`
run their qcluster processes on hosts that are network namespaces this module creates (root and
`ip` needed; without them `unavailable()` says why and callers skip, never fake it):

* `ih-<pid>-db`: a bridge `br0` at 10.213.0.1/24; a throw-away PostgreSQL (initdb in a temporary
  directory, listening on 10.213.0.1, pg_hba trusting the subnet) and Redis; a delaying TCP proxy
  (`python -m bench.netns proxy`, a few ms each way) in front of both, which is what workers use;
  the sandbox insurers, whose listening sockets are opened inside the namespace by the calling
  process (`inside()`), so the probe on their door stays in the caller.
* `ih-<pid>-w1`, `-w2`, …: one veth pair each, the db end a port of the bridge, the host end
  10.213.0.1x/24. No default route, no NAT: nothing leaves the namespaces. The platform refuses
  private insurer addresses (integrations.insurer_hosts), so each worker host runs a forwarder on
  its own loopback (127.0.0.1:<the insurer's port>) to the insurer host over the veth: the
  platform calls loopback as in every other test, the bytes cross the "network".

`cut(n)` sets the db end of host n's veth down (a pulled cable: the host keeps its address and
its half-open connections, packets are dropped); `mend(n)` brings it back. The calling process
(root namespace) reaches PostgreSQL and Redis through their Unix sockets (not namespaced), so a
controller process can prepare data and watch the run without being on the network under test.

Everything is torn down in `close()` (also at exit): processes, namespaces, the temporary directory;
namespaces a killed run left behind are swept by the next one (`sweep_stale()`).
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

REPO_ROOT = Path(__file__).resolve().parent.parent
SUBNET = "10.213.0"
DB_IP = f"{SUBNET}.1"
PG_PORT, REDIS_PORT = 5432, 6379
# What the workers use: the delaying proxy in front of each.
PG_PROXY_PORT, REDIS_PROXY_PORT = 15432, 16379
SANDBOX_BASE_PORT = 18100
CLONE_NEWNET = 0x40000000
PG_VERSIONS = ("17", "16", "15", "14")
IP = shutil.which("ip") or "/usr/sbin/ip"


def unavailable() -> str:
    """Why namespaces cannot be made here ("" when they can): checked by really making one."""
    if not sys.platform.startswith("linux"):
        return "network namespaces are Linux only"
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add); this run is not root"
    if not shutil.which("ip"):
        return "`ip` (iproute2) is not installed"
    if not shutil.which("redis-server"):
        return "redis-server is not installed"
    if not _pg_bin():
        return "PostgreSQL's server programs are not installed"
    name = f"ih-{os.getpid()}-probe"
    done = subprocess.run([IP, "netns", "add", name], capture_output=True, text=True)
    if done.returncode != 0:
        return f"`ip netns add` failed: {done.stderr.strip()}"
    subprocess.run([IP, "netns", "del", name], capture_output=True)
    return ""


def _pg_bin() -> str:
    for version in PG_VERSIONS:
        candidate = f"/usr/lib/postgresql/{version}/bin"
        if os.path.exists(os.path.join(candidate, "initdb")):
            return candidate
    return ""


def _ip(*args: str) -> None:
    done = subprocess.run([IP, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


@contextmanager
def inside(namespace: str) -> Iterator[None]:
    """The calling thread in `namespace`'s network for the block: sockets it opens there stay there
    (a listening socket keeps accepting in that namespace from any thread afterwards)."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/var/run/netns/{namespace}", os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(own)
    finally:
        os.close(target)
        os.close(own)


def _exit_cleanly_on_sigterm() -> bool:
    """SIGTERM (a CI timeout, `kill`) as SystemExit in the main thread while hosts are up, where
    nothing else handles it: `finally` blocks and atexit then run, and `close()` with them (which
    puts the default back). SIGKILL is `sweep_stale`'s. Whether the handler was installed."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return False

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    return True


def sweep_stale() -> list[str]:
    """Remove the namespaces of earlier runs whose process is gone (SIGKILLed before its clean-up
    could run), and the processes still inside them; returns their names."""
    listed = subprocess.run([IP, "netns", "list"], capture_output=True, text=True).stdout
    swept = []
    for line in listed.splitlines():
        name = line.split()[0] if line.strip() else ""
        match = re.fullmatch(r"ih-(\d+)-\d+-(?:db|w\d+)", name)
        if not match or os.path.exists(f"/proc/{match.group(1)}"):
            continue
        pids = subprocess.run([IP, "netns", "pids", name], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        subprocess.run([IP, "netns", "del", name], capture_output=True)
        swept.append(name)
    return swept


class Served(NamedTuple):
    """One business call as a sandbox insurer served it, and from which host (its address)."""

    at: float
    insurer: str
    operation: str
    note: str
    key: str
    peer: str

    @property
    def clean(self) -> bool:
        return not self.note


class HostProbe:
    """Records every call the sandbox insurers serve, with the caller's address (which host)."""

    def __init__(self, servers: Mapping[str, Any]) -> None:
        self.events: list[Served] = []
        self._peer = threading.local()
        for code, server in servers.items():
            self._wrap(code, server)

    def _wrap(self, code: str, server: Any) -> None:
        httpd, insurer, peer, events = server._httpd, server.insurer, self._peer, self.events
        original_thread, original_serve = httpd.process_request_thread, insurer.serve

        def process_request_thread(request: Any, client_address: Any) -> None:
            peer.address = client_address[0]
            original_thread(request, client_address)

        def serve(request: Any) -> Any:
            response, call = original_serve(request)
            fields = call.fields or {}
            key = str(fields.get("policy_no") or fields.get("quote_no") or fields.get("plate") or "")
            events.append(Served(time.time(), code, call.operation, call.note, key, getattr(peer, "address", "")))
            return response, call

        httpd.process_request_thread = process_request_thread
        insurer.serve = serve

    def calls(self, *, operation: str | None = None) -> list[Served]:
        return [e for e in list(self.events) if operation is None or e.operation == operation]


class Hosts:
    """A db host and `workers` worker hosts (network namespaces) with PostgreSQL, Redis and proxies."""

    def __init__(self, workers: int = 2, *, delay_ms: float = 2.0, log_dir: str | os.PathLike | None = None) -> None:
        sweep_stale()
        self.tag = f"ih-{os.getpid()}-{int(time.time() * 1000) % 100000}"
        self.db = f"{self.tag}-db"
        self.workers = [f"{self.tag}-w{n}" for n in range(1, workers + 1)]
        self.delay_ms = delay_ms
        self.dir = tempfile.mkdtemp(prefix="insurehub-netns-")
        self.log_dir = Path(log_dir or self.dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._namespaces: list[str] = []
        self._processes: list[subprocess.Popen] = []
        self._clusters: list[subprocess.Popen] = []
        self._servers: dict[str, Any] = {}
        self._logs: list[Any] = []
        self._pg_data = os.path.join(self.dir, "pg")
        self._pg_started = False
        self._closed = False
        self._sigterm = False
        atexit.register(self.close)

    # --- addresses --------------------------------------------------------------------------------

    def worker_ip(self, n: int) -> str:
        return f"{SUBNET}.{10 + n}"

    @property
    def database_url(self) -> str:
        """PostgreSQL as a worker host sees it: the db host's proxy, over the veth."""
        return f"postgres://postgres@{DB_IP}:{PG_PROXY_PORT}/insurehub"

    @property
    def redis_url(self) -> str:
        return f"redis://{DB_IP}:{REDIS_PROXY_PORT}/0"

    @property
    def local_database_url(self) -> str:
        """PostgreSQL for a process in the root namespace: its Unix socket (no network)."""
        return f"postgres://postgres@{quote(self._pg_data, safe='')}:{PG_PORT}/insurehub"

    @property
    def local_redis_url(self) -> str:
        return f"unix://{self.dir}/redis.sock?db=0"

    # --- bring-up ---------------------------------------------------------------------------------

    def start(self) -> Hosts:
        self._sigterm = _exit_cleanly_on_sigterm()
        try:
            self._topology()
            self._postgres()
            self._redis()
            mapping = [
                (f"0.0.0.0:{PG_PROXY_PORT}", f"{DB_IP}:{PG_PORT}"),
                (f"0.0.0.0:{REDIS_PROXY_PORT}", f"{DB_IP}:{REDIS_PORT}"),
            ]
            self._proxy(self.db, "db-proxy", mapping, self.delay_ms)
            self._wait_port(self.db, DB_IP, PG_PROXY_PORT)
            self._wait_port(self.db, DB_IP, REDIS_PROXY_PORT)
        except BaseException:
            self.close()
            raise
        return self

    def _topology(self) -> None:
        _ip("netns", "add", self.db)
        self._namespaces.append(self.db)
        _ip("-n", self.db, "link", "set", "lo", "up")
        _ip("-n", self.db, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.db, "addr", "add", f"{DB_IP}/24", "dev", "br0")
        _ip("-n", self.db, "link", "set", "br0", "up")
        for n, name in enumerate(self.workers, start=1):
            _ip("netns", "add", name)
            self._namespaces.append(name)
            _ip("-n", name, "link", "set", "lo", "up")
            # Made directly in both namespaces: the names never meet the root namespace's.
            _ip("link", "add", "name", f"v{n}", "netns", self.db, "type", "veth", "peer", "name", "eth0", "netns", name)
            _ip("-n", self.db, "link", "set", f"v{n}", "master", "br0")
            _ip("-n", self.db, "link", "set", f"v{n}", "up")
            _ip("-n", name, "addr", "add", f"{self.worker_ip(n)}/24", "dev", "eth0")
            _ip("-n", name, "link", "set", "eth0", "up")

    def _postgres(self) -> None:
        bin_dir = _pg_bin()
        run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        os.makedirs(self._pg_data)
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
            shutil.chown(self._pg_data, "postgres", "postgres")
        subprocess.run(
            [*run_as, f"{bin_dir}/initdb", "-D", self._pg_data, "-U", "postgres", "-A", "trust", "-E", "UTF8"],
            check=True,
            capture_output=True,
        )
        with open(os.path.join(self._pg_data, "pg_hba.conf"), "a") as hba:
            hba.write(f"host all all {SUBNET}.0/24 trust\n")
        options = f"-p {PG_PORT} -k {self._pg_data} -c listen_addresses={DB_IP} -c max_connections=300 -c fsync=off"
        log = os.path.join(self._pg_data, "server.log")
        start = ["-o", options, "start"]
        done = subprocess.run(
            [IP, "netns", "exec", self.db, *run_as, f"{bin_dir}/pg_ctl", "-D", self._pg_data, "-l", log, "-w", *start],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"PostgreSQL did not start in {self.db}: {done.stderr.strip()} (see {log})")
        self._pg_started = True
        subprocess.run(
            [f"{bin_dir}/createdb", "-h", self._pg_data, "-p", str(PG_PORT), "-U", "postgres", "insurehub"],
            check=True,
            capture_output=True,
        )

    def _redis(self) -> None:
        log = self._log("redis.log")
        command = [IP, "netns", "exec", self.db, shutil.which("redis-server") or "redis-server"]
        command += ["--bind", DB_IP, "--port", str(REDIS_PORT), "--save", "", "--appendonly", "no"]
        command += ["--protected-mode", "no", "--unixsocket", f"{self.dir}/redis.sock", "--unixsocketperm", "777"]
        self._processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 15
        while not os.path.exists(f"{self.dir}/redis.sock"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"Redis did not start in {self.db}")
            time.sleep(0.05)

    def _proxy(self, namespace: str, name: str, mapping: Sequence[tuple[str, str]], delay_ms: float) -> None:
        log = self._log(f"{name}.log")
        command = [IP, "netns", "exec", namespace, sys.executable, "-m", "bench.netns", "proxy", str(delay_ms)]
        command += [f"{listen}={target}" for listen, target in mapping]
        self._processes.append(subprocess.Popen(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT))

    def _log(self, name: str) -> Any:
        log = open(self.log_dir / name, "ab")  # closed in close(), after its process
        self._logs.append(log)
        return log

    def _wait_port(self, namespace: str, host: str, port: int, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            with inside(namespace):
                probe = socket.socket()
            probe.settimeout(1)
            try:
                probe.connect((host, port))
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"nothing listens on {host}:{port} in {namespace}") from None
                time.sleep(0.1)
            finally:
                probe.close()

    def start_sandbox(self, codes: Sequence[str], config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The sandbox insurers on the db host (listening inside its namespace, served by this
        process), one per port from SANDBOX_BASE_PORT; each worker host forwards its loopback
        port to it. Their base URLs (http://127.0.0.1:<port>) are the same on every worker host."""
        from sandbox.server import start_sandbox

        with inside(self.db):  # every address of the db host, which has no other network than the bridge
            for n, code in enumerate(codes):
                port = SANDBOX_BASE_PORT + n
                self._servers[code] = start_sandbox(code, host="0.0.0.0", port=port, config=config)  # noqa: S104
        mapping = [(f"127.0.0.1:{s.port}", f"{DB_IP}:{s.port}") for s in self._servers.values()]
        for n, name in enumerate(self.workers, start=1):
            self._proxy(name, f"w{n}-insurers", mapping, 0)
        for name in self.workers:
            for server in self._servers.values():
                self._wait_port(name, "127.0.0.1", server.port)
        return dict(self._servers)

    # --- workers and the network ----------------------------------------------------------------

    def qcluster(self, n: int, env: Mapping[str, str], log_name: str | None = None) -> subprocess.Popen:
        """`manage.py qcluster` on worker host n (1-based), in a session of its own."""
        log = self._log(log_name or f"qcluster-w{n}.log")
        process = subprocess.Popen(
            [IP, "netns", "exec", self.workers[n - 1], sys.executable, "manage.py", "qcluster"],
            cwd=REPO_ROOT,
            env=dict(env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._clusters.append(process)
        return process

    def worker_env(self, base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
        """The environment of a qcluster on a worker host: the db host's proxy for data and broker."""
        env = {**(base if base is not None else os.environ)}
        for key in ("PYTEST_CURRENT_TEST", "DJANGO_ALLOW_ASYNC_UNSAFE", "BENCH_DATABASE_URL", "BENCH_REDIS_URL"):
            env.pop(key, None)
        return {
            **env,
            "DJANGO_SETTINGS_MODULE": "insurehub.settings.test",
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "PYTHONPATH": str(REPO_ROOT),
            **extra,
        }

    def local_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of a controller process in the root namespace (Unix sockets)."""
        return self.worker_env(base, DATABASE_URL=self.local_database_url, REDIS_URL=self.local_redis_url)

    def cut(self, n: int) -> None:
        """Pull host n's cable: the db end of its veth down."""
        _ip("-n", self.db, "link", "set", f"v{n}", "down")

    def mend(self, n: int) -> None:
        _ip("-n", self.db, "link", "set", f"v{n}", "up")

    @staticmethod
    def stop_cluster(process: subprocess.Popen) -> None:
        """SIGKILL the cluster's whole session, as the other scale-out suites end theirs."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    # --- tear-down --------------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._sigterm and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for process in self._clusters:
            if process.poll() is None:
                self.stop_cluster(process)
        for server in self._servers.values():
            server.stop()
        for process in self._processes:
            if process.poll() is None:
                process.kill()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self._pg_started:
            run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
            subprocess.run(
                [*run_as, f"{_pg_bin()}/pg_ctl", "-D", self._pg_data, "-m", "immediate", "stop"], capture_output=True
            )
        for name in reversed(self._namespaces):
            subprocess.run([IP, "netns", "del", name], capture_output=True)
        for log in self._logs:
            log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def leftovers(self) -> list[str]:
        """Namespaces of this run still listed by `ip netns list` (none after `close()`)."""
        listed = subprocess.run([IP, "netns", "list"], capture_output=True, text=True).stdout
        return [line.split()[0] for line in listed.splitlines() if line.startswith(self.tag)]


# --- the delaying TCP proxy: `python -m bench.netns proxy DELAY_MS LISTEN=TARGET ...` -------------


async def _forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copy one direction, each chunk delivered `delay` seconds after it arrived (latency, not a
    bandwidth cap: chunks overlap in flight)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                return
            writer.write(data)
            await writer.drain()

    sender = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(65536)
            await queue.put((loop.time() + delay, data))
            if not data:
                break
        await sender
    except (ConnectionError, OSError):
        sender.cancel()
    finally:
        writer.close()


async def _serve(delay: float, mapping: list[tuple[tuple[str, int], tuple[str, int]]]) -> None:
    async def handle(target: tuple[str, int], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            return
        for w in (writer, up_writer):
            sock = w.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(_forward(reader, up_writer, delay), _forward(up_reader, writer, delay))

    servers = []
    for listen, target in mapping:
        servers.append(await asyncio.start_server(functools.partial(handle, target), listen[0], listen[1], backlog=512))
    await asyncio.gather(*(s.serve_forever() for s in servers))


def _address(text: str) -> tuple[str, int]:
    host, port = text.rsplit(":", 1)
    return host, int(port)


def proxy_main(argv: list[str]) -> None:
    delay = float(argv[0]) / 1000.0
    mapping = [(_address(a.split("=")[0]), _address(a.split("=")[1])) for a in argv[1:]]
    asyncio.run(_serve(delay, mapping))


if __name__ == "__main__":
    if sys.argv[1:2] == ["proxy"]:
        proxy_main(sys.argv[2:])
