"""Writes `results.md`, the PNG plots and the raw JSON from one run's numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

COLORS = {
    "naive": "#d62728",
    "tenacity": "#ff7f0e",
    "platform": "#1f77b4",
    "platform-engine": "#17becf",
    "platform-redis": "#2ca02c",
    "platform-pg": "#9467bd",
}
LABELS = {
    "naive": "naive",
    "tenacity": "plain tenacity",
    "platform": "platform",
    "platform-engine": "platform (in-process engine)",
    "platform-redis": "platform (Redis)",
    "platform-pg": "platform (PostgreSQL + Redis)",
}

# Issue 14's targets. Repeated numbers are judged on their median.
TARGETS = {
    "goodput": 0.97,
    "throttled_share": 0.02,
    "cpu_ms_per_item": 3.0,  # an aim, reported beside the goodput
    "calls_per_first_attempt": 1.1,
    "peak_to_mean": 1.3,
    "fanout_p95_embedded_ms": 100.0,
    "fanout_p95_redis_ms": 50.0,
    "fanout_p95_pg_ms": 80.0,
    "per_call_overhead_us": 1000.0,
}
FANOUT_TARGETS = {
    "platform": ("embedded (ORM broker, SQLite)", TARGETS["fanout_p95_embedded_ms"]),
    "platform-redis": ("Redis broker, SQLite", TARGETS["fanout_p95_redis_ms"]),
    "platform-pg": ("PostgreSQL + Redis", TARGETS["fanout_p95_pg_ms"]),
}
# The rows a scenario of the new contract stands for when it did not run (skipped or failed).
PENDING_TARGETS = {
    "overload": (
        "overload: 200 agents, one insurer, 10/s contract",
        "0 calls beyond the contract, ≤ 2 % throttled, all answered within the deadline",
    ),
    "scaleout": ("scale-out: two qcluster processes, PostgreSQL + Redis", "≥ 1.8× one"),
    "screen": (
        "agent's screen: answer stored → row shown, 50 agents",
        "p95 ≤ 120 ms embedded, ≤ 60 ms PostgreSQL + Redis",
    ),
    "hosts": ("scale-out across hosts: 2 worker hosts ÷ 1 (network namespaces)", "≥ 1.9× one"),
}
SUMMARY_HEADER = ["scenario", "target", "naive", "plain tenacity", "platform"]


def default_repeat_metrics(name: str, s: dict[str, Any]) -> dict[str, float | None]:
    """The numbers the report reads as repeated for the first five scenarios, when their module
    declares `REPEATS` but no `repeat_metrics` of its own (the names `summary_rows` looks up)."""
    clients = s.get("clients", {})
    if name == "rate":
        c = clients.get("platform", {})
        return {
            "goodput_share": c.get("goodput_share"),
            "throttled_share": c.get("throttled_share"),
            "cpu_ms_per_item": c.get("cpu_ms_per_item"),
        }
    if name == "storm":
        throttle, outage = s.get("throttle", {}), s.get("outage", {})
        return {
            "peak_to_mean_after": throttle.get("platform", {}).get("peak_to_mean_after"),
            "peak_to_mean_after_engine": throttle.get("platform-engine", {}).get("peak_to_mean_after"),
            "calls_per_first_attempt": outage.get("platform", {}).get("calls_per_first_attempt"),
            "calls_per_first_attempt_engine": outage.get("platform-engine", {}).get("calls_per_first_attempt"),
        }
    if name == "fanout":
        return {f"{c}.overhead_p95_ms": clients[c]["overhead_p95_ms"] for c in FANOUT_TARGETS if c in clients}
    if name == "overhead":
        return {"overhead_us": s["variants"]["platform (default)"]["overhead_us"]}
    if name == "mixed":
        return {"lost": clients.get("platform", {}).get("lost")}
    return {}


def _n(value: Any, digits: int = 0, suffix: str = "") -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:,.{digits}f}{suffix}"
    return f"{value:,}{suffix}"


def _pct(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value * 100:.{digits}f} %"


def _met(ok: bool | None) -> str:
    return "n/a" if ok is None else ("✅ met" if ok else "❌ not met")


def _mark(ok: bool | None) -> str:
    return "" if ok is None else (" ✅" if ok else " ❌")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


_BUILT_IN_PLOTS = {
    "rate": "_plot_rate",
    "storm": "_plot_storm",
    "fanout": "_plot_fanout",
    "overhead": "_plot_overhead",
    "mixed": "_plot_mixed",
}


def _module(name: str) -> Any:
    from bench.registry import load

    return load(name)[0]


def write(results: dict[str, Any], *, out_dir: Path, raw_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    raw_dir.mkdir(parents=True, exist_ok=True)
    (raw_dir / "results.json").write_text(json.dumps(results, indent=1, default=str))
    scenarios = results["scenarios"]
    results.setdefault("render_errors", {})
    plots: dict[str, str] = {}
    for name in _ordered(scenarios):
        try:
            if name in _BUILT_IN_PLOTS:
                plots[name] = globals()[_BUILT_IN_PLOTS[name]](scenarios[name], out_dir)
            else:
                module = _module(name)
                if module is not None and callable(getattr(module, "plot", None)):
                    made = module.plot(scenarios[name], out_dir)
                    if made:
                        plots[name] = made
        except Exception as exc:  # a broken plot must not cost the run its tables
            plt.close("all")
            results["render_errors"][f"{name} plot"] = repr(exc)
    (out_dir / "results.md").write_text(markdown(results, plots))


def _ordered(scenarios: dict[str, Any]) -> list[str]:
    """Registered scenarios in the registry's order, then anything else the raw numbers hold."""
    from bench.registry import SCENARIOS

    return [n for n in SCENARIOS if n in scenarios] + [n for n in scenarios if n not in SCENARIOS]


