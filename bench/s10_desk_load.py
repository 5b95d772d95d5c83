"""Scenario 10 — the desk under a real load tool: Locust agents through the production server.

The whole product runs as it is deployed: `scripts/serve.sh` (migrate, createcachetable,
collectstatic, then gunicorn with its gthread workers and threads), a real qcluster on the ORM
broker, the sandbox insurers with the demo's realistic latencies (Deniz 1–4 s, the others
50–400 ms). The server runs the bench settings (`bench.settings`: the bench's own SQLite file,
never a real database; plain-HTTP cookies, no production secrets) with `BENCH_CACHE=db`: the
database cache table production uses without Redis, so the open-stream slots are counted where
both workers — and the bench, afterwards — see them.

Locust (bench/locust_desk.py, in a process of its own: it runs on gevent) drives `users` agents:
each logs in through the login page, then opens the trafik form, submits a quote (a plate of its
own), follows the request's server-sent-events stream to its `done` event (every insurer final),
thinks, and asks again, until the time is up; the asks in flight are then read to their end.

Measured, per ask: submit (the form's POST sent) → the stream's `done` read. An ask cannot end
before its slowest insurer answered, so it is set against that: the sandbox's probe gives each
insurer's own serving time for the ask's plate, and

    overhead = (submit → done) − the slowest insurer's serving time for that ask

is what the platform added (queue, workers, the database, the stream's push, the wire).
Target: p95 of submit → done ≤ p95 of the slowest insurer's time + 150 ms (judged on the
overhead's p95 ≤ 150 ms), no failed request, and no stream left open at the end — counted
server-side, as the live-stream slots still held in the shared cache (quotes/live.py,
insurehub.cache_slots) once the agents are gone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.env import World, platform_account, policy_overrides_clear
from bench.metrics import percentile
from bench.proc import REPO_ROOT
from bench.procfs import session_cpu_seconds
from bench.s3_fanout import insurer_codes, latency_config, stop_cluster

AGENCY = "S10LOAD"
PASSWORD = "bench-desk-load-parola"
OVERHEAD_TARGET_MS = 150.0


def params(quick: bool) -> dict[str, Any]:
    if quick:
        return {"users": 4, "spawn_rate": 4.0, "seconds": 6.0, "think_s": [0.3, 0.8], "latency_scale": 0.5}
    # 200 agents thinking 5–15 s between asks that take ~4 s: about 60 streams open at once, inside
    # the 2 × 48 threads scripts/serve.sh gives gunicorn.
    return {"users": 200, "spawn_rate": 10.0, "seconds": 120.0, "think_s": [5.0, 15.0], "latency_scale": 1.0}


def run(world: World) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    from agencies.models import AgentProfile
    from integrations.models import InsurerAccount

    # Only looked for, never imported here: importing locust monkey-patches this process (gevent)
    # under the sandbox's threads. It runs in the child (bench/locust_desk.py).
    if importlib.util.find_spec("locust") is None:
        raise RuntimeError("locust is not installed: pip install --require-hashes -r requirements/dev.txt")

    p = params(world.quick)
    for name in ("users", "seconds"):  # a quick look at another size: not a run to report
        if os.environ.get(f"BENCH_DESKLOAD_{name.upper()}"):
            p[name] = type(p[name])(os.environ[f"BENCH_DESKLOAD_{name.upper()}"])
    codes = insurer_codes()
    world.reset(per_insurer={code: latency_config(code, p["latency_scale"]) for code in codes})
    policy_overrides_clear()
    for code in codes:
        world.add_accounts(code, [AGENCY])
        platform_account(world, code, AGENCY, contracted_rate=200.0)
    account = InsurerAccount.objects.select_related("agency").filter(agency_code=AGENCY).first()
    if account is None:
        raise RuntimeError(f"no insurer account with agency code {AGENCY}")
    logins = []
    for index in range(p["users"]):
        user, _ = get_user_model().objects.get_or_create(username=f"s10-ajan-{index}")
        user.set_password(PASSWORD)
        user.save()
        AgentProfile.objects.get_or_create(user=user, defaults={"agency": account.agency})
        logins.append([user.username, PASSWORD])

    raw = Path(world.raw_dir)
    logs = raw / "agents"
    logs.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    env = {
        **os.environ,
        "BENCH_CACHE": "db",
        "PYTHON": sys.executable,
        "WEB_BIND": f"127.0.0.1:{port}",
        "PROMETHEUS_MULTIPROC_DIR": str(raw / "s10-prometheus"),
    }
    processes: list[subprocess.Popen] = []
    try:
        processes.append(_start([sys.executable, "manage.py", "qcluster"], env, logs / "s10-qcluster.log"))
        web = _start(["bash", "scripts/serve.sh"], env, logs / "s10-web.log")
        processes.append(web)
        base_url = f"http://127.0.0.1:{port}"
        _wait_for(f"{base_url}/giris/", web)
        _wait_for_cluster()
        plan_path, out_path = raw / "s10-plan.json", raw / "s10-locust.json"
        plan_path.write_text(json.dumps({"host": base_url, "logins": logins, **p}))
        mark = world.probe.mark()
        # The web's session: the serve script's gunicorn master and its workers, recycled ones too.
        cpu_before, started = session_cpu_seconds(web.pid), time.monotonic()
        with open(logs / "s10-locust.log", "ab") as log:
            completed = subprocess.run(
                [sys.executable, "-m", "bench.locust_desk", str(plan_path), str(out_path)],
                cwd=REPO_ROOT,
                env={k: v for k, v in env.items() if k != "BENCH_CACHE"},
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=p["seconds"] + 300,
                check=False,
            )
        if completed.returncode != 0 or not out_path.exists():
            raise RuntimeError(f"the Locust run failed (code {completed.returncode}); see agents/s10-locust.log")
        measured = json.loads(out_path.read_text())
        web_cpu = session_cpu_seconds(web.pid) - cpu_before
        pass_s = time.monotonic() - started
        # The agents are gone: every stream must have given its slot back (StreamLease.close).
        time.sleep(1.0)
        open_streams = _stream_slots_held()
        out = _summary(measured, world.probe.since(mark, agency=AGENCY), p, codes)
        out.update(
            open_streams_after=open_streams,
            web_cpu_s=round(web_cpu, 1),
            pass_s=round(pass_s, 1),
            load_average_end=round(os.getloadavg()[0], 2),
        )
        print(
            f"  s10 deskload: {p['users']} agents, asks={out['asks']} failures={out['failures']} "
            f"submit→done p50/p95 ms={_ms(out['p50_ms'])}/{_ms(out['p95_ms'])} "
            f"slowest insurer p95 ms={_ms(out['slowest_p95_ms'])} overhead p95 ms={_ms(out['overhead_p95_ms'])} "
            f"streams open after={open_streams} web CPU {web_cpu:.1f} s in {pass_s:.0f} s",
            flush=True,
        )
        return out
    finally:
        for process in reversed(processes):
            stop_cluster(process.pid)  # its own process group: SIGTERM, then SIGKILL after 1.5 s
            process.wait()


def _summary(measured: dict[str, Any], events: list[Any], p: dict[str, Any], codes: list[str]) -> dict[str, Any]:
    slowest: dict[str, float] = {}
    for event in events:  # each insurer's serving time for an ask's plate; the token calls carry none
        if event.key:
            slowest[event.key] = max(slowest.get(event.key, 0.0), event.duration * 1000.0)
    asks = measured["asks"]
    total = [a["ms"] for a in asks]
    slow = [slowest[a["plate"]] for a in asks if a["plate"] in slowest]
    overhead = [a["ms"] - slowest[a["plate"]] for a in asks if a["plate"] in slowest]
    return {
        "params": p,
        "insurers": codes,
        "asks": len(asks),
        "asks_without_insurer_times": sum(1 for a in asks if a["plate"] not in slowest),
        "reconnects": sum(a["reconnects"] for a in asks),
        "requests": measured["total_requests"],
        "failures": measured["total_failures"],
        "error_samples": measured["errors"][:5],
        "cut_in_flight": measured["cut_in_flight"],
        "logged_in": measured["logged_in"],
        "p50_ms": percentile(total, 50),
        "p95_ms": percentile(total, 95),
        "p99_ms": percentile(total, 99),
        "max_ms": max(total) if total else None,
        "slowest_p50_ms": percentile(slow, 50),
        "slowest_p95_ms": percentile(slow, 95),
        "overhead_p50_ms": percentile(overhead, 50),
        "overhead_p95_ms": percentile(overhead, 95),
        "overhead_p99_ms": percentile(overhead, 99),
        "http": measured["stats"],
        "latencies_ms": total,
        "overheads_ms": [round(v, 1) for v in overhead],
    }


def _stream_slots_held() -> int:
    """Live-stream slots still held (unexpired) in the shared cache table the server counted in."""
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*) FROM {connection.ops.quote_name(settings.CACHE_TABLE)} "  # noqa: S608 - a settings name
            "WHERE cache_key LIKE %s AND expires > %s",
            ["%slot:live-stream:user:%", timezone.now()],
        )
        return int(cursor.fetchone()[0])


def _start(args: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen:
    from bench.s8_screen import _start as start

    return start(args, env, log_path)


def _free_port() -> int:
    from bench.s8_screen import _free_port as free_port

    return free_port()


def _wait_for(url: str, process: subprocess.Popen, timeout: float = 120.0) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the web server exited at start (code {process.returncode}); see agents/s10-web.log")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the web server did not answer {url} within {timeout} s")


def _wait_for_cluster() -> None:
    from django_q.tasks import async_task, result

    if result(async_task("math.floor", 1.5), wait=30_000) != 1:
        raise RuntimeError("qcluster did not run a task within 30 s")


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}"


# --- report --------------------------------------------------------------------------------------


def _met(s: dict[str, Any]) -> bool:
    overhead = s.get("overhead_p95_ms")
    return (
        overhead is not None
        and overhead <= OVERHEAD_TARGET_MS
        and s["failures"] == 0
        and s["open_streams_after"] == 0
        and s["cut_in_flight"] == 0
    )


def summary_rows(s: dict[str, Any]) -> list[list[str]]:
    users = s["params"]["users"]
    platform = (
        f"p95 {_ms(s['p95_ms'])} ms (slowest insurer {_ms(s['slowest_p95_ms'])} ms, "
        f"+{_ms(s['overhead_p95_ms'])} ms); {s['failures']} errors; {s['open_streams_after']} streams open after"
    )
    return [
        [
            f"desk under Locust: submit → last answer, {users} agents via gunicorn (p95)",
            f"≤ slowest insurer + {OVERHEAD_TARGET_MS:.0f} ms, 0 errors, 0 streams left",
            "—",
            "—",
            platform + (" ✅" if _met(s) else " ❌"),
        ]
    ]


def markdown(s: dict[str, Any], plot: str | None) -> list[str]:
    p = s["params"]
    lines = [
        "## Desk under load (`deskload`)",
        "",
        f"{p['users']} Locust agents (spawned {p['spawn_rate']:.0f}/s) for {p['seconds']:.0f} s, thinking "
        f"{p['think_s'][0]}–{p['think_s'][1]} s between asks: each logs in on the login page, opens the trafik "
        "form, submits it (a plate of its own per ask) and reads the request's live-results stream to its "
        "`done` event. The server is `scripts/serve.sh` (gunicorn, gthread workers) on the bench settings "
        "with the database cache table, a qcluster on the ORM broker, SQLite, the sandbox insurers with "
        f"the demo's latencies (×{p['latency_scale']}). Overhead = submit → done − the slowest insurer's own "
        "serving time for that ask (the sandbox's probe).",
        "",
        "| asks | requests | failures | submit → done p50 / p95 / p99 / max (ms) "
        "| slowest insurer p50 / p95 (ms) | overhead p50 / p95 / p99 (ms) | reconnects | streams open after "
        "| web CPU (s) / pass (s) | load average after |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {s['asks']} | {s['requests']} | {s['failures']} | {_ms(s['p50_ms'])} / {_ms(s['p95_ms'])} / "
        f"{_ms(s['p99_ms'])} / {_ms(s['max_ms'])} | {_ms(s['slowest_p50_ms'])} / {_ms(s['slowest_p95_ms'])} | "
        f"{_ms(s['overhead_p50_ms'])} / {_ms(s['overhead_p95_ms'])} / {_ms(s['overhead_p99_ms'])} | "
        f"{s['reconnects']} | {s['open_streams_after']} | {s['web_cpu_s']:.1f} / {s['pass_s']:.0f} | "
        f"{s['load_average_end']:.1f} |",
        "",
        "| request | count | failures | p50 (ms) | p95 (ms) |",
        "|---|---|---|---|---|",
    ]
    for name, row in sorted(s["http"].items()):
        lines.append(
            f"| {name} | {row['requests']} | {row['failures']} | {_ms(row['p50_ms'])} | {_ms(row['p95_ms'])} |"
        )
    if s["error_samples"]:
        errors = "; ".join(f"{e['name']}: {e['error']} (×{e['occurrences']})" for e in s["error_samples"])
        lines += ["", f"Errors: {errors}"]
    if s["p95_ms"] is not None and s["slowest_p95_ms"] is not None:
        bound = s["slowest_p95_ms"] + OVERHEAD_TARGET_MS
        lines += [
            "",
            f"Read p95 against p95 (submit → done {_ms(s['p95_ms'])} ms against the slowest insurer's "
            f"{_ms(s['slowest_p95_ms'])} + {OVERHEAD_TARGET_MS:.0f} ms = {_ms(bound)} ms): "
            f"{'within' if s['p95_ms'] <= bound else 'beyond'}; the target is judged per ask, on the overhead, "
            "which a slow insurer's tail cannot hide.",
        ]
    lines += [
        "",
        f"Target (p95 overhead ≤ {OVERHEAD_TARGET_MS:.0f} ms, no failure, no stream left open, no ask cut): "
        f"{'met' if _met(s) else 'not met'}.",
    ]
    if plot:
        lines += ["", f"![desk under load]({plot})"]
    return lines


def plot(s: dict[str, Any], out_dir: str) -> str | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = (("submit → done", s.get("latencies_ms"), "#1f77b4"), ("overhead", s.get("overheads_ms"), "#ff7f0e"))
    if not any(values for _, values, _ in series):
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, values, color in series:
        values = sorted(values or [])
        if values:
            ax.plot(values, [(i + 1) / len(values) for i in range(len(values))], label=label, color=color)
    ax.axhline(0.95, color="#bbb", linestyle=":", linewidth=1)
    ax.set_xlabel("ms")
    ax.set_ylabel("share of asks")
    ax.set_title(f"Desk under Locust, {s['params']['users']} agents through gunicorn")
    ax.legend(loc="lower right")
    name = "s10_desk_load.png"
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)
    return name
