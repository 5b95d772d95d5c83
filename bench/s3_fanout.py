"""Scenario 3 — quote fan-out: concurrent agents asking the four insurers for trafik quotes.

The sandbox insurers answer with the demo's realistic latencies (`sandbox.realistic_config`:
Deniz 1–4 s on quotes, the others 50–400 ms). Each agent asks, waits for the last of the four
answers, thinks for up to a second and asks again. Every request carries a plate of its own, so
the probe can tell how long each insurer itself spent on it (from the moment it started serving
the call to its answer). For every request:

    overhead = (time from the agent's ask to the last answer) − (the slowest insurer's own time)

* naive / tenacity: a process of 50 agent threads; each request sends the four calls from a
  thread pool and waits for all four (no Django, no database).
* platform: the product's whole path. Agents call `quote_request_create` (validation, one
  `QuoteRequest` + four `InsurerQuote` rows, the dispatch queued on commit); a real django-q2
  `qcluster` (its default 2 workers) picks `quote_request_dispatch` up from the broker and hands
  each insurer to the fan-out pool (`quotes/fanout.py`), which runs `insurer_quote_fetch` →
  `insurer_operation_run` and stores each answer. The last answer's time is the worker's own
  `finished_at`. Run three times: the embedded default (ORM broker on SQLite, shared state in
  SQLite); with Redis (broker and shared state) on the same SQLite database, when a
  `redis-server` binary is available; and the scale-out configuration, Redis on a PostgreSQL
  database (a throw-away cluster of the benchmark's own), when PostgreSQL is installed too.

The platform's flavours are measured `FLAVOUR_REPEATS` times in a full run (issue 14: the median of five
p95s), the baselines once; each flavour's table shows its median run, and `s["repeats"]` holds
every run's p50/p95 (see bench/metrics.py). `BENCH_S3_CLIENTS=platform,platform-redis` (a comma
list) runs only those clients: for trying a change to the fan-out path without the others.

Memory per worker: VmRSS (and the peak, VmHWM) from /proc/<pid>/status — of each qcluster
process for the platform, of the agent process for the baselines.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.clients import NAIVE, TENACITY
from bench.env import World, credentials_for, platform_account, policy_overrides_clear
from bench.metrics import percentile, repeats_aggregate
from bench.proc import REPO_ROOT, Child, run_together
from bench.procfs import children_of, cpu_seconds, rss_kb, session_members

ORM = "platform"
REDIS = "platform-redis"
POSTGRES = "platform-pg"
CITY = {NAIVE: 6, TENACITY: 7, ORM: 34, REDIS: 35, POSTGRES: 16}
PLATFORMS = (ORM, REDIS, POSTGRES)
# Runs of each platform flavour in a full run. Not named REPEATS: the runner must run this module once.
FLAVOUR_REPEATS = 5
SEQ_PER_REPEAT = 1000  # plates of a repeat start here × its index: rows of earlier repeats stay apart
FIELDS = {"owner_id": "10000000146", "registration_serial": "AB123456", "usage": "private"}


def params(quick: bool) -> dict[str, Any]:
    if quick:
        return {
            "agents": 10,
            "seconds": 2.0,
            "think_s": [0.0, 0.3],
            "ramp_s": 0.3,
            "contracted_rate": 50.0,
            "latency_scale": 0.2,
        }
    return {
        "agents": 50,
        "seconds": 10.0,
        "think_s": [0.0, 1.0],
        "ramp_s": 2.0,
        "contracted_rate": 50.0,
        "latency_scale": 1.0,
    }


def latency_config(code: str, scale: float) -> dict[str, Any]:
    """The demo's realistic latencies (`sandbox.realistic_config`), scaled down in quick mode."""
    from sandbox import realistic_config

    latency = realistic_config(code)["latency_ms"]

    def scaled(pair: list[float]) -> list[float]:
        return [round(v * scale) for v in pair]

    if isinstance(latency, dict):
        return {"latency_ms": {op: scaled(pair) for op, pair in latency.items()}}
    return {"latency_ms": scaled(latency)}


