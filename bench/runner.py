"""Runs the chosen scenarios against one set of sandbox insurers and collects their numbers."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
import traceback
from datetime import UTC, datetime
from typing import Any

from bench.env import Probe, World
from bench.metrics import median_run, repeats_aggregate
from bench.registry import SCENARIOS, load
from insurehub.gcpause import heap_frozen

# Kept for callers that read the old name: the registry is bench/registry.py.
MODULES = SCENARIOS


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args],  # noqa: S607
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except OSError:
        return ""


def repeats_for(module: Any, *, quick: bool, override: int | None) -> int:
    """How many times a scenario's `run(world)` is called: its `REPEATS` in a full run (1 when it
    declares none), once in quick mode; `--repeats N` replaces a declared REPEATS (quick too)."""
    declared = int(getattr(module, "REPEATS", 1) or 1)
    if declared <= 1:
        return 1
    if override is not None:
        return max(int(override), 1)
    return 1 if quick else declared


def repeat_metrics(name: str, module: Any, s: dict[str, Any]) -> dict[str, float | None]:
    """The module's `repeat_metrics(s)`; for the first five, the report's names when it has none."""
    if callable(getattr(module, "repeat_metrics", None)):
        return dict(module.repeat_metrics(s))
    from bench.report import default_repeat_metrics

    return default_repeat_metrics(name, s)


def run_repeated(name: str, module: Any, world: World, repeats: int) -> dict[str, Any]:
    """`run(world)` `repeats` times; the run whose first named number is the median is kept whole,
    and `s["repeats"]` gets min / median / max of every number `repeat_metrics(s)` names."""
    results: list[dict[str, Any]] = []
    numbers: list[dict[str, float | None]] = []
    for index in range(repeats):
        world.repeat = index
        if repeats > 1:
            print(f"bench:   repeat {index + 1} of {repeats}", flush=True)
        # The sandbox insurers serve from this process: its heap (Django, the probe's events,
        # earlier results) frozen, so that a full collection does not stall an insurer for 60 ms
        # and make it throttle the calls that piled up meanwhile, as no real gateway does.
        with heap_frozen():
            result = module.run(world)
        results.append(result)
        numbers.append(repeat_metrics(name, module, result) if repeats > 1 else {})
    world.repeat = 0
    if repeats == 1:
        return results[0]
    kept = results[median_run(numbers)]
    kept["repeats"] = {**repeats_aggregate(numbers), "kept_run": median_run(numbers) + 1}
    return kept


def run_all(
    scenarios: list[str], *, quick: bool, workdir: str, raw_dir: str, repeats: int | None = None
) -> dict[str, Any]:
    from bench.bare import bare_call_measure
    from integrations.demo import demo_data_seed
    from sandbox import DEFAULT_ACCOUNTS, start_all

    servers = start_all(host="127.0.0.1")
    try:
        demo_data_seed(base_urls={code: server.base_url for code, server in servers.items()}, accounts=DEFAULT_ACCOUNTS)
        world = World(servers=servers, probe=Probe(servers), raw_dir=raw_dir, quick=quick, workdir=workdir)
        world.repeats_override = repeats
        results: dict[str, Any] = {
            "meta": {
                "mode": "quick" if quick else "full",
                "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "machine": platform.machine(),
                # Identified by the process that copied the sources (see bench/__main__.py).
                "commit": os.environ.get("BENCH_GIT_COMMIT") or _git("rev-parse", "--short", "HEAD"),
                "uncommitted_files": os.environ.get("BENCH_GIT_UNCOMMITTED", "?"),
                "sources": os.environ.get("BENCH_SOURCE_SHA", ""),
                "load_average_start": [round(x, 2) for x in os.getloadavg()],
                "database": "SQLite (WAL), a fresh file per run",
                "scenarios": scenarios,
                "repeats_override": repeats,
            },
            "scenarios": {},
            "skipped": {},
            "failed": {},
        }
        print("bench: the machine's bare call ...", flush=True)
        results["meta"]["bare_call"] = bare = bare_call_measure(world)
        print(
            f"bench: bare keep-alive requests call: median {bare['median_us']:.0f} µs, p95 {bare['p95_us']:.0f} µs "
            f"({bare['calls']} calls)",
            flush=True,
        )
        for name in scenarios:
            module, why = load(name)
            if module is None:
                print(f"bench: scenario {name}: {why}", flush=True)
                results["skipped"][name] = why
                continue
            count = repeats_for(module, quick=quick, override=repeats)
            print(f"bench: scenario {name}{f' × {count}' if count > 1 else ''} ...", flush=True)
            started = time.monotonic()
            try:
                results["scenarios"][name] = run_repeated(name, module, world, count)
            except Exception:  # the other scenarios' numbers are still worth writing
                results["failed"][name] = traceback.format_exc()[-4000:]
                print(f"bench: scenario {name} FAILED:\n{results['failed'][name]}", flush=True)
                continue
            results["scenarios"][name]["wall_seconds"] = time.monotonic() - started
            print(f"bench: scenario {name} done in {time.monotonic() - started:.1f} s", flush=True)
        results["meta"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        return results
    finally:
        if "world" in locals():
            world.close()
        for server in servers.values():
            server.stop()
        sys.stdout.flush()
