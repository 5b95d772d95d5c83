"""Scenario 4 — per-call overhead: what the platform adds to one insurer call.

One thread, one call at a time, Anka's `policy_status` with no configured latency, keep-alive
connections everywhere, in an agent process of its own (the sandbox answers from the bench
process). Each variant makes the same calls; the variants take turns in rounds so that drift
on a shared machine hits them alike. Reported: median, mean and p95 microseconds per call,
and each variant's median minus the bare `requests` call's median (the overhead).

* bare: `requests.Session.get` and reading the body, nothing else;
* naive: the baseline's builder (`bench.wire`) and its success check;
* tenacity: the same inside `Retrying` (no retry happens: the call succeeds);
* platform, as every caller runs it: `insurer_operation_run` with its defaults — policy lookup
  (cached), adapter and channel, classification, `DatabaseRecorder` (one `Attempt` row, one plain
  INSERT), the shared send rate (`SharedSendRate`: a GCRA slot that also counts the attempt in the
  rate's window, one statement; a success writes nothing more) and retry budget
  (`SharedRetryBudget`: the first attempt counted and its deposit, two statements) in SQLite;
* and the platform taken apart: the engine alone (in-memory recorder, no pacing, no budget),
  plus the attempt log, plus rate control in the database (= the default), rate control in
  Redis instead (when a `redis-server` is available);
* and the refusal path: a policy number the insurer does not know (404 → classified permanent,
  admin mappings read through their cache), bare and platform.

The account's send-rate ceiling is raised far above what one thread can send (an admin override
of `rate_ceiling`, and a contracted rate to match), so no call waits for a pacing slot: the
figure is the cost of the machinery, not of pacing.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any, Protocol

from bench.env import World, credentials_for, platform_account, policy_override, policy_overrides_clear
from bench.metrics import percentile
from bench.proc import Child, run_together

INSURER = "anka"
AGENCY = "S4PLATFORM"
RATE = 1_000_000.0
# A full run measures this many times (issue 14: min / median / max; about 16 s each).
REPEATS = 5


class _PlatformCall(Protocol):
    """One policy-status call through the platform; ``bad`` asks for a number the insurer refuses."""

    def __call__(self, bad: bool = False) -> None: ...


def params(quick: bool) -> dict[str, Any]:
    if quick:
        return {"rounds": 2, "calls": 40, "warmup": 20}
    return {"rounds": 5, "calls": 200, "warmup": 100}


def run(world: World) -> dict[str, Any]:
    p = params(world.quick)
    world.reset({"latency_ms": [0, 0]})
    policy_overrides_clear()
    world.add_accounts(INSURER, [AGENCY], rate=RATE, burst=1_000_000)
    platform_account(world, INSURER, AGENCY, contracted_rate=RATE)
    policy_override(INSURER, "policy_status", rate_ceiling=RATE)
    spec = {
        **p,
        "entry": "bench.s4_overhead:agent_main",
        "django": True,
        "url": world.url(INSURER),
        "credentials": credentials_for(INSURER, AGENCY),
        "redis_url": world.redis_url(),
    }
    _, outs = run_together([Child("s4-overhead", spec, world.raw_dir)], timeout=600)
    result = outs["s4-overhead"]
    policy_overrides_clear()
    bare = result["variants"]["bare"]["median_us"]
    bare_404 = result["variants"]["bare, 404"]["median_us"]
    for name, v in result["variants"].items():
        base = bare_404 if name.endswith("404") else bare
        v["overhead_us"] = v["median_us"] - base
        print(f"  s4 {name}: median={v['median_us']:.0f} us overhead={v['overhead_us']:.0f} us", flush=True)
    return {"params": p, **result}


# --- agent process ---------------------------------------------------------------------------


def agent_main(spec: dict[str, Any]) -> dict[str, Any]:
    import requests

    from bench.agent import ready_and_wait
    from bench.clients import naive_run, tenacity_run
    from bench.wire import wire_for
    from integrations.attempts.recording import BufferedRecorder, DatabaseRecorder
    from integrations.calling.calls import Endpoint, insurer_operation_run
    from integrations.calling.engine import UnlimitedBudget, UnpacedRate
    from integrations.models import Attempt
    from integrations.pacing.retry_budget import SharedRetryBudget
    from integrations.pacing.send_rate import SharedSendRate

    url, credentials = spec["url"], spec["credentials"]
    endpoint = Endpoint(
        insurer_code=INSURER,
        base_url=url,
        credentials=credentials,
        account_key=f"{INSURER}:{AGENCY}",
        contracted_rate=RATE,
    )
    wire = wire_for(INSURER, url, credentials)
    session = requests.Session()
    session.trust_env = False
    headers = {"X-Api-Key": credentials["api_key"]}
    counter = [0]

    def number(bad: bool = False) -> str:
        counter[0] += 1
        return f"AK-{'X' if bad else 'P'}-S4{counter[0]:07d}"

    def bare() -> None:
        response = session.get(f"{url}/v1/policies/{number()}", headers=headers, timeout=(3.05, 20))
        assert response.status_code == 200
        response.content  # noqa: B018

    def bare_404() -> None:
        response = session.get(f"{url}/v1/policies/{number(bad=True)}", headers=headers, timeout=(3.05, 20))
        assert response.status_code == 404
        response.content  # noqa: B018

    def platform(**kwargs: Any) -> _PlatformCall:
        def call(bad: bool = False) -> None:
            outcome = insurer_operation_run(
                endpoint=endpoint, operation="policy_status", data={"policy_no": number(bad)}, **kwargs
            )
            assert outcome.ok is not bad, outcome.to_json()

        return call

    variants: dict[str, Callable[[], None]] = {
        "bare": bare,
        "naive": lambda: _check(naive_run(lambda: wire.policy_status(number())).ok),
        "tenacity": lambda: _check(tenacity_run(lambda: wire.policy_status(number())).ok),
        "platform (default)": platform(),
        "engine only (in-memory log, no rate control)": platform(
            recorder=BufferedRecorder(), budget=UnlimitedBudget(), send_rate=UnpacedRate()
        ),
        "engine + attempt log (SQLite)": platform(
            recorder=DatabaseRecorder(), budget=UnlimitedBudget(), send_rate=UnpacedRate()
        ),
    }
    if spec.get("redis_url"):
        from integrations.pacing.shared_state import RedisSharedState

        redis_state = RedisSharedState(spec["redis_url"])
        variants["engine + attempt log + rate control in Redis"] = platform(
            budget=SharedRetryBudget(state=redis_state),
            send_rate=SharedSendRate(contracted_rate=RATE, state=redis_state),
        )
    refusal = platform()
    variants["bare, 404"] = bare_404
    variants["platform (default), 404"] = lambda: refusal(bad=True)

    for call in variants.values():
        for _ in range(spec["warmup"]):
            call()
    ready_and_wait()
    samples: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for round_no in range(spec["rounds"]):
        # Each round starts with another variant, so none always follows the same neighbour.
        shift = round_no % len(names)
        for name in names[shift:] + names[:shift]:
            call = variants[name]
            timings = samples[name]
            for _ in range(spec["calls"]):
                started = time.perf_counter()
                call()
                timings.append((time.perf_counter() - started) * 1e6)
    return {
        "variants": {
            name: {
                "calls": len(t),
                "median_us": statistics.median(t),
                "mean_us": statistics.fmean(t),
                "p95_us": percentile(t, 95),
            }
            for name, t in samples.items()
        },
        "attempt_rows": Attempt.objects.filter(account_key=f"{INSURER}:{AGENCY}").count(),
    }


def _check(ok: bool) -> None:
    assert ok