# --- markdown --------------------------------------------------------------------------------


def bare_call_text(meta: dict[str, Any]) -> str:
    bare = meta.get("bare_call")
    if not bare:
        return "the machine's bare call: not measured"
    return (
        f"the machine's bare call: **{bare['median_us'] / 1000:.2f} ms** (median of {bare['calls']} keep-alive "
        f"`requests` GETs to a sandbox insurer with no latency, one thread; p95 {bare['p95_us'] / 1000:.2f} ms)"
    )


def summary_rows(scenarios: dict[str, Any], results: dict[str, Any] | None = None) -> list[list[str]]:
    """The issue 14 targets, one row each: scenario | target | naive | plain tenacity | platform.
    Repeated numbers read "min / **median** / max"; ✅/❌ judges the median."""
    rows = _builtin_rows(scenarios)
    skipped = {**((results or {}).get("skipped") or {}), **((results or {}).get("failed") or {})}
    from bench.registry import BUILT_IN_RENDERERS, SCENARIOS

    for name in SCENARIOS:
        if name in BUILT_IN_RENDERERS:
            continue
        if name in scenarios:
            module = _module(name)
            try:
                rows += [list(map(str, row)) for row in module.summary_rows(scenarios[name])]
                continue
            except Exception as exc:
                why = f"summary_rows failed: {exc!r}"
        elif results is not None and name not in (results.get("meta", {}).get("scenarios") or SCENARIOS):
            continue  # not asked for in this run
        else:
            why = "failed, see below" if name in (results or {}).get("failed", {}) else skipped.get(name, "not run")
        label, target = PENDING_TARGETS.get(name, (name, "—"))
        rows.append([label, target, "—", "—", f"not measured: {why.splitlines()[0][:120]}"])
    return rows


def _builtin_rows(scenarios: dict[str, Any]) -> list[list[str]]:
    from bench.metrics import median_or, spread_text

    rows = []
    if "rate" in scenarios:
        s = scenarios["rate"]
        p, clients = s["params"], s["clients"]
        c = clients["platform"]
        goodput = median_or(s, "goodput_share", c["goodput_share"])
        throttled = median_or(s, "throttled_share", c["throttled_share"])
        ok = goodput >= TARGETS["goodput"] and throttled <= TARGETS["throttled_share"] and c["lost"] == 0
        cpu = c.get("cpu_ms_per_item")
        cpu_text = (
            ""
            if cpu is None
            else f"; CPU {spread_text(s, 'cpu_ms_per_item', cpu, digits=2, suffix=' ms')}/item (aim ≤ 3)"
        )

        def baseline(b: dict[str, Any]) -> str:
            return f"{_pct(b['goodput_share'])}, {_pct(b['throttled_share'])} throttled, {_n(b['lost'])} lost"

        rows.append(
            [
                f"nightly sync, {_n(p['policies'])} policies, contract {p['rate']:.0f}/s",
                "goodput ≥ 97 %, ≤ 2 % throttled, 0 lost; CPU ms per item reported (aim ≤ 3)",
                baseline(clients["naive"]) if "naive" in clients else "—",
                baseline(clients["tenacity"]) if "tenacity" in clients else "—",
                f"{spread_text(s, 'goodput_share', c['goodput_share'], digits=1, suffix=' %', scale=100)}, "
                f"{spread_text(s, 'throttled_share', c['throttled_share'], digits=1, suffix=' %', scale=100)} "
                f"throttled, {_n(c['lost'])} lost{cpu_text}{_mark(ok)}",
            ]
        )
    if "storm" in scenarios:
        s = scenarios["storm"]
        outage, throttle = s["outage"], s["throttle"]

        def first(client: str) -> str:
            c = outage.get(client)
            return "—" if c is None else f"{_n(c['calls_per_first_attempt'], 2)} ({_n(c['lost'])} lost)"

        parts, oks = [], []
        for client, key, label in (
            ("platform", "calls_per_first_attempt", "durable"),
            ("platform-engine", "calls_per_first_attempt_engine", "in-process"),
        ):
            if client in outage:
                single = outage[client]["calls_per_first_attempt"]
                value = median_or(s, key, single)
                oks.append(None if value is None else value <= TARGETS["calls_per_first_attempt"])
                parts.append(f"{spread_text(s, key, single, digits=2)} {label}{_mark(oks[-1])}")
        rows.append(
            ["insurer down: calls per first attempt", "≤ 1.1", first("naive"), first("tenacity"), " / ".join(parts)]
        )

        def ptm(client: str) -> str:
            c = throttle.get(client)
            return "—" if c is None else _n(c["peak_to_mean_after"], 2)

        parts = []
        for client, key, label in (
            ("platform", "peak_to_mean_after", "durable"),
            ("platform-engine", "peak_to_mean_after_engine", "in-process"),
        ):
            if client in throttle:
                single = throttle[client]["peak_to_mean_after"]
                value = median_or(s, key, single)
                ok = None if value is None else value <= TARGETS["peak_to_mean"]
                parts.append(f"{spread_text(s, key, single, digits=2)} {label}{_mark(ok)}")
        rows.append(
            ["after a shared throttle: calls/s peak ÷ mean", "≤ 1.3", ptm("naive"), ptm("tenacity"), " / ".join(parts)]
        )
    if "fanout" in scenarios:
        s = scenarios["fanout"]
        clients = s["clients"]
        agents = s["params"]["agents"]
        for index, (client, (where, target)) in enumerate(FANOUT_TARGETS.items()):
            c = clients.get(client)
            key = f"{client}.overhead_p95_ms"
            single = None if c is None else c["overhead_p95_ms"]
            value = median_or(s, key, single)
            ok = None if value is None else value <= target
            rows.append(
                [
                    f"quote fan-out, {agents} agents: overhead p95, {where}",
                    f"≤ {target:.0f} ms (median of 5)",
                    _n(clients.get("naive", {}).get("overhead_p95_ms"), 0, " ms") if index == 0 else "—",
                    _n(clients.get("tenacity", {}).get("overhead_p95_ms"), 0, " ms") if index == 0 else "—",
                    "not measured (no server binaries)"
                    if c is None
                    else f"{spread_text(s, key, single, suffix=' ms')}{_mark(ok)}",
                ]
            )
    if "overhead" in scenarios:
        s = scenarios["overhead"]
        variants = s["variants"]
        single = variants["platform (default)"]["overhead_us"]
        value = median_or(s, "overhead_us", single)

        def us(name: str) -> str:
            v = variants.get(name)
            return "—" if v is None else _n(v["overhead_us"] / 1000.0, 2, " ms")

        rows.append(
            [
                "per-call overhead over a bare `requests` call",
                "≤ 1 ms",
                us("naive"),
                us("tenacity"),
                f"{spread_text(s, 'overhead_us', single, digits=2, suffix=' ms', scale=0.001)}"
                f"{_mark(value <= TARGETS['per_call_overhead_us'])}",
            ]
        )
    if "mixed" in scenarios:
        s = scenarios["mixed"]["clients"]

        def busy(c: dict[str, Any] | None) -> str:
            if c is None:
                return "—"
            return (
                f"{_pct(c['throttled_share'])} throttled, {_n(c['marked_failed'])} failed ({c['failed_bad']} bad), "
                f"{_n(c['lost'])} lost"
            )

        c = s["platform"]
        rows.append(
            [
                "busy hour: throttles, bad records, 5xx",
                "0 lost; only bad records failed",
                busy(s.get("naive")),
                busy(s.get("tenacity")),
                busy(c) + _mark(c["lost"] == 0 and c["marked_failed"] == c["failed_bad"]),
            ]
        )
    return rows


