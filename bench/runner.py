"""Runs the chosen scenarios against one set of sandbox insurers and collects their numbers."""

from __future__ import annotations

import importlib
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from typing import Any

from bench.env import Probe, World

MODULES = {
    "rate": "bench.s1_rate",
    "storm": "bench.s2_storm",
    "fanout": "bench.s3_fanout",
    "overhead": "bench.s4_overhead",
    "mixed": "bench.s5_mixed",
}


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


def run_all(scenarios: list[str], *, quick: bool, workdir: str, raw_dir: str) -> dict[str, Any]:
    from integrations.demo import demo_data_seed
    from sandbox import DEFAULT_ACCOUNTS, start_all

    servers = start_all(host="127.0.0.1")
    try:
        demo_data_seed(base_urls={code: server.base_url for code, server in servers.items()}, accounts=DEFAULT_ACCOUNTS)
        world = World(servers=servers, probe=Probe(servers), raw_dir=raw_dir, quick=quick)
        world.workdir = workdir  # type: ignore[attr-defined]
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
            },
            "scenarios": {},
        }
        for name in scenarios:
            print(f"bench: scenario {name} ...", flush=True)
            started = time.monotonic()
            module = importlib.import_module(MODULES[name])
            results["scenarios"][name] = module.run(world)
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
