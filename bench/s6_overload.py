"""Scenario 6 — overload: far more agents than the contract allows ask one insurer at once.

`agents` agents (200 in a full run) ask Çınar for a trafik quote in the same instant, on one
agency account whose contract is `contracted_rate` calls a second (10/s) with a bucket of
`contract_burst` calls. The insurer's own token bucket *is* the contract: every call it
throttles from its bucket is a call beyond the contract (an insurer may suspend an agency that
keeps doing that), counted by the sandbox itself (the probe's "throttled" note), the same way
for every client. Each agent's request has the quote operation's real deadline
(`policy_for("cinar", "trafik_quote").deadline`, 10 s): an agent is answered in time when it
has a quote, or a clear "busy", before it.

* naive: `agents` threads, one call each, a throttle is a failure;
* plain tenacity: the same threads, retrying every non-success at 1, 2, 4, 8 s;
* platform: `insurer_operation_run` per agent (the shared send rate in SQLite, the retry budget,
  the attempt log), `agents` threads split over `platform_procs` processes sharing the
  account: every exchange (the token call included) takes a send slot; an agent whose slot
  lies beyond its deadline is told at once that the insurer is busy (`LOCAL_RATE_LIMIT`,
  nothing sent).

Each client has its own agency account (its own bucket at the insurer) and process(es); they
run side by side.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from bench.clients import NAIVE, PLATFORM, TENACITY
from bench.env import World, credentials_for, policy_overrides_clear
from bench.metrics import percentile, series, share
from bench.proc import Child, run_together

INSURER = "cinar"
CLIENTS = (NAIVE, TENACITY, PLATFORM)
FIELDS = {"owner_id": "10000000146", "registration_serial": "AB123456", "usage": "private"}
LOCAL_BUSY = "LOCAL_RATE_LIMIT"
TARGET_THROTTLED_SHARE = 0.02


def params(quick: bool) -> dict[str, Any]:
    if quick:
        return {
            "agents": 120,
            "contracted_rate": 10.0,
            "contract_burst": 10,
            "latency_ms": [20, 60],
            "platform_procs": 2,
            "cap_s": 40.0,
        }
    return {
        "agents": 200,
        "contracted_rate": 10.0,
        "contract_burst": 10,
        "latency_ms": [50, 150],
        "platform_procs": 4,
        "cap_s": 60.0,
    }


def _agency(client: str) -> str:
    return f"S6{client.upper()}"


def _plate(client: str, index: int) -> str:
    city = {NAIVE: 6, TENACITY: 7, PLATFORM: 34}[client]
    return f"{city:02d}OV{index:04d}"


def run(world: World) -> dict[str, Any]:
    from integrations.retry_policies import policy_for

    p = params(world.quick)
    deadline = policy_for(INSURER, "trafik_quote").deadline
    world.reset({"latency_ms": p["latency_ms"]})
    policy_overrides_clear()
    agencies = {client: _agency(client) for client in CLIENTS}
    world.add_accounts(INSURER, agencies.values(), rate=p["contracted_rate"], burst=p["contract_burst"])
    children = []
    for client in CLIENTS:
        procs = p["platform_procs"] if client == PLATFORM else 1
        indexes = list(range(p["agents"]))
        for proc in range(procs):
            spec = {
                "entry": "bench.s6_overload:platform_main" if client == PLATFORM else "bench.s6_overload:baseline_main",
                "django": client == PLATFORM,
                "client": client,
                "agency": agencies[client],
                "plates": [_plate(client, i) for i in indexes[proc::procs]],
                "url": world.url(INSURER),
                "credentials": credentials_for(INSURER, agencies[client]),
                "contracted_rate": p["contracted_rate"],
                "cap_s": p["cap_s"],
            }
            children.append(Child(f"s6-{client}-{proc}", spec, world.raw_dir))
    mark = world.probe.mark()
    start_at, outs = run_together(children, timeout=p["cap_s"] + 120)
    out: dict[str, Any] = {"params": p, "insurer": INSURER, "deadline_s": deadline, "clients": {}}
    for client in CLIENTS:
        records = [r for name, o in outs.items() if name.startswith(f"s6-{client}-") for r in o["records"]]
        flavour = next(o["flavour"] for name, o in outs.items() if name.startswith(f"s6-{client}-"))
        events = world.probe.since(mark, agency=agencies[client])
        out["clients"][client] = _summary(client, flavour, records, events, start_at, deadline, p)
        c = out["clients"][client]
        print(
            f"  s6 overload {client}: beyond contract={c['beyond_contract']} calls={c['calls']} "
            f"throttled={_pct(c['throttled_share'])} quotes={c['quotes']} busy={c['local_busy']} "
            f"failed={c['failed']} answered in time={c['answered_in_time']}/{c['agents']} "
            f"p100={_s(c['answer_s_max'])}",
            flush=True,
        )
    return out


def _summary(
    client: str,
    flavour: str,
    records: list[list[Any]],
    events: list,
    start_at: float,
    deadline: float,
    p: dict[str, Any],
) -> dict[str, Any]:
    # record: [plate, ok, code, attempts, began, finished]
    answers = [r[5] - r[4] for r in records]
    quotes = sum(1 for r in records if r[1])
    busy = sum(1 for r in records if not r[1] and r[2] == LOCAL_BUSY)
    beyond = sum(1 for e in events if e.note == "throttled")
    throttled = sum(1 for e in events if e.throttled)
    end = max([e.start for e in events] + [start_at + 1.0])
    return {
        "flavour": flavour,
        "agents": p["agents"],
        "answered": len(records),
        "calls": len(events),
        "calls_by_operation": _count(e.operation for e in events),
        "beyond_contract": beyond,
        "throttled": throttled,
        "throttled_share": share(throttled, len(events)),
        "quotes": quotes,
        "local_busy": busy,
        "failed": len(records) - quotes - busy,
        "failed_codes": _count(r[2] for r in records if not r[1] and r[2] != LOCAL_BUSY),
        "answered_in_time": sum(1 for a in answers if a <= deadline),
        "quotes_in_time": sum(1 for r in records if r[1] and r[5] - r[4] <= deadline),
        "answer_s_p50": percentile(answers, 50),
        "answer_s_p95": percentile(answers, 95),
        "answer_s_max": max(answers) if answers else None,
        "calls_per_s": series((e.start for e in events), start=start_at, end=end, bin_s=0.5),
        "throttled_per_s": series((e.start for e in events if e.throttled), start=start_at, end=end, bin_s=0.5),
        "bin_s": 0.5,
    }


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for value in values:
        out[str(value)] = out.get(str(value), 0) + 1
    return out


# --- agent processes -------------------------------------------------------------------------


def _fire(plates: list[str], ask: Any, cap_s: float) -> list[list[Any]]:
    """One thread per agent, all released at once; each asks once and records its answer."""
    go = threading.Event()
    records: list[list[Any]] = []

    def agent(plate: str) -> None:
        go.wait()
        began = time.monotonic()
        try:
            ok, code, attempts = ask(plate)
        except Exception as exc:  # a crash is this agent's failure, not the run's
            ok, code, attempts = False, f"CRASH {type(exc).__name__}"[:80], 0
        records.append([plate, ok, code, attempts, began, time.monotonic()])

    threads = [threading.Thread(target=agent, args=(plate,), daemon=True) for plate in plates]
    for thread in threads:
        thread.start()
    return _release(go, threads, records, cap_s)


def _release(go: threading.Event, threads: list[threading.Thread], records: list, cap_s: float) -> list[list[Any]]:
    from bench.agent import ready_and_wait

    ready_and_wait()
    go.set()
    deadline = time.monotonic() + cap_s
    for thread in threads:
        thread.join(max(deadline - time.monotonic(), 0.0))
    return list(records)


def baseline_main(spec: dict[str, Any]) -> dict[str, Any]:
    from bench.clients import RUNNERS
    from bench.wire import wire_for

    wire = wire_for(INSURER, spec["url"], spec["credentials"])
    wire.prepare()  # set-up (Çınar's token), before the clock starts
    runner = RUNNERS[spec["client"]]

    def ask(plate: str) -> tuple[bool, str, int]:
        result = runner(lambda: wire.trafik_quote({**FIELDS, "plate": plate}))
        return result.ok, result.last.code, result.attempts

    return {
        "flavour": "plain requests, one thread per agent, all at once",
        "records": _fire(spec["plates"], ask, spec["cap_s"]),
    }


def platform_main(spec: dict[str, Any]) -> dict[str, Any]:
    from integrations.calling.calls import Endpoint, insurer_operation_run

    endpoint = Endpoint(
        insurer_code=INSURER,
        base_url=spec["url"],
        credentials=spec["credentials"],
        account_key=f"{INSURER}:{spec['agency']}",
        contracted_rate=spec["contracted_rate"],
    )

    def ask(plate: str) -> tuple[bool, str, int]:
        from django.db import connection

        try:
            data = {**FIELDS, "plate": plate}
            outcome = insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=data)
        finally:
            connection.close()
        return outcome.ok, outcome.provider_code, outcome.attempts

    return {
        "flavour": "insurer_operation_run per agent (shared send rate in SQLite, every exchange paced, "
        "DatabaseRecorder), one thread per agent over several processes sharing the account",
        "records": _fire(spec["plates"], ask, spec["cap_s"]),
    }


# --- report ----------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def _cell(c: dict[str, Any] | None) -> str:
    if not c:
        return "—"
    return (
        f"{c['beyond_contract']} beyond contract, {_pct(c['throttled_share'])} throttled, "
        f"{c['answered_in_time']}/{c['agents']} answered in time"
    )


def summary_rows(s: dict[str, Any]) -> list[list[str]]:
    clients = s.get("clients", {})
    return [
        [
            f"overload ({s['params']['agents']} agents, {s['params']['contracted_rate']:g}/s contract)",
            "0 beyond contract, ≤ 2 % throttled, all answered in time",
            _cell(clients.get(NAIVE)),
            _cell(clients.get(TENACITY)),
            _cell(clients.get(PLATFORM)) + _verdict(clients.get(PLATFORM)),
        ]
    ]


def _verdict(c: dict[str, Any] | None) -> str:
    return "" if not c else (" ✅" if _met(c) else " ❌")


def _met(c: dict[str, Any]) -> bool:
    return (
        c["beyond_contract"] == 0
        and (c["throttled_share"] or 0.0) <= TARGET_THROTTLED_SHARE
        and c["answered_in_time"] == c["agents"]
    )


def markdown(s: dict[str, Any], plot: str | None) -> list[str]:
    p = s["params"]
    lines = [
        "## Overload: many agents, one contract",
        "",
        f"{p['agents']} agents ask {s['insurer']} for a trafik quote at the same instant, on one account whose "
        f"contract is {p['contracted_rate']:g} calls/s (bucket of {p['contract_burst']}); the quote's deadline is "
        f"{s['deadline_s']:g} s. The insurer's bucket is the contract: a call it throttles from its bucket is a "
        "call beyond the contract. Target: 0 beyond the contract, ≤ 2 % throttled by the insurer, every agent "
        "answered (a quote, or a clear 'busy') within the deadline.",
        "",
        "| client | calls at the insurer | beyond contract | throttled | quotes | local 'busy' | failed "
        "| answered in time | answer p50 / p95 / max | target |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for client in CLIENTS:
        c = s["clients"].get(client)
        if not c:
            continue
        lines.append(
            f"| {client} | {c['calls']} | {c['beyond_contract']} | {_pct(c['throttled_share'])} | {c['quotes']} "
            f"| {c['local_busy']} | {c['failed']} | {c['answered_in_time']}/{c['agents']} "
            f"| {_s(c['answer_s_p50'])} / {_s(c['answer_s_p95'])} / {_s(c['answer_s_max'])} "
            f"| {'met' if _met(c) else 'not met'} |"
        )
    lines += ["", *(f"- {client}: {s['clients'][client]['flavour']}" for client in CLIENTS if client in s["clients"])]
    platform = s["clients"].get(PLATFORM)
    if platform:
        lines += [
            "",
            f"The platform's calls by operation: {platform['calls_by_operation']} (Çınar's token calls take send "
            "slots too). An agent whose send slot lay beyond the deadline was told at once that the insurer is "
            "busy, and nothing was sent for it.",
        ]
    if plot:
        lines += ["", f"![overload]({plot})"]
    return [*lines, ""]


def plot(s: dict[str, Any], out_dir: Any) -> str | None:
    import matplotlib

    matplotlib.use("Agg")
    from pathlib import Path

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    for client in CLIENTS:
        c = s["clients"].get(client)
        if not c:
            continue
        bin_s = c["bin_s"]
        xs = [i * bin_s for i in range(len(c["calls_per_s"]))]
        ax.step(xs, [v / bin_s for v in c["calls_per_s"]], where="post", label=f"{client}: calls/s")
    ax.axhline(s["params"]["contracted_rate"], color="black", linestyle="--", linewidth=1, label="contract")
    ax.axvline(s["deadline_s"], color="grey", linestyle=":", linewidth=1, label="deadline")
    ax.set_xlabel("seconds since the agents asked")
    ax.set_ylabel("calls/s at the insurer")
    ax.set_yscale("symlog", linthresh=10)
    ax.set_ylim(bottom=0)
    ax.set_title(f"Overload: {s['params']['agents']} agents, one {s['params']['contracted_rate']:g}/s contract")
    ax.legend(fontsize=8)
    fig.tight_layout()
    name = "s6_overload.png"
    fig.savefig(Path(out_dir) / name, dpi=110)
    plt.close(fig)
    return name