def insurer_codes() -> list[str]:
    """The registered sandbox insurers. Imported here rather than at the top: the client
    processes import this module too, and a naive client should not carry the sandbox."""
    from sandbox import registered_codes

    return registered_codes()


def plate(client: str, agent: int, seq: int) -> str:
    return f"{CITY[client]:02d}{chr(65 + agent // 26)}{chr(65 + agent % 26)}{seq:04d}"


# --- bench process ---------------------------------------------------------------------------


def run(world: World) -> dict[str, Any]:
    p = params(world.quick)
    codes = insurer_codes()
    latency = {c: latency_config(c, p["latency_scale"]) for c in codes}
    repeats = world.repeats(FLAVOUR_REPEATS)
    out: dict[str, Any] = {"params": {**p, "repeats": repeats}, "clients": {}, "latency": latency}
    redis_url = world.redis_url()
    postgres_url = world.postgres_url() if redis_url else ""
    clients = [NAIVE, TENACITY, ORM] + ([REDIS] if redis_url else []) + ([POSTGRES] if postgres_url else [])
    chosen = [c.strip() for c in os.environ.get("BENCH_S3_CLIENTS", "").split(",") if c.strip()]
    if chosen:
        clients = [c for c in clients if c in chosen]
    if not redis_url:
        out["redis"] = "not measured: no redis-server binary on this machine"
    if not postgres_url:
        out["postgres"] = "not measured: no PostgreSQL server programs (or no Redis) on this machine"
    # One client at a time (latency is what is measured), each platform flavour `repeats` times;
    # quick mode, a smoke test, runs them together once.
    if world.quick:
        groups = [(clients, 0)]
    else:
        groups = [([c], 0) for c in clients if c not in PLATFORMS]
        groups += [([c], r) for r in range(repeats) for c in clients if c in PLATFORMS]
    runs: dict[str, list[dict[str, Any]]] = {}
    for group, repeat in groups:
        results = _run_group(world, p, codes, latency, group, repeat, redis_url, postgres_url)
        for client, s in results.items():
            runs.setdefault(client, []).append(s)
            print(
                f"  s3 {client}{f' (repeat {repeat + 1})' if len(groups) > len(clients) else ''}: "
                f"requests={s['requests']} overhead p50/p95/p99 ms="
                f"{_ms(s['overhead_p50_ms'])}/{_ms(s['overhead_p95_ms'])}/{_ms(s['overhead_p99_ms'])} "
                f"to first call p50/p95={_ms(s['to_first_call_p50_ms'])}/{_ms(s['to_first_call_p95_ms'])} "
                f"cpu ms/request cluster={_ms(s['cluster_cpu_ms_per_request'])} "
                f"agent={_ms(s['agent_cpu_ms_per_request'])} "
                f"rss/worker={s['rss_per_worker_mb']:.0f} MB",
                flush=True,
            )
    numbers: list[dict[str, float | None]] = [{} for _ in range(max(len(r) for r in runs.values()))]
    for client, client_runs in runs.items():
        # The run with the median p95 is the one whose details are shown.
        order = sorted(range(len(client_runs)), key=lambda i: client_runs[i]["overhead_p95_ms"] or 0.0)
        out["clients"][client] = {**client_runs[order[(len(order) - 1) // 2]], "runs": len(client_runs)}
        if client in PLATFORMS:
            for index, s in enumerate(client_runs):
                numbers[index][f"{client}.overhead_p95_ms"] = s["overhead_p95_ms"]
                numbers[index][f"{client}.overhead_p50_ms"] = s["overhead_p50_ms"]
                numbers[index][f"{client}.to_first_call_p95_ms"] = s["to_first_call_p95_ms"]
                numbers[index][f"{client}.cluster_cpu_ms_per_request"] = s["cluster_cpu_ms_per_request"]
    if repeats > 1:
        out["repeats"] = repeats_aggregate(numbers)
    return out


def _run_group(
    world: World,
    p: dict[str, Any],
    codes: list[str],
    latency: dict[str, Any],
    group: list[str],
    repeat: int,
    redis_url: str,
    postgres_url: str,
) -> dict[str, dict[str, Any]]:
    world.reset(per_insurer=latency)
    policy_overrides_clear()
    children, agencies, pid_files = [], {}, []
    for client in group:
        agency = agencies[client] = f"S3{client.replace('platform-', 'P').replace('-', '').upper()}"
        for code in codes:
            world.add_accounts(code, [agency])  # the sandbox default bucket: 50/s, burst 50
        spec = {
            **p,
            "client": client,
            "agency": agency,
            "seq_base": repeat * SEQ_PER_REPEAT,
            "insurers": {
                code: {"url": world.url(code), "credentials": credentials_for(code, agency)} for code in codes
            },
        }
        env = {}
        if client in PLATFORMS:
            for code in codes:
                platform_account(world, code, agency, contracted_rate=p["contracted_rate"])
            pid_file = Path(world.raw_dir) / "agents" / f"s3-{client}.cluster.pid"
            pid_file.parent.mkdir(parents=True, exist_ok=True)
            pid_file.unlink(missing_ok=True)
            pid_files.append(pid_file)
            spec.update(entry="bench.s3_fanout:platform_main", django=True, cluster_pid_file=str(pid_file))
            if client == REDIS:
                env["BENCH_REDIS_URL"] = redis_url
            if client == POSTGRES:
                # A Redis database of its own: in quick mode both clusters run at once, and one
                # must not pull the other's tasks (they name the same queue).
                env["BENCH_REDIS_URL"] = redis_url.rsplit("/", 1)[0] + "/1"
                env["BENCH_DATABASE_URL"] = postgres_url
                spec["contracted_rates"] = {code: p["contracted_rate"] for code in codes}
        else:
            spec.update(entry="bench.s3_fanout:baseline_main", django=False)
        children.append(Child(f"s3-{client}", spec, world.raw_dir, env=env))
    mark = world.probe.mark()
    try:
        _, outs = run_together(children, timeout=300)
    finally:
        for pid_file in pid_files:
            if pid_file.exists():  # the agent died before stopping its cluster: stop it here
                stop_cluster(int(pid_file.read_text()))
    return {
        client: _summary(outs[f"s3-{client}"], world.probe.since(mark, agency=agencies[client]), codes)
        for client in group
    }


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}"


def _summary(result: dict[str, Any], events: list, codes: list[str]) -> dict[str, Any]:
    own: dict[tuple[str, str], float] = {}
    for e in events:
        if e.operation == "trafik_quote":
            own[(e.insurer, e.key)] = max(own.get((e.insurer, e.key), 0.0), e.duration)
    overheads, totals, slowest, to_worker, stored = [], [], [], [], []
    before_slowest, around_slowest = [], []  # the slowest insurer's row: claimed at; claimed to stored
    pre_call, wire, post_call = [], [], []
    incomplete = 0
    for req in result["requests"]:
        if req["t_last"] is None or not all(req["answered"].values()):
            incomplete += 1
            continue
        found = [own.get((code, req["plate"])) for code in codes]
        if any(w is None for w in found):
            incomplete += 1
            continue
        waits = [w for w in found if w is not None]  # all of them, in the order of codes
        total = req["t_last"] - req["t0"]
        overheads.append((total - max(waits)) * 1000.0)
        slowest_code = codes[waits.index(max(waits))]
        if slowest_code in req.get("calls", {}):
            started, finished, *attempts = req["calls"][slowest_code]
            before_slowest.append((started - req["t0"]) * 1000.0)
            around_slowest.append((finished - started - max(waits)) * 1000.0)
            if attempts:  # claimed -> first attempt sent; on the wire beyond the insurer; last answer -> stored
                first_sent, last_answered, on_wire = attempts
                pre_call.append((first_sent - started) * 1000.0)
                wire.append((on_wire - max(waits)) * 1000.0)
                post_call.append((finished - last_answered) * 1000.0)
        if req.get("t_first_call") is not None:
            to_worker.append((req["t_first_call"] - req["t0"]) * 1000.0)
        if req.get("t_created") is not None:
            stored.append((req["t_created"] - req["t0"]) * 1000.0)
        totals.append(total * 1000.0)
        slowest.append(max(waits) * 1000.0)
    rss = result["rss"]
    answered = len(result["requests"]) or 1
    return {
        "cluster_cpu_ms_per_request": result["cluster_cpu_s"] * 1000.0 / answered
        if "cluster_cpu_s" in result
        else None,
        "agent_cpu_ms_per_request": result["agent_cpu_s"] * 1000.0 / answered if "agent_cpu_s" in result else None,
        "flavour": result["flavour"],
        "requests": len(result["requests"]),
        "complete": len(overheads),
        "incomplete": incomplete,
        "not_ok": sum(1 for req in result["requests"] for ok in req["answered"].values() if ok is False),
        "overhead_p50_ms": percentile(overheads, 50),
        "overhead_p95_ms": percentile(overheads, 95),
        "overhead_p99_ms": percentile(overheads, 99),
        "overhead_max_ms": max(overheads) if overheads else None,
        "stored_p50_ms": percentile(stored, 50),
        "stored_p95_ms": percentile(stored, 95),
        "to_first_call_p50_ms": percentile(to_worker, 50),
        "to_first_call_p95_ms": percentile(to_worker, 95),
        "before_slowest_p50_ms": percentile(before_slowest, 50),
        "before_slowest_p95_ms": percentile(before_slowest, 95),
        "around_slowest_p50_ms": percentile(around_slowest, 50),
        "around_slowest_p95_ms": percentile(around_slowest, 95),
        "pre_call_p50_ms": percentile(pre_call, 50),
        "pre_call_p95_ms": percentile(pre_call, 95),
        "wire_p50_ms": percentile(wire, 50),
        "wire_p95_ms": percentile(wire, 95),
        "post_call_p50_ms": percentile(post_call, 50),
        "post_call_p95_ms": percentile(post_call, 95),
        "last_answer_p50_ms": percentile(totals, 50),
        "last_answer_p95_ms": percentile(totals, 95),
        "slowest_insurer_p50_ms": percentile(slowest, 50),
        "rss_per_worker_mb": max((r["VmRSS"] for r in rss), default=0) / 1024.0,
        "rss_peak_per_worker_mb": max((r.get("VmHWM", 0) for r in rss), default=0) / 1024.0,
        "processes": rss,
        "overheads_ms": overheads,
    }


# --- agent processes -------------------------------------------------------------------------


def _agents(p: dict[str, Any], ask: Any, client: str) -> list[dict[str, Any]]:
    """Run the agents until `seconds` have passed; `ask(agent, plate)` returns (t0, t_last, answered)."""
    requests: list[dict[str, Any]] = []
    stop_at = time.monotonic() + p["seconds"]
    rng = random.Random(CITY[client])

    def agent(index: int, ramp: float, thinks: list[float]) -> None:
        time.sleep(ramp)
        seq = p.get("seq_base", 0)
        while time.monotonic() < stop_at:
            number = plate(client, index, seq)
            t0, t_last, answered = ask(index, number)
            requests.append({"plate": number, "t0": t0, "t_last": t_last, "answered": answered})
            seq += 1
            time.sleep(thinks[seq % len(thinks)])

    threads = [
        threading.Thread(
            target=agent,
            args=(i, rng.uniform(0, p["ramp_s"]), [rng.uniform(*p["think_s"]) for _ in range(64)]),
            daemon=True,
        )
        for i in range(p["agents"])
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return requests


def baseline_main(spec: dict[str, Any]) -> dict[str, Any]:
    from bench.agent import ready_and_wait
    from bench.clients import RUNNERS
    from bench.wire import wire_for

    wires = {code: wire_for(code, info["url"], info["credentials"]) for code, info in spec["insurers"].items()}
    for wire in wires.values():
        wire.prepare()  # set-up (a token), before the clock starts
    runner = RUNNERS[spec["client"]]
    pool = ThreadPoolExecutor(max_workers=4 * spec["agents"], thread_name_prefix="call")

    def call(code: str, number: str) -> tuple[bool, float]:
        result = runner(lambda: wires[code].trafik_quote({**FIELDS, "plate": number}))
        return result.ok, time.time()

    def ask(agent: int, number: str) -> tuple[float, float, dict[str, bool]]:
        t0 = time.time()
        futures = {code: pool.submit(call, code, number) for code in wires}
        done = {code: future.result() for code, future in futures.items()}
        return t0, max(t for _, t in done.values()), {code: ok for code, (ok, _) in done.items()}

    ready_and_wait()
    requests = _agents(spec, ask, spec["client"])
    return {
        "flavour": "plain requests: the four calls from a thread pool, the agent waits for all four",
        "requests": requests,
        "rss": [{"pid": os.getpid(), "role": "agent process", **rss_kb()}],
    }


def platform_main(spec: dict[str, Any]) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.db import close_old_connections, connection
    from django.db.models import Max, Min
    from django_q.tasks import async_task, result

    from agencies.models import AgentProfile
    from bench.agent import ready_and_wait
    from integrations.models import Attempt, InsurerAccount
    from quotes.models import InsurerQuote, QuoteRequest
    from quotes.services.quote_requests import quote_request_create

    if os.environ.get("BENCH_DATABASE_URL"):
        _postgres_setup(spec)
    account = InsurerAccount.objects.select_related("agency").filter(agency_code=spec["agency"]).first()
    if account is None:
        raise RuntimeError(f"no insurer account with agency code {spec['agency']}")
    agency = account.agency
    users = []
    user_model = get_user_model()
    for i in range(spec["agents"]):
        user, _ = user_model.objects.get_or_create(username=f"{spec['agency'].lower()}-{i}")
        AgentProfile.objects.get_or_create(user=user, defaults={"agency": agency})
        users.append(user)
    cluster = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=REPO_ROOT,
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    Path(spec["cluster_pid_file"]).write_text(str(cluster.pid))
    try:
        # The cluster is up when a trivial task has gone through it.
        task_id = async_task("math.floor", 1.5)
        if result(task_id, wait=30_000) != 1:
            raise RuntimeError("qcluster did not run a task within 30 s")
        waiting: dict[int, tuple[threading.Event, list]] = {}
        lock = threading.Lock()
        stop = threading.Event()

        def poller() -> None:
            while not stop.is_set():
                with lock:
                    ids = list(waiting)
                if ids:
                    rows = InsurerQuote.objects.filter(request_id__in=ids).values_list(
                        "request_id", "insurer__code", "state", "finished_at"
                    )
                    by_request: dict[int, list] = {}
                    for request_id, code, state, finished_at in rows:
                        by_request.setdefault(request_id, []).append((code, state, finished_at))
                    for request_id, answers in by_request.items():
                        if len(answers) == len(spec["insurers"]) and all(a[2] is not None for a in answers):
                            with lock:
                                event, box = waiting.pop(request_id)
                            box.append(answers)
                            event.set()
                time.sleep(0.02)
            connection.close()

        def ask(agent: int, number: str) -> tuple[float, float | None, dict[str, bool]]:
            close_old_connections()
            t0 = time.time()
            request = quote_request_create(user=users[agent], product="trafik", data={**FIELDS, "plate": number})
            # The agent's web request ends here (the answers arrive by polling): like Django at the
            # end of a request, hand the connection back rather than hold it while waiting.
            connection.close()
            event, box = threading.Event(), list[list]()
            with lock:
                waiting[request.pk] = (event, box)
            if not event.wait(timeout=60):
                return t0, None, {}
            answers = box[0]
            t_last = max(finished_at.timestamp() for _, _, finished_at in answers)
            return t0, t_last, {code: state == InsurerQuote.State.SUCCEEDED for code, state, _ in answers}

        watcher = threading.Thread(target=poller, daemon=True)
        watcher.start()
        ready_and_wait()
        # CPU used on the platform's side while the agents ask: less sensitive than the latencies
        # to what else the machine runs (the cluster's processes; this process's web-side work).
        cluster_cpu, own_cpu = cpu_seconds(session_members(cluster.pid)), _own_cpu()
        requests = _agents(spec, ask, spec["client"])
        cluster_cpu = cpu_seconds(session_members(cluster.pid)) - cluster_cpu
        own_cpu = _own_cpu() - own_cpu
        stop.set()
        # Where the time went: the request stored, the first insurer call claimed by the fan-out pool.
        rows = (
            QuoteRequest.objects.filter(agency=agency)
            .annotate(first=Min("insurer_quotes__started_at"), last=Max("insurer_quotes__started_at"))
            .values_list("plate", "created_at", "first", "last")
        )
        stamps = {plate: (created, first, last) for plate, created, first, last in rows}
        # Each row's claim and end, and its main attempts as the attempt log has them (reference "Q-<id>").
        plates = dict(QuoteRequest.objects.filter(agency=agency).values_list("pk", "plate"))
        tried: dict[tuple[str, str], list[float]] = {}
        for reference, code, started, finished, latency_ms in (
            Attempt.objects.filter(reference__in=[f"Q-{pk}" for pk in plates], call="main")
            .order_by("started_at")
            .values_list("reference", "insurer_code", "started_at", "finished_at", "latency_ms")
        ):
            key = (plates[int(reference[2:])], code)
            so_far = tried.get(key, [started.timestamp(), 0.0, 0.0])
            tried[key] = [so_far[0], finished.timestamp(), so_far[2] + latency_ms / 1000.0]
        calls: dict[str, dict[str, list[float]]] = {}
        for number, code, claimed, ended in InsurerQuote.objects.filter(request__agency=agency).values_list(
            "request__plate", "insurer__code", "started_at", "finished_at"
        ):
            if claimed and ended:
                calls.setdefault(number, {})[code] = [
                    claimed.timestamp(),
                    ended.timestamp(),
                    *tried.get((number, code), []),
                ]
        for req in requests:
            created, first, last = stamps.get(req["plate"], (None, None, None))
            req["t_created"] = created.timestamp() if created else None
            req["t_first_call"] = first.timestamp() if first else None
            req["t_last_call"] = last.timestamp() if last else None
            req["calls"] = calls.get(req["plate"], {})
        rss = []
        for pid in _descendants(cluster.pid):
            rss.append({"pid": pid, "role": "qcluster process", **rss_kb(pid)})
    finally:
        stop_cluster(cluster.pid)
        cluster.wait()
        Path(spec["cluster_pid_file"]).unlink(missing_ok=True)
    broker = "Redis (broker and shared state)" if os.environ.get("BENCH_REDIS_URL") else "ORM broker on SQLite"
    if os.environ.get("BENCH_DATABASE_URL"):
        broker += ", PostgreSQL database"
    return {
        "flavour": f"quote_request_create -> qcluster ({broker}) -> quote_request_dispatch -> fan-out pool -> "
        "insurer_quote_fetch",
        "cluster_cpu_s": cluster_cpu,
        "agent_cpu_s": own_cpu,
        "requests": requests,
        "rss": [r for r in rss if "VmRSS" in r],
    }


def _own_cpu() -> float:
    times = os.times()
    return times.user + times.system


def _postgres_setup(spec: dict[str, Any]) -> None:
    """The throw-away PostgreSQL database is empty: migrate it and store the insurers and this
    client's accounts, as the bench process did in its SQLite file for the other clients."""
    from django.core.management import call_command

    from bench.env import platform_account
    from integrations.demo import demo_data_seed
    from sandbox import DEFAULT_ACCOUNTS

    call_command("migrate", verbosity=0)
    demo_data_seed(base_urls={code: info["url"] for code, info in spec["insurers"].items()}, accounts=DEFAULT_ACCOUNTS)
    for code, rate in spec["contracted_rates"].items():
        platform_account(None, code, spec["agency"], contracted_rate=rate)


def stop_cluster(pgid: int) -> None:
    """SIGTERM to the cluster's process group, SIGKILL if it is not gone within 1.5 s (a benchmark
    cluster holds nothing worth a graceful shutdown, and django-q2's can take a long while)."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        for child in children_of(current):
            found.append(child)
            todo.append(child)
    return [pid, *found]
