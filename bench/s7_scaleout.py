"""Scenario 7 — scale-out: the nightly sync on one qcluster, then on two, PostgreSQL + Redis.

The setup of docs/reliability.md ("One machine, or several"): a throw-away PostgreSQL cluster for
the data, a throw-away Redis as django-q2's broker and as the shared send-rate / retry-budget
state, and real `manage.py qcluster` processes ("machines"). One agency's policies at Anka, whose contract (and
the sandbox's bucket for it) is far above what the clusters can do, so the contract never binds;
the insurer answers in 200–400 ms, so what binds is the workers: each cluster runs
`workers` django-q2 workers, each drain task keeps `drain_threads` tries in flight. The same
number of policies is synced with one cluster, then with two (the run's drain tasks: clusters ×
workers × 2, in 10-s slices); items per second = policies ÷ (last item final − run stored), and the ratio.

No naive or tenacity client here: scale-out is the platform's own property.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.env import World
from bench.proc import REPO_ROOT, Child, run_together

INSURER = "anka"
AGENCY = "S7SCALE"
TARGET_RATIO = 1.8


def params(quick: bool) -> dict[str, Any]:
    common = {
        "contract": 5_000.0,
        "latency_ms": [200, 400],
        "workers": 2,
        "drain_threads": 4,
        "clusters": [1, 2],
    }
    if quick:
        return {**common, "policies": 200, "cap_s": 30.0}
    return {**common, "policies": 2_000, "cap_s": 240.0}


def run(world: World) -> dict[str, Any]:
    p = params(world.quick)
    redis_url = world.redis_url()
    postgres_url = world.postgres_url() if redis_url else ""
    if not (redis_url and postgres_url):
        missing = "redis-server" if not redis_url else "PostgreSQL's server programs"
        return {"params": p, "skipped": f"{missing} not installed", "runs": {}}
    world.reset({"latency_ms": p["latency_ms"]})
    world.add_accounts(INSURER, [AGENCY], rate=p["contract"], burst=int(p["contract"]))
    spec = {
        **p,
        "entry": "bench.s7_scaleout:platform_main",
        "django": True,
        "agency": AGENCY,
        "urls": {code: world.url(code) for code in world.servers},
        "log_dir": str(Path(world.raw_dir) / "agents"),
    }
    env = {
        # A Redis database of its own: the fan-out scenario's clusters use 0 and 1.
        "BENCH_REDIS_URL": redis_url.rsplit("/", 1)[0] + "/2",
        "BENCH_DATABASE_URL": postgres_url,
    }
    mark = world.probe.mark()
    _, outs = run_together([Child("s7-platform", spec, world.raw_dir, env=env)], timeout=900)
    out = outs["s7-platform"]
    events = world.probe.since(mark, agency=AGENCY)
    out["insurer_calls"] = len(events)
    out["throttled"] = sum(1 for e in events if e.throttled)
    rates = {int(k): v["items_per_s"] for k, v in out["runs"].items() if v.get("items_per_s")}
    out["ratio"] = rates[2] / rates[1] if rates.get(1) and rates.get(2) else None
    out["params"] = p
    for k, r in sorted(out["runs"].items()):
        print(
            f"  s7 {k} cluster(s): {r['final']}/{r['policies']} final in {r['seconds']:.1f}s = "
            f"{r['items_per_s']:.1f} items/s",
            flush=True,
        )
    if out["ratio"] is not None:
        print(f"  s7 two ÷ one: {out['ratio']:.2f}", flush=True)
    return out


# --- the agent process (Django on the throw-away PostgreSQL + Redis) ----------------------------


def platform_main(spec: dict[str, Any]) -> dict[str, Any]:
    from django.core.management import call_command

    from bench.agent import ready_and_wait
    from bench.env import platform_account, policy_override
    from integrations.demo import demo_data_seed
    from sandbox import DEFAULT_ACCOUNTS

    call_command("migrate", verbosity=0)
    demo_data_seed(base_urls=spec["urls"], accounts=DEFAULT_ACCOUNTS)
    account = platform_account(None, INSURER, spec["agency"], contracted_rate=spec["contract"])
    # The default policy caps an account at 50 calls/s: an admin raises it to the contract.
    policy_override(INSURER, "policy_status", rate_ceiling=spec["contract"])
    ready_and_wait()
    runs = {}
    for count in spec["clusters"]:
        runs[str(count)] = _sync_with(count, account, spec)
    return {
        "flavour": "sync_run_start + sync_run_enqueue (2 × clusters × workers drain tasks) on real qcluster processes; "
        "PostgreSQL data, Redis broker and shared state",
        "runs": runs,
    }


def _sync_with(count: int, account: Any, spec: dict[str, Any]) -> dict[str, Any]:
    from policies.models import Policy
    from sync.models import SyncItem, SyncRun
    from sync.services import sync_run_enqueue, sync_run_start
    from work.item import WorkState

    SyncItem.objects.all().delete()
    SyncRun.objects.all().delete()
    Policy.objects.all().delete()
    Policy.objects.bulk_create(
        [
            Policy(
                agency=account.agency,
                insurer=account.insurer,
                account=account,
                product="trafik",
                policy_no=f"AK-P-{count}{i:05d}",
            )
            for i in range(spec["policies"])
        ],
        batch_size=1000,
    )
    env = {
        **os.environ,
        "Q_WORKERS": str(spec["workers"]),
        "SYNC_DRAIN_THREADS": str(spec["drain_threads"]),
        # Slices of 10 s: a slice's successor goes to whichever cluster's pusher takes it first,
        # so a cluster that grabbed more drain tasks than it has workers does not keep them.
        "SYNC_DRAIN_SECONDS": "10",
    }
    clusters = [_start_cluster(env, Path(spec["log_dir"]) / f"s7-cluster-{count}-{n}.log") for n in range(count)]
    try:
        _wait_for_clusters(clusters)
        started = time.monotonic()
        run = sync_run_start(trigger=SyncRun.Trigger.COMMAND)
        # Twice the workers of all clusters: each cluster's pusher takes some, and every worker
        # has a drain to run even where another cluster's pusher was quicker.
        sync_run_enqueue(run, drains=2 * count * spec["workers"])
        open_states = (WorkState.QUEUED, WorkState.IN_FLIGHT, WorkState.PENDING)
        deadline = started + spec["cap_s"]
        while time.monotonic() < deadline and run.items.filter(state__in=open_states).exists():
            time.sleep(0.1)
        ended = time.monotonic()
        states = dict(_state_counts(run.items.all()))
    finally:
        for cluster in clusters:
            _stop_cluster(cluster)
    final = states.get(WorkState.SUBMITTED, 0) + states.get(WorkState.FAILED, 0) + states.get(WorkState.DEFERRED, 0)
    seconds = ended - started
    return {
        "clusters": count,
        "policies": spec["policies"],
        "final": final,
        "states": states,
        "seconds": seconds,
        "items_per_s": final / seconds if seconds > 0 else None,
    }


def _state_counts(items: Any) -> list[tuple[str, int]]:
    from django.db.models import Count

    return list(items.order_by().values_list("state").annotate(n=Count("pk")))


def _start_cluster(env: dict[str, str], log_path: Path) -> subprocess.Popen:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_for_clusters(clusters: list[subprocess.Popen]) -> None:
    """Up when trivial tasks have gone through; then a moment for every cluster's workers."""
    from django_q.tasks import async_task, result

    task_id = async_task("math.floor", 1.5)
    if result(task_id, wait=60_000) != 1:
        raise RuntimeError("qcluster did not run a task within 60 s")
    time.sleep(2.0)
    for cluster in clusters:
        if cluster.poll() is not None:
            raise RuntimeError("a qcluster exited at start")


