"""Scenario 5 — mixed faults: a busy hour, compressed, with throttles, bad records and 5xx.

The issue's busy hour, seen by a naive client: 48,007 attempts, 6,719 throttled (14.0 %), 6,777
marked failed of which only 58 (0.12 %) were really bad records, 41,230 delivered. Here, the
same mix: policy-status work for all four insurers arrives in waves (a peak at 1.8× the
contracted rate for 2 s in every 10 s, 0.72× in between: 0.94× on average, so a client that
smooths the peaks can keep up), each agency's contract is a token bucket per insurer, one record
in 800 is a number the insurer does not know (permanent), and 1 % of the calls that get past
an insurer's bucket meet its gateway's 502 page. Every client gets the same schedule, on its own
accounts, in its own process, side by side.

* naive: one call per record, success or failure; a throttle is a failure.
* tenacity: `wait_exponential` 1–8 s and `stop_after_attempt(5)` on every non-success.
* platform: the durable path (a `SyncItem` per arriving record, the product's
  `sync_item_process`, retries PENDING until due, `sync_pump`), every insurer's own throttle
  signal honoured (Anka `Retry-After`, Boğaziçi `<TekrarDenemeSn>`, Çınar's HTTP-date, Deniz
  `X-RateLimit-Reset`).
"""

from __future__ import annotations

from typing import Any

from bench.clients import NAIVE, PLATFORM, TENACITY
from bench.env import World, credentials_for, platform_account, policy_overrides_clear, sync_tables_clear
from bench.metrics import series
from bench.proc import Child, run_together
from sandbox import insurer_class, registered_codes

# Every registered sandbox insurer, and the prefix its policy numbers carry (the drivers tell
# the insurer of a record by it: `bench.drivers._insurer_of`).
INSURERS = tuple(registered_codes())
PREFIX = {code: insurer_class(code).prefix for code in INSURERS}
AGENCIES = {NAIVE: "S5NAIVE", TENACITY: "S5TENACITY", PLATFORM: "S5PLATFORM"}
ENTRIES = {
    NAIVE: "bench.drivers:baseline_open_main",
    TENACITY: "bench.drivers:baseline_open_main",
    PLATFORM: "bench.drivers:durable_open_main",
}
BAD_EVERY = 800
ISSUE_NAIVE_HOUR = {"attempts": 48_007, "throttled": 6_719, "marked_failed": 6_777, "bad": 58, "delivered": 41_230}


def params(quick: bool) -> dict[str, Any]:
    base = {
        "rate_per_insurer": 12.0,
        "burst": 5,
        "peak": 1.8,
        "trough": 0.72,
        "cycle_s": 10.0,
        "peak_s": 2.0,
        "error_rate": 0.01,
        "latency_ms": [20, 60],
    }
    if quick:
        return {**base, "seconds": 5.0, "workers": 8, "cap_s": 8.0, "latency_ms": [5, 20]}
    return {**base, "seconds": 60.0, "workers": 16, "cap_s": 120.0}


def _open_bad(records: list, bad: set[str]) -> int:
    """Bad records not among the finished ones: still open at the cap."""
    return len(bad) - sum(1 for r in records if r[0] in bad)


def schedule(p: dict[str, Any]) -> list[list[Any]]:
    """Arrivals at the profile's rate (total over all insurers), round robin over them."""
    contract = p["rate_per_insurer"] * len(INSURERS)
    out: list[list[Any]] = []
    t, i = 0.0, 0
    while t < p["seconds"]:
        in_peak = (t % p["cycle_s"]) < p["peak_s"]
        code = INSURERS[i % len(INSURERS)]
        kind = "X" if i % BAD_EVERY == 100 else "P"
        out.append([t, f"{PREFIX[code]}-{kind}-S5{i:06d}"])
        t += 1.0 / (contract * (p["peak"] if in_peak else p["trough"]))
        i += 1
    return out