def repeated_rows(results: dict[str, Any]) -> list[list[str]]:
    """Every repeated number of the run: scenario, number, runs, min, median, max, each run's value."""
    rows = []
    for name in _ordered(results["scenarios"]):
        block = results["scenarios"][name].get("repeats") or {}
        for metric, m in block.get("metrics", {}).items():
            values = ", ".join("—" if v is None else f"{v:,.4g}" for v in m["values"])
            rows.append(
                [
                    name,
                    f"`{metric}`",
                    str(len(m["values"])),
                    _g(m["min"]),
                    f"**{_g(m['median'])}**",
                    _g(m["max"]),
                    values,
                ]
            )
    return rows


def _g(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.4g}"


def summary_text(results: dict[str, Any]) -> list[str]:
    """The summary as plain lines for the console (and for docs/performance.md's table)."""
    meta = results["meta"]
    lines = [
        f"bench summary ({meta['mode']} run, commit {meta.get('commit') or '?'}; {bare_call_text(meta)}"
        + (f"; {_reruns_text(meta)}" if meta.get("reruns") else "")
        + "):"
    ]
    lines += [_table(SUMMARY_HEADER, summary_rows(results["scenarios"], results))]
    return lines


def markdown(results: dict[str, Any], plots: dict[str, str]) -> str:
    meta = results["meta"]
    scenarios = results["scenarios"]
    repeats = repeated_rows(results)
    parts = [
        "# InsureHub benchmark results",
        "",
        f"{meta['mode']} run, {meta['started_at']}, commit `{meta.get('commit') or '?'}`, "
        f"Python {meta['python']}, {meta['cpus']} CPUs ({meta['machine']}), {meta['database']}; "
        f"{meta.get('wall_seconds', 0):.0f} s in all. Measured: a copy of the working tree taken at the start "
        f"(sources `{meta.get('sources') or '?'}`, {meta.get('uncommitted_files', '?')} files changed or new since "
        f"that commit). Load average {_load(meta.get('load_average_start'))} at the start, "
        f"{_load(meta.get('load_average_end'))} at the end (a shared machine: read the numbers with that). "
        + _reruns_text(meta),
        "",
        f"On this machine {bare_call_text(meta)}: read runs on different machines against it.",
        "",
        "Reproduce: `.venv/bin/python -m bench` (full) or `.venv/bin/python -m bench --quick`. "
        "The sandbox insurers run in the bench process with a probe on their door (attempts and throttles are "
        "counted by the insurer, alike for every client); each client runs in a process of its own. "
        "Time is scaled: contracted rates of tens of calls per second and minutes of load stand for a night "
        "or an hour; waits (the insurers' signals, the clients' backoff) are real seconds.",
        "",
        "## The clients",
        "",
        "- **naive**: one call per item with plain `requests`; success or failure, a throttle is a failure for "
        "good, nothing is retried.",
        "- **plain tenacity**: the same call inside `Retrying(wait=wait_exponential(multiplier=1, min=1, max=10), "
        "stop=stop_after_attempt(5), retry=retry_if_result(not ok))`: 1, 2, 4, 8 s, no jitter, the insurer's "
        "wait signal ignored, every non-success retried (bad records and throttles alike).",
        "- **platform**: `insurer_operation_run` (policy lookup, adapter and channel, the error taxonomy, "
        "`DatabaseRecorder` attempt rows, `SharedSendRate` pacing at the account's contracted rate, "
        "`SharedRetryBudget`) — for background work on the durable `SyncItem` records of the nightly sync "
        "(`sync.services`), for quotes through the whole quote-request path and a real qcluster. Each scenario "
        "says which.",
        "- Baselines use their own small per-insurer request builders (each insurer's "
        "`sandbox/insurers/<code>/wire.py`), the same keep-alive `requests` sessions (library retries off) "
        "and the same number of worker threads as the platform.",
        "",
        "## Targets",
        "",
        "Numbers measured more than once in this run read **min / median / max** (the median in bold); "
        "✅/❌ judges the median.",
        "",
        _table(SUMMARY_HEADER, summary_rows(scenarios, results)),
    ]
    if repeats:
        parts += [
            "",
            "## Repeated numbers",
            "",
            "Each noisy number measured several times in this run; the detailed tables below show the run whose "
            "first number is the median one.",
            "",
            _table(["scenario", "number", "runs", "min", "median", "max", "each run"], repeats),
        ]
    notes = [f"- `{name}`: {why}" for name, why in results.get("skipped", {}).items()]
    notes += [f"- `{name}`: the scenario failed; its traceback is below." for name in results.get("failed", {})]
    notes += [f"- {what}: {why}" for what, why in results.get("render_errors", {}).items()]
    if notes:
        parts += ["", "## Not measured in this run", "", *notes]
    found = findings(scenarios)
    if found:
        parts += ["", "## What the numbers say", "", *found]
    builtin = {"rate": _md_rate, "storm": _md_storm, "fanout": _md_fanout, "overhead": _md_overhead, "mixed": _md_mixed}
    for name in _ordered(scenarios):
        try:
            if name in builtin:
                parts += builtin[name](scenarios[name], plots.get(name))
            else:
                module = _module(name)
                if module is not None and callable(getattr(module, "markdown", None)):
                    parts += list(module.markdown(scenarios[name], plots.get(name)))
                else:
                    parts += [
                        "",
                        f"## {name}",
                        "",
                        "(its module has no `markdown(s, plot)`; raw numbers in raw/results.json)",
                    ]
        except Exception as exc:
            parts += [
                "",
                f"## {name}",
                "",
                f"Its section could not be written: `{exc!r}` (raw numbers in raw/results.json).",
            ]
    for name, trace in results.get("failed", {}).items():
        parts += ["", f"## {name} — failed", "", "```", trace.rstrip(), "```"]
    return "\n".join(parts) + "\n"


