"""Scenario 9 — scale-out across hosts: the nightly sync on one worker host, then on two.

Scenario 7 (`s7_scaleout.py`) runs its qclusters side by side on one network stack. Here each
qcluster is a host of its own — a network namespace (`bench/netns.py`) — and reaches the db host's
PostgreSQL and Redis over a veth and a bridge, through a proxy that delays every chunk a few ms
each way (this kernel has no netem), and the sandbox insurers on the db host likewise. One agency
pair's policies at Anka, whose contract never binds; the insurer answers in 200–400 ms, so what
binds is the workers: each host runs `workers` django-q2 workers, each drain task keeps
`drain_threads` tries in flight. The same number of policies is synced with one host, then with
two; items per second = policies ÷ (the last item's last change − the run stored), both on the
database's clock, and the ratio.

Needs root and `ip` (network namespaces), PostgreSQL's server programs and redis-server; without
them the scenario reports "skipped: <why>".
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from bench.env import World
from bench.s7_scaleout import ratio_plot

INSURER = "anka"
TARGET_RATIO = 1.9


def params(quick: bool) -> dict[str, Any]:
    common = {
        "contract": 5_000.0,
        "latency_ms": [200, 400],
        "proxy_delay_ms": 2.0,
        "workers": 2,
        "drain_threads": 4,
        "hosts": [1, 2],
    }
    if quick:
        return {**common, "policies": 120}
    # BENCH_S9_POLICIES: a smaller full run on a busy machine.
    return {**common, "policies": int(os.environ.get("BENCH_S9_POLICIES", "2000"))}


def run(world: World) -> dict[str, Any]:
    from bench import hosts_ctl
    from bench.netns import HostProbe, Hosts, unavailable

    p = params(world.quick)
    why = unavailable()
    if why:
        return {"params": p, "skipped": why, "runs": {}}
    hosts = Hosts(max(p["hosts"]), delay_ms=p["proxy_delay_ms"], log_dir=Path(world.raw_dir) / "hosts")
    try:
        hosts.start()
        # All four (the platform's seed wants every insurer's address); only Anka has policies.
        from sandbox import DEFAULT_ACCOUNTS, registered_codes

        codes = [code for code in registered_codes() if code in DEFAULT_ACCOUNTS]
        servers = hosts.start_sandbox(codes, {"known_policies_only": False, "latency_ms": p["latency_ms"]})
        probe = HostProbe(servers)
        servers[INSURER].state.add_accounts(
            [{**a, "rate_per_second": p["contract"], "burst": int(p["contract"])} for a in DEFAULT_ACCOUNTS[INSURER]]
        )
        local = hosts.local_env()
        spec = {
            "urls": {code: server.base_url for code, server in servers.items()},
            "codes": [INSURER],
            "contract": p["contract"],
            "count": p["policies"],
            "tag": "S9",
            # The default policy caps an account at 50 calls/s: an admin raises it to the contract.
            "operation_policies": {"policy_status": {"rate_ceiling": p["contract"]}},
        }
        hosts_ctl.call(local, "prepare", spec)
        runs = {}
        for count in p["hosts"]:
            mark = len(probe.events)
            runs[str(count)] = _sync_on(hosts, local, spec, count, p)
            # Which host made the calls: an idle host (drains stuck behind the pump) shows here.
            peers = Counter(e.peer for e in probe.events[mark:] if e.operation == "policy_status")
            runs[str(count)]["calls_by_host"] = {str(n): peers.get(hosts.worker_ip(n), 0) for n in range(1, count + 1)}
        events = probe.calls(operation="policy_status")
    finally:
        hosts.close()
    rates = {int(k): v["items_per_s"] for k, v in runs.items() if v.get("items_per_s")}
    out = {
        "flavour": "sync_run_start + sync_run_enqueue (2 × hosts × workers drain tasks) on qclusters in network "
        "namespaces; PostgreSQL and Redis on a db host behind a delaying proxy",
        "params": p,
        "runs": runs,
        "insurer_calls": len(events),
        "ratio": rates[2] / rates[1] if rates.get(1) and rates.get(2) else None,
        "leftover_namespaces": hosts.leftovers(),
    }
    for k, r in sorted(runs.items()):
        print(
            f"  s9 {k} host(s): {r['final']}/{r['policies']} final in {r['seconds']:.1f}s = "
            f"{r['items_per_s']:.1f} items/s (calls by host {r.get('calls_by_host')})",
            flush=True,
        )
    if out["ratio"] is not None:
        print(f"  s9 two hosts ÷ one: {out['ratio']:.2f}", flush=True)
    return out


def _sync_on(hosts: Any, local: dict[str, str], spec: dict[str, Any], count: int, p: dict[str, Any]) -> dict:
    from bench import hosts_ctl

    hosts_ctl.call(local, "policies", spec)
    env = hosts.worker_env(
        Q_WORKERS=str(p["workers"]),
        SYNC_DRAIN_THREADS=str(p["drain_threads"]),
        # Slices of 10 s: a slice's successor goes to whichever host's pusher takes it first.
        SYNC_DRAIN_SECONDS="10",
        LOG_LEVEL="WARNING",
    )
    clusters = [hosts.qcluster(n, env, f"qcluster-{count}-w{n}.log") for n in range(1, count + 1)]
    try:
        hosts_ctl.call(local, "clusters", {"count": count, "timeout": 120})
        run = hosts_ctl.call(local, "enqueue", {"drains": 2 * count * p["workers"]})
        done = hosts_ctl.call(local, "wait", {"run": run["run"], "timeout": 600}, timeout=660)
        result = hosts_ctl.call(local, "report", {"run": run["run"]})
    finally:
        for cluster in clusters:
            hosts.stop_cluster(cluster)
    final = sum(n for state, n in done["states"].items() if state in ("SUBMITTED", "FAILED", "DEFERRED"))
    seconds = result["seconds"] or 0.0
    return {
        "hosts": count,
        "policies": p["policies"],
        "final": final,
        "states": done["states"],
        "seconds": seconds,
        "items_per_s": final / seconds if seconds > 0 else None,
    }


# --- report ---------------------------------------------------------------------------------------

LABEL = "scale-out across hosts: 2 worker hosts ÷ 1 (network namespaces)"


def _rate(s: dict[str, Any], count: int) -> str:
    r = s.get("runs", {}).get(str(count))
    return "—" if not r or r.get("items_per_s") is None else f"{r['items_per_s']:.1f}/s"


def summary_rows(s: dict[str, Any]) -> list[list[str]]:
    if s.get("skipped"):
        return [[LABEL, f"≥ {TARGET_RATIO}×", "—", "—", f"skipped: {s['skipped']}"]]
    ratio = s.get("ratio")
    mark = "" if ratio is None else (" ✅" if ratio >= TARGET_RATIO else " ❌")
    cell = "—" if ratio is None else f"**{ratio:.2f}×** ({_rate(s, 1)} → {_rate(s, 2)}){mark}"
    return [[LABEL, f"≥ {TARGET_RATIO}×", "—", "—", cell]]


def markdown(s: dict[str, Any], plot: str | None) -> list[str]:
    p = s["params"]
    lines = [
        "## Scale-out across hosts (`hosts`)",
        "",
        f"{p['policies']:,} policies at Anka, synced by `qcluster` processes each on a worker host of its own "
        "(a network namespace, `bench/netns.py`) that reaches the db host's PostgreSQL and Redis over a veth, "
        f"through a proxy delaying {p['proxy_delay_ms']:g} ms each way: first one host, then two. Each host runs "
        f"{p['workers']} workers; the run is handed to 2 × hosts × workers drain tasks, each keeping "
        f"{p['drain_threads']} tries in flight. The insurer answers in {p['latency_ms'][0]}–{p['latency_ms'][1]} ms "
        "and the contract never binds. Items per second = policies ÷ (the last item's last change − the run "
        "stored), on the database's clock.",
        "",
    ]
    if s.get("skipped"):
        return [*lines, f"Skipped: {s['skipped']}."]
    lines += ["| hosts | final | seconds | items/s | calls by host |", "|---|---|---|---|---|"]
    for key, r in sorted(s["runs"].items(), key=lambda kv: int(kv[0])):
        spread = " / ".join(f"{n:,}" for n in (r.get("calls_by_host") or {}).values()) or "—"
        lines.append(
            f"| {key} | {r['final']:,} / {r['policies']:,} | {r['seconds']:.1f} | {_rate(s, int(key))} | {spread} |"
        )
    ratio = s.get("ratio")
    lines += [
        "",
        f"Insurer calls {s.get('insurer_calls', 0):,}.",
        "",
        f"Two hosts ÷ one: {'—' if ratio is None else f'{ratio:.2f}×'} (target ≥ {TARGET_RATIO}×: "
        f"{'met' if ratio is not None and ratio >= TARGET_RATIO else 'not met'}).",
    ]
    if plot:
        lines += ["", f"![scale-out across hosts]({plot})"]
    return lines


def plot(s: dict[str, Any], out_dir: Any) -> str | None:
    return ratio_plot(
        s,
        out_dir,
        unit="host",
        colors=["#8fbf7f", "#3f7f2f"],
        title="Nightly sync across namespace hosts",
        name="s9_hosts.png",
        target=TARGET_RATIO,
    )
