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

TARGETS = {
    "goodput": 0.97,
    "throttled_share": 0.02,
    "calls_per_first_attempt": 1.1,
    "peak_to_mean": 1.5,
    "fanout_p95_redis_ms": 50.0,
    "fanout_p95_embedded_ms": 250.0,
    "per_call_overhead_us": 2000.0,
}


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


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write(results: dict[str, Any], *, out_dir: Path, raw_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    raw_dir.mkdir(parents=True, exist_ok=True)
    (raw_dir / "results.json").write_text(json.dumps(results, indent=1, default=str))
    scenarios = results["scenarios"]
    plots: dict[str, str] = {}
    for name, plot in (
        ("rate", _plot_rate),
        ("storm", _plot_storm),
        ("fanout", _plot_fanout),
        ("overhead", _plot_overhead),
        ("mixed", _plot_mixed),
    ):
        if name in scenarios:
            plots[name] = plot(scenarios[name], out_dir)
    (out_dir / "results.md").write_text(markdown(results, plots))


# --- markdown --------------------------------------------------------------------------------


def summary_rows(scenarios: dict[str, Any]) -> list[list[str]]:
    rows = []
    if "rate" in scenarios:
        s = scenarios["rate"]["clients"]["platform"]
        ok = (
            s["goodput_share"] >= TARGETS["goodput"]
            and s["throttled_share"] <= TARGETS["throttled_share"]
            and s["lost"] == 0
        )
        rows.append(
            [
                "1 rate ceiling",
                "goodput ≥ 97 % of the contracted rate, ≤ 2 % of attempts throttled, 0 lost",
                f"{_pct(s['goodput_share'])}, {_pct(s['throttled_share'])} throttled, {s['lost']} lost",
                _met(ok),
            ]
        )
    if "storm" in scenarios:
        outage = scenarios["storm"]["outage"]
        for client in ("platform", "platform-engine"):
            if client in outage:
                value = outage[client]["calls_per_first_attempt"]
                rows.append(
                    [
                        "2 retry storm",
                        f"≤ 1.1 calls per first attempt during a full outage ({LABELS[client]})",
                        _n(value, 2),
                        _met(None if value is None else value <= TARGETS["calls_per_first_attempt"]),
                    ]
                )
        throttle = scenarios["storm"]["throttle"]
        for client in ("platform", "platform-engine"):
            if client in throttle:
                value = throttle[client]["peak_to_mean_after"]
                rate = throttle[client].get("send_rate_after")
                extra = f" (send rate after: {rate:.1f}/s)" if rate is not None else ""
                rows.append(
                    [
                        "2 shared throttle",
                        f"calls/s peak-to-mean ≤ 1.5 after a shared throttle ({LABELS[client]})",
                        _n(value, 2) + extra,
                        _met(None if value is None else value <= TARGETS["peak_to_mean"]),
                    ]
                )
    if "fanout" in scenarios:
        clients = scenarios["fanout"]["clients"]
        if "platform" in clients:
            v = clients["platform"]["overhead_p95_ms"]
            rows.append(
                [
                    "3 quote fan-out",
                    "overhead p95 ≤ 250 ms, embedded default",
                    _n(v, 0, " ms"),
                    _met(None if v is None else v <= TARGETS["fanout_p95_embedded_ms"]),
                ]
            )
        for client, where in (("platform-redis", "Redis broker, SQLite"), ("platform-pg", "Redis broker, PostgreSQL")):
            v = clients.get(client, {}).get("overhead_p95_ms")
            rows.append(
                [
                    "3 quote fan-out",
                    f"overhead p95 ≤ 50 ms, {where}",
                    _n(v, 0, " ms") if client in clients else "not measured",
                    _met(None if v is None else v <= TARGETS["fanout_p95_redis_ms"]),
                ]
            )
    if "overhead" in scenarios:
        v = scenarios["overhead"]["variants"]["platform (default)"]["overhead_us"]
        rows.append(
            [
                "4 per-call overhead",
                "≤ 2 ms per call (platform as callers run it)",
                _n(v / 1000.0, 2, " ms"),
                _met(v <= TARGETS["per_call_overhead_us"]),
            ]
        )
    if "mixed" in scenarios:
        s = scenarios["mixed"]["clients"]["platform"]
        rows.append(
            [
                "5 mixed faults",
                "0 lost; only really bad records marked failed",
                f"{s['lost']} lost; {s['marked_failed']} marked failed, {s['failed_bad']} of them bad records",
                _met(s["lost"] == 0 and s["marked_failed"] == s["failed_bad"]),
            ]
        )
    return rows


def markdown(results: dict[str, Any], plots: dict[str, str]) -> str:
    meta = results["meta"]
    scenarios = results["scenarios"]
    parts = [
        "# InsureHub benchmark results",
        "",
        f"{meta['mode']} run, {meta['started_at']}, commit `{meta.get('commit') or '?'}`, "
        f"Python {meta['python']}, {meta['cpus']} CPUs ({meta['machine']}), {meta['database']}; "
        f"{meta.get('wall_seconds', 0):.0f} s in all. Measured: a copy of the working tree taken at the start "
        f"(sources `{meta.get('sources') or '?'}`, {meta.get('uncommitted_files', '?')} files changed or new since "
        f"that commit). Load average {_load(meta.get('load_average_start'))} at the start, "
        f"{_load(meta.get('load_average_end'))} at the end (a shared machine: read the numbers with that).",
        "",
        "Reproduce: `.venv/bin/python -m bench` (full, about 10 minutes) or `.venv/bin/python -m bench --quick`. "
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
        "- Baselines use their own small per-insurer request builders (`bench/wire.py`), the same keep-alive "
        "`requests` sessions (library retries off) and the same number of worker threads as the platform.",
        "",
        "## Targets",
        "",
        _table(["scenario", "target", "measured", ""], summary_rows(scenarios)),
    ]
    found = findings(scenarios)
    if found:
        parts += ["", "## What the numbers say", "", *found]
    if "rate" in scenarios:
        parts += _md_rate(scenarios["rate"], plots.get("rate"))
    if "storm" in scenarios:
        parts += _md_storm(scenarios["storm"], plots.get("storm"))
    if "fanout" in scenarios:
        parts += _md_fanout(scenarios["fanout"], plots.get("fanout"))
    if "overhead" in scenarios:
        parts += _md_overhead(scenarios["overhead"], plots.get("overhead"))
    if "mixed" in scenarios:
        parts += _md_mixed(scenarios["mixed"], plots.get("mixed"))
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
                f"{_n(c['to_first_call_p95_ms'], 0)} ms pass before the first insurer call starts (storing the "
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
            ]
        )
    split = [
        f"- {LABELS[client]}: from the ask to the fan-out pool starting the first insurer call (request stored, "
        f"queued, picked up by a worker, dispatched): p50 {_n(c['to_first_call_p50_ms'], 0)} ms, "
        f"p95 {_n(c['to_first_call_p95_ms'], 0)} ms. The slowest insurer's call: claimed by a pool thread "
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
        f"{p['agents']} agents for {p['seconds']:.0f} s, each asking for a trafik quote from all four insurers, "
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
    ax.axvline(250, color="grey", linestyle="--", linewidth=1, label="target p95, embedded (250 ms)")
    ax.axvline(50, color="grey", linestyle=":", linewidth=1, label="target p95, Redis (50 ms)")
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


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.report RAW_JSON [OUT_DIR]`: write results.md and the plots again from raw numbers."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    raw = Path(args[0])
    out_dir = Path(args[1]) if len(args) > 1 else raw.parent.parent
    write(json.loads(raw.read_text()), out_dir=out_dir, raw_dir=raw.parent)
    print(f"bench.report: {out_dir / 'results.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