def _load(values: list[float] | None) -> str:
    return "?" if not values else " / ".join(f"{v:.1f}" for v in values)


def findings(scenarios: dict[str, Any]) -> list[str]:
    """Plain statements read off this run's numbers (no judgement beyond the targets)."""
    out: list[str] = []
    rate = scenarios.get("rate", {}).get("clients", {})
    if "platform" in rate:
        c = rate["platform"]
        steady = sorted(c["delivered_per_s"][1:-1])
        if steady:
            median = steady[len(steady) // 2]
            contract = scenarios["rate"]["params"]["rate"]
            out.append(
                f"- Rate ceiling: the platform paced at the contract and was throttled {_pct(c['throttled_share'])} "
                f"of the time; in its steady 5 s windows it delivered a median {median:.1f}/s "
                f"({_pct(median / contract, 0)} of the contract; pacing aims at 98 %), and {_pct(c['goodput_share'])} "
                f"over the whole run, start-up and tail included. Plain tenacity: "
                f"{_pct(rate['tenacity']['goodput_share'])} with {_pct(rate['tenacity']['throttled_share'])} of its "
                "attempts throttled; naive lost "
                f"{_n(rate['naive']['lost'])} of {_n(rate['naive']['records'])}."
            )
    storm = scenarios.get("storm", {})
    for client, c in storm.get("outage", {}).items():
        if client == "platform" and c["unfinished_at_cap"]:
            why = ", ".join(f"{n} × {reason}" for reason, n in sorted(c["open_why"].items(), key=lambda kv: -kv[1]))
            out.append(
                f"- Retry storm, durable platform: {c['unfinished_at_cap']} items were still open "
                f"{storm['params']['outage']['cap_s'] - storm['params']['outage']['up_at']:.0f} s after the insurer "
                f"came back (state: last message × items — {why}): the backlog had not drained by the cap."
            )
        if client == "platform" and not c["unfinished_at_cap"] and c["drain_s"] is not None:
            out.append(
                f"- Retry storm, durable platform: {_n(c['calls_per_first_attempt'], 2)} calls per first attempt "
                f"during the outage; every item kept ({c['delivered']} of {c['items']} delivered, "
                f"{c['deferred']} deferred), the backlog drained {_n(c['drain_s'], 1)} s after the insurer came back."
            )
        if client == "platform-engine" and c["stops"].get("retry-budget"):
            out.append(
                f"- Retry storm, in-process engine: the retry budget held the insurer to "
                f"{_n(c['calls_per_first_attempt'], 2)} calls per first attempt by refusing "
                f"{c['stops']['retry-budget']} retries; those operations ended failed (a caller without a durable "
                "record loses them)."
            )
    for client, c in storm.get("throttle", {}).items():
        rate_after = c.get("send_rate_after")
        if rate_after is not None and c["delivered"] < c["items"]:
            out.append(
                f"- Shared throttle, {LABELS[client]}: {c['delivered']} of {c['items']} items delivered by the cap; "
                f"its adaptive send rate was {rate_after:.1f}/s at the end (contract "
                f"{storm['params']['rate']:.0f}/s), so its peak÷mean describes a slowed client, not a smooth one."
            )
    fanout = scenarios.get("fanout", {}).get("clients", {})
    for client in ("platform", "platform-redis", "platform-pg"):
        if client in fanout and fanout[client].get("to_first_call_p50_ms") is not None:
            c = fanout[client]
            out.append(
                f"- Fan-out, {LABELS[client]}: of an overhead of p50 {_n(c['overhead_p50_ms'], 0)} / p95 "
                f"{_n(c['overhead_p95_ms'], 0)} ms, p50 {_n(c['to_first_call_p50_ms'], 0)} / p95 "
                f"{_n(c['to_first_call_p95_ms'], 0)} ms pass before the dispatch task claims its rows (storing the "
                "request, the broker, the worker); the baselines' overhead is "
                f"{_n(fanout.get('naive', {}).get('overhead_p50_ms'), 0)} ms p50."
            )
    overhead = scenarios.get("overhead", {}).get("variants", {})
    if overhead:
        parts = [
            f"{name} {v['overhead_us']:,.0f} µs"
            for name, v in overhead.items()
            if name.startswith(("engine", "platform (default)"))
        ]
        out.append("- Per call, over a bare `requests` call: " + "; ".join(parts) + ".")
    mixed = scenarios.get("mixed", {}).get("clients", {})
    if mixed:
        out.append(
            "- Busy hour: "
            + "; ".join(
                f"{LABELS[c]} {_n(v['attempts'])} attempts, {_pct(v['throttled_share'])} throttled, "
                f"{_n(v['marked_failed'])} marked failed ({v['failed_bad']} bad), {_n(v['delivered'])} delivered, "
                f"{_n(v['lost'])} lost"
                for c, v in mixed.items()
            )
            + "."
        )
    return out


def _flavours(clients: dict[str, Any]) -> list[str]:
    return [f"- {LABELS.get(c, c)}: {s['flavour']}" for c, s in clients.items()]


def _img(name: str | None) -> list[str]:
    return ["", f"![{name}]({name})"] if name else []


def _md_rate(s: dict[str, Any], plot: str | None) -> list[str]:
    p = s["params"]
    rows = []
    for client, c in s["clients"].items():
        rows.append(
            [
                LABELS[client],
                _n(c["attempts"]),
                f"{_n(c['throttled'])} ({_pct(c['throttled_share'])})",
                f"{_n(c['marked_failed'])} ({c['failed_bad']} bad)",
                _n(c["deferred"]),
                _n(c.get("open", 0)),
                _n(c["delivered"]),
                _n(c["lost"]),
                _pct(c["goodput_share"]),
                _n(c["seconds"], 1, " s"),
            ]
        )
    return [
        "",
        "## 1. Rate ceiling — nightly sync",
        "",
        f"{_n(p['policies'])} policies at Anka ({s['clients']['platform']['bad_records']} bad records), contracted "
        f"rate {p['rate']:.0f}/s (token bucket, burst {p['burst']}), {p['workers']} worker threads per client "
        f"(latency {p['latency_ms'][0]}–{p['latency_ms'][1]} ms: capacity ≈ "
        f"{p['workers'] / (sum(p['latency_ms']) / 2000):.0f}/s). Goodput = good records delivered per second of the "
        "run, as a share of the contracted rate (the physical limit). Lost = good records neither delivered nor "
        "kept for a later try. Each client has its own bucket; the naive client ran first, alone (it is done in "
        "seconds and its burst keeps the sandbox busy), then tenacity and the platform side by side.",
        "",
        _table(
            [
                "client",
                "attempts",
                "throttled",
                "marked failed",
                "deferred (kept)",
                "open at cap",
                "delivered",
                "lost",
                "goodput",
                "time",
            ],
            rows,
        ),
        "",
        *_flavours(s["clients"]),
        *_img(plot),
    ]


def _md_storm(s: dict[str, Any], plot: str | None) -> list[str]:
    p = s["params"]
    o, t = p["outage"], p["throttle"]
    rows = []
    for client, c in s["outage"].items():
        rows.append(
            [
                LABELS[client],
                _n(c["items"]),
                _n(c["calls_during_outage"]),
                _n(c["first_attempts_during_outage"]),
                _n(c["calls_per_first_attempt"], 2),
                _n(c["delivered"]),
                _n(c["lost"]),
                _n(c["deferred"]),
                _n(c["unfinished_at_cap"]),
                _n(c["drain_s"], 1, " s") if c["drain_s"] is not None else "not drained by the cap",
                _n(c["recovery_peak_to_mean"], 2),
                c["round"],
            ]
        )
    trows = []
    for client, c in s["throttle"].items():
        rate = c.get("send_rate_after")
        trows.append(
            [
                LABELS[client],
                _n(c["attempts"]),
                _n(c["throttled"]),
                f"{_n(c['delivered'])} / {_n(c['items'])}",
                _n(c["peak_to_mean_after"], 2),
                _n(c["peak_to_mean_from_throttle"], 2),
                "—" if rate is None else f"{rate:.1f}/s",
            ]
        )
    return [
        "",
        "## 2. Retry storm — an insurer down, then back; a shared throttle",
        "",
        f"Work arrives at {o['per_s']:.0f}/s per client (evenly spaced, the same schedule for all). Anka answers "
        f"every call with 503 from {o['down_at']:.0f} s to {o['up_at']:.0f} s; arrivals go on until "
        f"{o['arrivals_s']:.0f} s; each client gets at most {o['cap_s']:.0f} s. Calls per first attempt = calls "
        "Anka received during the outage ÷ items whose first attempt fell in it. Drain = from Anka's return until "
        "every item that arrived before it was finished. Peak÷mean: calls per second at Anka from its return to the "
        "last arrival (1 s bins). " + _rounds_text(s),
        "",
        _table(
            [
                "client",
                "items",
                "calls during outage",
                "first attempts in it",
                "calls / first attempt",
                "delivered",
                "lost",
                "deferred (kept)",
                "open at cap",
                "drain after return",
                "calls/s peak÷mean after return",
                "round",
            ],
            rows,
        ),
        "",
        f"Shared throttle: {t['per_s']:.0f}/s per client; from {t['at']:.0f} s, for {t['throttle_s']:.0f} s, "
        f"every call is throttled (`Retry-After: 2`). Calls per second at Anka, peak ÷ mean, in the "
        f"{t['after_s']:.0f} s after the throttle ends (1 s bins); all four clients side by side.",
        "",
        _table(
            [
                "client",
                "attempts",
                "throttled",
                "delivered",
                "peak÷mean after",
                "peak÷mean from throttle start",
                "platform send rate after",
            ],
            trows,
        ),
        "",
        *_flavours(s["outage"]),
        *_img(plot),
    ]


def _rounds_text(s: dict[str, Any]) -> str:
    rounds = s.get("rounds", {})
    if len(rounds) > 1:
        return (
            "The retry budget is one per insurer, shared by all its platform workers, so the durable platform "
            "ran its own round (B) on the same schedule after naive, tenacity and the in-process engine (A): "
            "neither platform flavour's successes lend the other budget."
        )
    return "All clients ran in one round (quick mode)."


def _md_fanout(s: dict[str, Any], plot: str | None) -> list[str]:
    p = s["params"]
    rows = []
    for client, c in s["clients"].items():
        rows.append(
            [
                LABELS[client],
                f"{c['complete']} / {c['requests']}",
                _n(c["overhead_p50_ms"], 0),
                _n(c["overhead_p95_ms"], 0),
                _n(c["overhead_p99_ms"], 0),
                _n(c["last_answer_p50_ms"], 0),
                _n(c["last_answer_p95_ms"], 0),
                f"{c['rss_per_worker_mb']:.0f} MB (peak {c['rss_peak_per_worker_mb']:.0f})",
                "—" if c.get("cluster_cpu_ms_per_request") is None else _n(c["cluster_cpu_ms_per_request"], 1),
            ]
        )
    split = [
        f"- {LABELS[client]}: the request's row written p50 {_n(c.get('stored_p50_ms'), 0)} / p95 "
        f"{_n(c.get('stored_p95_ms'), 0)} ms after the ask (validation, the accounts read); its rows claimed by "
        f"the dispatch task (committed, queued, picked up by a worker) p50 {_n(c['to_first_call_p50_ms'], 0)} / "
        f"p95 {_n(c['to_first_call_p95_ms'], 0)} ms after the ask. The slowest insurer's call: claimed "
        f"p50 {_n(c.get('before_slowest_p50_ms'), 0)} / p95 {_n(c.get('before_slowest_p95_ms'), 0)} ms after the "
        f"ask; from claimed to its answer stored, minus the insurer's own time, p50 "
        f"{_n(c.get('around_slowest_p50_ms'), 0)} / p95 {_n(c.get('around_slowest_p95_ms'), 0)} ms: claimed to "
        f"sent p50 {_n(c.get('pre_call_p50_ms'), 0)} / p95 {_n(c.get('pre_call_p95_ms'), 0)} ms, on the wire "
        f"beyond the insurer's own time p50 {_n(c.get('wire_p50_ms'), 0)} / p95 {_n(c.get('wire_p95_ms'), 0)} ms, "
        f"answered to stored p50 {_n(c.get('post_call_p50_ms'), 0)} / p95 {_n(c.get('post_call_p95_ms'), 0)} ms."
        for client, c in s["clients"].items()
        if c.get("to_first_call_p50_ms") is not None
    ]
    lines = [
        "",
        "## 3. Quote fan-out — agents asking four insurers at once",
        "",
        f"{p['agents']} agents for {p['seconds']:.0f} s{_runs(p)}, each asking for a trafik quote from all four "
        "insurers, "
        f"thinking {p['think_s'][0]}–{p['think_s'][1]} s between requests; realistic insurer latencies "
        f"(Deniz 1–4 s on quotes, the others 50–400 ms{_scale(p)}). Overhead = time from the agent's ask to the last "
        "answer minus the slowest insurer's own time on that request (measured at the insurer). Memory per worker "
        "= VmRSS of the largest process doing the work (a qcluster worker for the platform; the agent process for "
        "the baselines).",
        "",
        _table(
            [
                "client",
                "requests",
                "overhead p50 (ms)",
                "p95",
                "p99",
                "last answer p50 (ms)",
                "p95",
                "memory per worker",
                "qcluster CPU ms per request",
            ],
            rows,
        ),
        "",
        *split,
        *_flavours(s["clients"]),
    ]
    if s.get("redis"):
        lines += ["", f"Redis: {s['redis']}."]
    if s.get("postgres"):
        lines += ["", f"PostgreSQL: {s['postgres']}."]
    return lines + _img(plot)


def _runs(p: dict[str, Any]) -> str:
    repeats = p.get("repeats", 1)
    return (
        ""
        if repeats <= 1
        else f" (each platform flavour {repeats} times: its row is the run with the median p95, the spread is "
        "in the targets table; the baselines once)"
    )


def _scale(p: dict[str, Any]) -> str:
    scale = p.get("latency_scale", 1.0)
    return "" if scale == 1.0 else f"; scaled ×{scale} in this quick run"


def _md_overhead(s: dict[str, Any], plot: str | None) -> list[str]:
    rows = [
        [name, _n(v["median_us"], 0), _n(v["mean_us"], 0), _n(v["p95_us"], 0), _n(v["overhead_us"], 0)]
        for name, v in s["variants"].items()
    ]
    p = s["params"]
    return [
        "",
        "## 4. Per-call overhead",
        "",
        f"One thread, one call at a time against the same sandbox ({p['rounds']} rounds × {p['calls']} calls per "
        "variant, interleaved). Overhead = the variant's median minus the bare `requests` call's median (the 404 "
        "rows: minus the bare 404). Microseconds per call.",
        "",
        _table(["variant", "median µs", "mean µs", "p95 µs", "overhead µs"], rows),
        *_img(plot),
    ]


def _md_mixed(s: dict[str, Any], plot: str | None) -> list[str]:
    p = s["params"]
    issue = s["issue_naive_hour"]
    rows = [
        [
            "naive, the issue's real hour",
            _n(issue["attempts"]),
            f"{_n(issue['throttled'])} ({_pct(issue['throttled'] / issue['attempts'])})",
            "?",
            f"{_n(issue['marked_failed'])} ({issue['bad']} bad)",
            _n(issue["delivered"]),
            "—",
            "—",
            "—",
        ]
    ]
    for client, c in s["clients"].items():
        rows.append(
            [
                LABELS[client],
                _n(c["attempts"]),
                f"{_n(c['throttled'])} ({_pct(c['throttled_share'])})",
                _n(c["gateway_5xx"]),
                f"{_n(c['marked_failed'])} ({c['failed_bad']} bad)",
                _n(c["delivered"]),
                _n(c["lost"]),
                _n(c["unfinished_at_cap"]),
                _n(c["done_after_s"], 1, " s"),
            ]
        )
    contract = p["rate_per_insurer"] * 4
    return [
        "",
        "## 5. Mixed faults — a busy hour, compressed",
        "",
        f"{_n(s['records'])} records ({s['bad_records']} bad) over {p['seconds']:.0f} s across the four insurers, "
        f"contract {p['rate_per_insurer']:.0f}/s per insurer ({contract:.0f}/s in all, burst {p['burst']}); "
        f"arrivals {p['peak']}× the contract for {p['peak_s']:.0f} s in every {p['cycle_s']:.0f} s and "
        f"{p['trough']}× in between; {p['error_rate'] * 100:.0f} % of the calls past the bucket get a 502 page. "
        "Attempts are policy-status calls as counted by the insurers (Çınar's token calls not included).",
        "",
        _table(
            [
                "client",
                "attempts",
                "throttled",
                "5xx seen",
                "marked failed",
                "delivered",
                "lost",
                "open at cap",
                "all done after",
            ],
            rows,
        ),
        "",
        *_flavours(s["clients"]),
        *_img(plot),
    ]


# --- plots -----------------------------------------------------------------------------------


def _save(fig: Any, out_dir: Path, name: str) -> str:
    fig.tight_layout()
    fig.savefig(out_dir / name, dpi=110)
    plt.close(fig)
    return name


def _plot_rate(s: dict[str, Any], out_dir: Path) -> str:
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for client, c in s["clients"].items():
        xs = [i * c["window_s"] for i in range(len(c["throttled_per_min"]))]
        top.plot(xs, c["throttled_per_min"], label=LABELS[client], color=COLORS[client], drawstyle="steps-post")
        bottom.plot(xs, c["delivered_per_s"], label=LABELS[client], color=COLORS[client], drawstyle="steps-post")
    bottom.axhline(s["params"]["rate"], color="grey", linestyle="--", linewidth=1, label="contracted rate")
    top.set_yscale("symlog", linthresh=100)
    top.set_ylim(bottom=0)
    top.set_ylabel("throttled per minute (symlog)")
    top.set_title(f"Rate ceiling: throttled answers per minute ({s['clients']['naive']['window_s']:.0f} s windows)")
    bottom.set_ylabel("answered OK per second")
    bottom.set_xlabel("seconds since start")
    top.legend()
    bottom.legend()
    return _save(fig, out_dir, "s1_rate_ceiling.png")


def _plot_storm(s: dict[str, Any], out_dir: Path) -> str:
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 7))
    for client, c in s["outage"].items():
        top.plot(range(len(c["calls_per_s"])), c["calls_per_s"], label=LABELS[client], color=COLORS[client])
    outage = next(iter(s["outage"].values()))["outage_s"]
    top.axvspan(outage[0], outage[1], color="grey", alpha=0.2, label="insurer down (503)")
    top.set_ylabel("calls/s received by the insurer")
    top.set_xlabel("seconds since start")
    top.set_title("Retry storm: calls per second at the insurer, per client")
    top.legend(fontsize=8)
    for client, c in s["throttle"].items():
        xs = [i * c["bin_s"] for i in range(len(c["calls_per_s"]))]
        bottom.plot(xs, [v / c["bin_s"] for v in c["calls_per_s"]], label=LABELS[client], color=COLORS[client])
    window = next(iter(s["throttle"].values()))["throttle_s"]
    bottom.axvspan(window[0], window[1], color="grey", alpha=0.2, label="every call throttled")
    bottom.set_ylabel("calls/s (0.5 s bins)")
    bottom.set_xlabel("seconds since start")
    bottom.set_title("After a shared throttle: waves (no jitter) or a spread")
    bottom.legend(fontsize=8)
    return _save(fig, out_dir, "s2_retry_storm.png")