def run(world: World) -> dict[str, Any]:
    p = params(world.quick)
    world.reset({"latency_ms": p["latency_ms"]})
    sync_tables_clear()
    policy_overrides_clear()
    for code in INSURERS:
        world.add_accounts(code, AGENCIES.values(), rate=p["rate_per_insurer"], burst=p["burst"])
        # A gateway 502 page on 1 % of the calls that get past the bucket (same seeded RNG for all).
        world.servers[code].state.add_faults(
            [{"operation": "policy_status", "fault": "html", "http_status": 502, "rate": p["error_rate"]}]
        )
    plan = schedule(p)
    bad = {key for _, key in plan if "-X-" in key}
    children = []
    for client in (NAIVE, TENACITY, PLATFORM):
        agency = AGENCIES[client]
        if client == PLATFORM:
            for code in INSURERS:
                platform_account(world, code, agency, contracted_rate=p["rate_per_insurer"])
        spec = {
            "entry": ENTRIES[client],
            "django": client == PLATFORM,
            "client": client,
            "agency": agency,
            "workers": p["workers"],
            "cap_s": p["cap_s"],
            "schedule": plan,
            "insurers": {
                code: {
                    "url": world.url(code),
                    "credentials": credentials_for(code, agency),
                    "contracted_rate": p["rate_per_insurer"],
                }
                for code in INSURERS
            },
        }
        children.append(Child(f"s5-{client}", spec, world.raw_dir))
    mark = world.probe.mark()
    start_at, outs = run_together(children, timeout=p["cap_s"] + 120)
    out: dict[str, Any] = {
        "params": p,
        "records": len(plan),
        "bad_records": len(bad),
        "issue_naive_hour": ISSUE_NAIVE_HOUR,
    }
    out["clients"] = {}
    for client in (NAIVE, TENACITY, PLATFORM):
        events = [e for e in world.probe.since(mark, agency=AGENCIES[client]) if e.operation == "policy_status"]
        result = outs[f"s5-{client}"]
        records = result["records"]
        delivered = sum(1 for r in records if r[1] and r[0] not in bad)
        failed = [r for r in records if not r[1] and r[2] != "DEFERRED"]
        deferred = sum(1 for r in records if r[2] == "DEFERRED")
        good = len(plan) - len(bad)
        finished = max((r[5] for r in records if r[5] is not None), default=start_at)
        end = max([e.start for e in events] + [start_at + p["seconds"]])
        summary = {
            "flavour": result["flavour"],
            "attempts": len(events),
            "throttled": sum(1 for e in events if e.throttled),
            "gateway_5xx": sum(1 for e in events if e.note.startswith("fault=html")),
            "marked_failed": len(failed),
            "failed_bad": sum(1 for r in failed if r[0] in bad),
            "deferred": deferred,
            "delivered": delivered,
            "unfinished_at_cap": result["unfinished"],
            "open_why": result.get("open_why", {}),
            # Lost: good records neither delivered, nor kept (deferred), nor still in hand at the cap.
            "lost": good - delivered - deferred - (result["unfinished"] - _open_bad(records, bad)),
            "done_after_s": finished - start_at,
            "calls_per_s": series((e.start for e in events), start=start_at, end=end, bin_s=1.0),
            "throttled_per_s": series((e.start for e in events if e.throttled), start=start_at, end=end, bin_s=1.0),
            "auth_calls": sum(1 for e in world.probe.since(mark, agency=AGENCIES[client]) if e.operation == "token"),
        }
        summary["throttled_share"] = summary["throttled"] / summary["attempts"] if summary["attempts"] else 0.0
        out["clients"][client] = summary
        print(
            f"  s5 {client}: attempts={summary['attempts']} throttled={summary['throttled']} "
            f"failed={summary['marked_failed']} (bad {summary['failed_bad']}) delivered={summary['delivered']} "
            f"lost={summary['lost']} done after {summary['done_after_s']:.1f}s",
            flush=True,
        )
    out["arrival_per_s"] = series(
        (t + start_at for t, _ in plan), start=start_at, end=start_at + p["seconds"], bin_s=1.0
    )
    return out
