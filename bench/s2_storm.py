"""Scenario 2 — retry storm: an insurer fully down for a while, then back; and a shared throttle.

Work arrives at a steady rate (the same schedule for every client, each on its own agency
account at Anka, each in its own process, `workers` threads each). Part A: after a normal
spell every call to Anka answers `503 SERVICE_UNAVAILABLE` (no `Retry-After`: a dead backend
does not know when it is back) until the outage ends; arrivals go on a while after it.

* calls received during the outage per first attempt made during it (the retry budget at work),
* time from the insurer's return until every item that arrived before it is finished,
* calls per second at the insurer around the return.

The retry budget is one per insurer, shared by every platform worker; so that one platform
flavour's successes do not lend the other budget, the outage is played twice on the same
schedule: once for naive, tenacity and the platform's in-process engine (`insurer_operation_run`,
which spends the budget), once for the platform's durable path (`SyncItem` records).

Part B, a shared throttle: every call for `throttle_s` seconds is answered with Anka's throttle
(`Retry-After: 2`), as when an insurer's gateway sheds load. Then: calls per second at the
insurer, peak over mean, for each client (tenacity comes back in synchronised waves at 1, 2, 4 s;
the platform honours the wait plus a random spread and paces).
"""

from __future__ import annotations

import time
from typing import Any

from bench.clients import NAIVE, TENACITY
from bench.env import World, credentials_for, platform_account, policy_overrides_clear, sync_tables_clear
from bench.metrics import peak_to_mean, series
from bench.proc import Child, run_together

INSURER = "anka"
DURABLE = "platform"
ENGINE = "platform-engine"
CLIENTS = (NAIVE, TENACITY, DURABLE, ENGINE)
ENTRIES = {
    NAIVE: "bench.drivers:baseline_open_main",
    TENACITY: "bench.drivers:baseline_open_main",
    ENGINE: "bench.drivers:engine_open_main",
    DURABLE: "bench.drivers:durable_open_main",
}
OUTAGE_FAULT = {"operation": "*", "fault": "error", "code": "SERVICE_UNAVAILABLE", "times": None}
THROTTLE_FAULT = {"operation": "*", "fault": "throttle", "wait_seconds": 2, "times": None}
# A full run plays the scenario this many times (issue 14: the noisy numbers min / median / max).
REPEATS = 5


def params(quick: bool) -> dict[str, Any]:
    if quick:
        return {
            "rate": 50.0,
            "burst": 10,
            "workers": 8,
            "latency_ms": [5, 20],
            "outage": {"per_s": 10.0, "down_at": 1.0, "up_at": 3.0, "arrivals_s": 4.0, "cap_s": 6.0},
            "throttle": {"per_s": 20.0, "at": 1.0, "throttle_s": 1.0, "arrivals_s": 4.0, "cap_s": 5.0, "after_s": 2.0},
        }
    return {
        "rate": 50.0,
        "burst": 10,
        "workers": 16,
        "latency_ms": [20, 60],
        # Sized for one of REPEATS runs (about a minute in all). The outage is long enough that
        # the retry budget's reserve is small beside the first attempts made during it.
        "outage": {"per_s": 20.0, "down_at": 2.0, "up_at": 14.0, "arrivals_s": 18.0, "cap_s": 36.0},
        "throttle": {"per_s": 20.0, "at": 2.0, "throttle_s": 2.0, "arrivals_s": 14.0, "cap_s": 24.0, "after_s": 10.0},
    }


def _schedule(prefix: str, per_s: float, seconds: float) -> list[list[Any]]:
    """Evenly spaced arrivals: the load is the same for every client, and free of noise."""
    n = int(per_s * seconds)
    return [[i / per_s, f"AK-P-{prefix}{i:06d}"] for i in range(n)]


def _agency(phase: str, client: str) -> str:
    return f"S2{phase}{client.replace('platform-', 'P').replace('platform', 'DURABLE').upper()}"


def _round(
    world: World, p: dict[str, Any], phase: str, clients: tuple[str, ...], schedule: list[list[Any]], cfg: dict
) -> tuple[float, dict[str, Any], dict[str, list], dict[str, float]]:
    world.reset({"latency_ms": p["latency_ms"]})
    sync_tables_clear()
    policy_overrides_clear()
    agencies = {client: _agency(phase, client) for client in clients}
    world.add_accounts(INSURER, agencies.values(), rate=p["rate"], burst=p["burst"])
    children = []
    for client in clients:
        agency = agencies[client]
        if client in (DURABLE, ENGINE):
            platform_account(world, INSURER, agency, contracted_rate=p["rate"])
        spec = {
            "entry": ENTRIES[client],
            "django": client in (DURABLE, ENGINE),
            "client": client,
            "agency": agency,
            "workers": p["workers"],
            "cap_s": cfg["cap_s"],
            "schedule": schedule,
            "insurers": {
                INSURER: {
                    "url": world.url(INSURER),
                    "credentials": credentials_for(INSURER, agency),
                    "contracted_rate": p["rate"],
                }
            },
        }
        children.append(Child(f"s2{phase.lower()}-{client}", spec, world.raw_dir))
    state = world.servers[INSURER].state
    marks: dict[str, float] = {}

    def fault_on(rule: dict[str, Any], name: str) -> Any:
        def action() -> None:
            state.add_faults([rule])
            marks[name] = time.monotonic()

        return action

    def fault_off(name: str) -> Any:
        def action() -> None:
            state.clear_faults()
            marks[name] = time.monotonic()

        return action

    if phase == "A" or phase == "B":
        timeline = [(cfg["down_at"], fault_on(OUTAGE_FAULT, "down")), (cfg["up_at"], fault_off("up"))]
    else:
        timeline = [(cfg["at"], fault_on(THROTTLE_FAULT, "down")), (cfg["at"] + cfg["throttle_s"], fault_off("up"))]
    mark = world.probe.mark()
    start_at, outs = run_together(children, timeline=timeline, timeout=cfg["cap_s"] + 120)
    events = {client: world.probe.since(mark, agency=agencies[client]) for client in clients}
    results = {client: outs[f"s2{phase.lower()}-{client}"] for client in clients}
    return start_at, results, events, marks


