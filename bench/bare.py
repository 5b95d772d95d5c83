"""The machine's bare call: what one keep-alive `requests` GET to a sandbox insurer costs here.

Measured at the start of every run (a client process of its own, Anka's policy status with no
configured latency, warm-up first) and printed beside the results, so that runs on machines of
different speed compare: a figure measured on a machine whose bare call is twice as slow is read
against that.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.env import World, credentials_for
from bench.metrics import percentile
from bench.proc import Child, run_together

INSURER = "anka"
AGENCY = "BAREBENCH"


def bare_call_measure(world: World) -> dict[str, Any]:
    world.reset({"latency_ms": [0, 0]})
    world.add_accounts(INSURER, [AGENCY], rate=1_000_000.0, burst=1_000_000)
    spec = {
        "entry": "bench.bare:agent_main",
        "django": False,
        "url": world.url(INSURER),
        "credentials": credentials_for(INSURER, AGENCY),
        "warmup": 100,
        "calls": 500,
    }
    _, outs = run_together([Child("bare-call", spec, world.raw_dir)], timeout=120)
    return outs["bare-call"]


def agent_main(spec: dict[str, Any]) -> dict[str, Any]:
    import requests

    from bench.agent import ready_and_wait

    session = requests.Session()
    session.trust_env = False
    headers = {"X-Api-Key": spec["credentials"]["api_key"]}
    url = spec["url"]

    def call(i: int) -> None:
        response = session.get(f"{url}/v1/policies/AK-P-BARE{i:07d}", headers=headers, timeout=(3.05, 20))
        assert response.status_code == 200, response.status_code
        response.content  # noqa: B018

    for i in range(spec["warmup"]):
        call(i)
    ready_and_wait()
    timings = []
    for i in range(spec["calls"]):
        started = time.perf_counter()
        call(spec["warmup"] + i)
        timings.append((time.perf_counter() - started) * 1e6)
    return {
        "what": "keep-alive requests.Session GET, Anka policy status, no insurer latency, one thread",
        "calls": len(timings),
        "median_us": statistics.median(timings),
        "mean_us": statistics.fmean(timings),
        "p95_us": percentile(timings, 95),
    }