def _stop_cluster(cluster: subprocess.Popen) -> None:
    from bench.s3_fanout import stop_cluster

    stop_cluster(cluster.pid)
    try:
        cluster.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


# --- report ---------------------------------------------------------------------------------------


def _rate(s: dict[str, Any], count: int) -> str:
    r = s.get("runs", {}).get(str(count)) or s.get("runs", {}).get(count)
    return "—" if not r or r.get("items_per_s") is None else f"{r['items_per_s']:.1f}/s"


def summary_rows(s: dict[str, Any]) -> list[list[str]]:
    if s.get("skipped"):
        return [["scale-out: 2 qclusters ÷ 1 (PostgreSQL + Redis)", f"≥ {TARGET_RATIO}×", "—", "—", "skipped"]]
    ratio = s.get("ratio")
    mark = "" if ratio is None else (" ✅" if ratio >= TARGET_RATIO else " ❌")
    cell = "—" if ratio is None else f"**{ratio:.2f}×** ({_rate(s, 1)} → {_rate(s, 2)}){mark}"
    return [["scale-out: 2 qclusters ÷ 1 (PostgreSQL + Redis)", f"≥ {TARGET_RATIO}×", "—", "—", cell]]


def markdown(s: dict[str, Any], plot: str | None) -> list[str]:
    p = s["params"]
    lines = [
        "## Scale-out (`scaleout`)",
        "",
        f"{p['policies']:,} policies of one agency at Anka, synced by real `qcluster` processes on a throw-away "
        f"PostgreSQL (data) and Redis (broker, shared send rate and budget): first one cluster, then two. Each "
        f"cluster runs {p['workers']} workers; the run is handed to 2 × clusters × workers drain tasks (10-s "
        "slices, each handing over to a successor), each keeping "
        f"{p['drain_threads']} tries in flight. The insurer answers in {p['latency_ms'][0]}–{p['latency_ms'][1]} ms "
        f"and the contract ({p['contract']:,.0f}/s, the sandbox's bucket alike) never binds: the workers do. "
        "Items per second = policies ÷ (the last item final − the run stored).",
        "",
    ]
    if s.get("skipped"):
        return [*lines, f"Skipped: {s['skipped']}."]
    lines += ["| clusters | final | seconds | items/s |", "|---|---|---|---|"]
    for key, r in sorted(s["runs"].items(), key=lambda kv: int(kv[0])):
        lines.append(f"| {key} | {r['final']:,} / {r['policies']:,} | {r['seconds']:.1f} | {_rate(s, int(key))} |")
    ratio = s.get("ratio")
    lines += [
        "",
        f"Insurer calls {s.get('insurer_calls', 0):,}, throttled {s.get('throttled', 0):,}.",
        "",
        f"Two clusters ÷ one: {'—' if ratio is None else f'{ratio:.2f}×'} (target ≥ {TARGET_RATIO}×: "
        f"{'met' if ratio is not None and ratio >= TARGET_RATIO else 'not met'}).",
    ]
    if plot:
        lines += ["", f"![scale-out]({plot})"]
    return lines


def plot(s: dict[str, Any], out_dir: Any) -> str | None:
    return ratio_plot(
        s,
        out_dir,
        unit="cluster",
        colors=["#7f9fbf", "#2f5f8f"],
        title="Nightly sync, PostgreSQL + Redis",
        name="s7_scaleout.png",
        target=TARGET_RATIO,
    )


def ratio_plot(
    s: dict[str, Any], out_dir: Any, *, unit: str, colors: list[str], title: str, name: str, target: float
) -> str | None:
    """Items per second with one and two `unit`s, against the target line: the scale-out plots
    (across processes here, across namespace hosts in s9_hosts) are one picture."""
    if s.get("skipped") or not s.get("runs"):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted(s["runs"], key=int)
    values = [s["runs"][k].get("items_per_s") or 0.0 for k in keys]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.bar([f"{k} {unit}{'s' if int(k) > 1 else ''}" for k in keys], values, color=colors[: len(keys)])
    if values and values[0]:
        ax.axhline(values[0] * target, color="grey", linestyle="--", linewidth=1, label=f"{target}× one")
        ax.legend(loc="upper left", fontsize=8)
    ax.set_ylabel("items synced per second")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(Path(out_dir) / name, dpi=120)
    plt.close(fig)
    return name