def _outage_summary(
    client: str, result: dict[str, Any], events: list, start_at: float, marks: dict[str, float], cfg: dict
) -> dict[str, Any]:
    down, up = marks["down"], marks["up"]
    first_seen: dict[str, float] = {}
    for e in events:
        if e.key not in first_seen or e.start < first_seen[e.key]:
            first_seen[e.key] = e.start
    calls_during = sum(1 for e in events if down <= e.start < up)
    firsts_during = sum(1 for t in first_seen.values() if down <= t < up)
    records = result["records"]  # [key, ok, state, attempts, arrived, finished, code, stop]
    total = len(records) + result["unfinished"]
    delivered = sum(1 for r in records if r[1])
    deferred = sum(1 for r in records if r[2] == "DEFERRED")
    before_return = [r for r in records if r[4] < up]
    drain = max(max((r[5] for r in before_return if r[5] is not None), default=up) - up, 0.0)
    end = max([e.start for e in events] + [up + 1.0])
    per_s = series((e.start for e in events), start=start_at, end=end, bin_s=1.0)
    # Up to the last arrival: after it, calls/s falls to nothing for everybody.
    recovery = series((e.start for e in events), start=up, end=min(up + 20.0, start_at + cfg["arrivals_s"]), bin_s=1.0)
    return {
        "flavour": result["flavour"],
        "items": total,
        "attempts": len(events),
        "calls_during_outage": calls_during,
        "first_attempts_during_outage": firsts_during,
        "calls_per_first_attempt": calls_during / firsts_during if firsts_during else None,
        "delivered": delivered,
        "deferred": deferred,
        "unfinished_at_cap": result["unfinished"],
        "lost": total - delivered - deferred - result["unfinished"],
        # Items still open at the cap: the backlog did not drain within it.
        "drain_s": None if result["unfinished"] else drain,
        "recovery_peak_to_mean": peak_to_mean(recovery),
        "stops": _stops(records),
        "open_why": result.get("open_why", {}),
        "calls_per_s": per_s,
        "outage_s": [down - start_at, up - start_at],
    }


def _stops(records: list) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        if not r[1]:
            reason = r[7] or r[2] or "failed"
            out[reason] = out.get(reason, 0) + 1
    return out


def _throttle_summary(
    result: dict[str, Any], events: list, start_at: float, marks: dict[str, float], cfg: dict
) -> dict:
    down, up = marks["down"], marks["up"]
    after = series((e.start for e in events), start=up, end=up + cfg["after_s"], bin_s=1.0)
    around = series((e.start for e in events), start=down, end=up + cfg["after_s"], bin_s=1.0)
    end = max([e.start for e in events] + [up + cfg["after_s"]])
    records = result["records"]
    return {
        "flavour": result["flavour"],
        "attempts": len(events),
        "throttled": sum(1 for e in events if e.throttled),
        "delivered": sum(1 for r in records if r[1]),
        "items": len(records) + result["unfinished"],
        "peak_to_mean_after": peak_to_mean(after),
        "peak_to_mean_from_throttle": peak_to_mean(around),
        "calls_per_s_after": after,
        "calls_per_s": series((e.start for e in events), start=start_at, end=end, bin_s=0.5),
        "bin_s": 0.5,
        "throttle_s": [down - start_at, up - start_at],
    }


def run(world: World) -> dict[str, Any]:
    p = params(world.quick)
    out: dict[str, Any] = {"params": p, "insurer": INSURER, "outage": {}, "throttle": {}, "rounds": {}}
    o = p["outage"]
    schedule = _schedule("S2A", o["per_s"], o["arrivals_s"])
    # Quick mode (a smoke test) plays the outage once, with all four side by side.
    rounds = (
        (("A", (NAIVE, TENACITY, ENGINE, DURABLE)),)
        if world.quick
        else (
            ("A", (NAIVE, TENACITY, ENGINE)),
            ("B", (DURABLE,)),
        )
    )
    for phase, clients in rounds:
        out["rounds"][phase] = list(clients)
        start_at, results, events, marks = _round(world, p, phase, clients, schedule, o)
        for client in clients:
            summary = _outage_summary(client, results[client], events[client], start_at, marks, o)
            summary["round"] = phase
            out["outage"][client] = summary
            print(
                f"  s2 outage {client}: calls/first={_fmt(summary['calls_per_first_attempt'])} "
                f"delivered={summary['delivered']}/{summary['items']} lost={summary['lost']} "
                f"drain={_fmt(summary['drain_s'])}s stops={summary['stops']}",
                flush=True,
            )
    t = p["throttle"]
    schedule = _schedule("S2C", t["per_s"], t["arrivals_s"])
    start_at, results, events, marks = _round(world, p, "C", CLIENTS, schedule, t)
    from integrations.models import SendRateState

    rates = dict(SendRateState.objects.values_list("account_key", "rate"))
    for client in CLIENTS:
        summary = _throttle_summary(results[client], events[client], start_at, marks, t)
        summary["send_rate_after"] = rates.get(f"{INSURER}:{_agency('C', client)}")
        out["throttle"][client] = summary
        print(
            f"  s2 shared throttle {client}: peak/mean after={_fmt(summary['peak_to_mean_after'])} "
            f"attempts={summary['attempts']} delivered={summary['delivered']}/{summary['items']}",
            flush=True,
        )
    return out


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