def _plot_fanout(s: dict[str, Any], out_dir: Path) -> str:
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for client, c in s["clients"].items():
        values = sorted(max(v, 0.5) for v in c["overheads_ms"])
        if values:
            ax.plot(
                values, [(i + 1) / len(values) for i in range(len(values))], label=LABELS[client], color=COLORS[client]
            )
    for (where, target), style in zip(FANOUT_TARGETS.values(), ("--", ":", "-."), strict=True):
        ax.axvline(target, color="grey", linestyle=style, linewidth=1, label=f"target p95, {where} ({target:.0f} ms)")
    ax.set_xscale("log")
    ax.set_xlabel("overhead per request, ms (time to last answer − slowest insurer's own time)")
    ax.set_ylabel("share of requests")
    ax.set_title("Quote fan-out overhead (cumulative)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "s3_fanout_overhead.png")


def _plot_overhead(s: dict[str, Any], out_dir: Path) -> str:
    names = list(s["variants"])
    values = [s["variants"][n]["median_us"] for n in names]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ax.barh(names, values, color="#1f77b4")
    ax.invert_yaxis()
    ax.set_xlabel("median µs per call (same sandbox, one thread)")
    ax.set_title("Per-call cost")
    for y, v in enumerate(values):
        ax.text(v, y, f" {v:,.0f}", va="center", fontsize=8)
    return _save(fig, out_dir, "s4_per_call.png")


def _plot_mixed(s: dict[str, Any], out_dir: Path) -> str:
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    arrivals = s["arrival_per_s"]
    top.plot(range(len(arrivals)), arrivals, color="black", linewidth=1, label="records arriving")
    for client, c in s["clients"].items():
        top.plot(range(len(c["calls_per_s"])), c["calls_per_s"], label=LABELS[client], color=COLORS[client])
        bottom.plot(range(len(c["throttled_per_s"])), c["throttled_per_s"], label=LABELS[client], color=COLORS[client])
    contract = s["params"]["rate_per_insurer"] * 4
    top.axhline(contract, color="grey", linestyle="--", linewidth=1, label="contracted rate (all insurers)")
    top.set_ylabel("calls/s")
    top.set_title("Mixed faults: calls and throttles per second")
    bottom.set_ylabel("throttled/s")
    bottom.set_xlabel("seconds since start")
    top.legend(fontsize=8)
    bottom.legend(fontsize=8)
    return _save(fig, out_dir, "s5_mixed_faults.png")


def _django_setup() -> None:
    import os

    import django
    from django.apps import apps

    if not apps.ready:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
        django.setup()


def rerun_merge(base: dict[str, Any], rerun: dict[str, Any]) -> dict[str, Any]:
    """`base` with the scenarios `rerun` measured taken from it, and a note in the meta saying
    which, on what commit and what machine: a fix to one scenario is measured again without
    passing off the other scenarios' older numbers as the new commit's, or re-running them all."""
    merged = {**base, "scenarios": {**base["scenarios"], **rerun["scenarios"]}}
    meta = rerun["meta"]
    note = {
        "scenarios": sorted(rerun["scenarios"]),
        "commit": meta.get("commit"),
        "uncommitted_files": meta.get("uncommitted_files"),
        "started_at": meta.get("started_at"),
        "bare_call": meta.get("bare_call"),
    }
    merged["meta"] = {**base["meta"], "reruns": [*base["meta"].get("reruns", []), note]}
    return merged


def _bare_ms(bare: dict[str, Any] | None) -> str:
    return "?" if not bare else f"{bare['median_us'] / 1000:.2f}"


def _reruns_text(meta: dict[str, Any]) -> str:
    return " ".join(
        f"Re-run later and merged here: {', '.join(r['scenarios'])} — commit `{r.get('commit') or '?'}`, "
        f"{r.get('started_at')}, bare call {_bare_ms(r.get('bare_call'))} ms."
        for r in meta.get("reruns", [])
    )


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.report RAW_JSON [OUT_DIR]`: write results.md and the plots again from raw numbers.
    `python -m bench.report --merge RERUN_JSON RAW_JSON`: first put the scenarios of a later run
    (`--scenario ... --out DIR`) into RAW_JSON (noted in its meta), then write as above."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    _django_setup()  # a scenario module may import the project's models; nothing touches a database
    if args and args[0] == "--merge":
        rerun, args = json.loads(Path(args[1]).read_text()), args[2:]
        Path(args[0]).write_text(json.dumps(rerun_merge(json.loads(Path(args[0]).read_text()), rerun), indent=1))
    raw = Path(args[0])
    out_dir = Path(args[1]) if len(args) > 1 else raw.parent.parent
    write(json.loads(raw.read_text()), out_dir=out_dir, raw_dir=raw.parent)
    print(f"bench.report: {out_dir / 'results.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
