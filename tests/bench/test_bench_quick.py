"""The benchmark suite still runs: `python -m bench --quick` completes and writes its results.

No timing is asserted (numbers on a shared CI machine mean little); only that every registered
scenario whose module exists ran (every client of the first five) and left its table, plots and
raw numbers behind, and that the machine's bare call was measured and printed.
"""

from __future__ import annotations

import glob
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from bench import registry

REPO_ROOT = Path(__file__).resolve().parents[2]

SCENARIOS = {
    "rate": ("clients", ("naive", "tenacity", "platform")),
    "storm": ("outage", ("naive", "tenacity", "platform", "platform-engine")),
    "fanout": ("clients", ("naive", "tenacity", "platform")),
    "mixed": ("clients", ("naive", "tenacity", "platform")),
}
HEADINGS = (
    "## 1. Rate ceiling",
    "## 2. Retry storm",
    "## 3. Quote fan-out",
    "## 4. Per-call overhead",
    "## 5. Mixed faults",
)
PLOTS = (
    "s1_rate_ceiling.png",
    "s2_retry_storm.png",
    "s3_fanout_overhead.png",
    "s4_per_call.png",
    "s5_mixed_faults.png",
)


def test_quick_benchmark_runs_every_scenario_and_client(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(tmp_path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]

    markdown = (tmp_path / "results.md").read_text()
    assert "the machine's bare call" in markdown
    assert "| scenario | target | naive | plain tenacity | platform |" in markdown
    for heading in HEADINGS:
        assert heading in markdown
    for label in ("naive", "plain tenacity", "platform"):
        assert f"| {label} |" in markdown
    for plot in PLOTS:
        assert (tmp_path / plot).stat().st_size > 0

    results = json.loads((tmp_path / "raw" / "results.json").read_text())
    scenarios = results["scenarios"]
    for name, (key, clients) in SCENARIOS.items():
        assert set(clients) <= set(scenarios[name][key]), (name, sorted(scenarios[name][key]))
    assert set(scenarios["storm"]["throttle"]) >= {"naive", "tenacity", "platform", "platform-engine"}
    # Where the servers are installed (CI installs them), the scale-out flavours of the fan-out ran too.
    fanout = scenarios["fanout"]["clients"]
    if shutil.which("redis-server"):
        assert fanout["platform-redis"]["complete"] > 0
        if glob.glob("/usr/lib/postgresql/*/bin/initdb"):
            assert fanout["platform-pg"]["complete"] > 0
    variants = scenarios["overhead"]["variants"]
    assert {"bare", "naive", "tenacity", "platform (default)"} <= set(variants)
    assert results["meta"]["bare_call"]["calls"] > 0
    assert not results["failed"], results["failed"]

    # Every registered scenario whose module exists ran and wrote its section (the newer ones
    # through their own summary_rows/markdown/plot); a registered one not written yet is noted.
    for name in registry.SCENARIOS:
        if not registry.exists(name):
            assert name in results["skipped"], name
            continue
        assert scenarios.get(name), name
        if name in registry.BUILT_IN_RENDERERS:
            continue
        module = importlib.import_module(registry.SCENARIOS[name])
        section = [line for line in module.markdown(scenarios[name], None) if line.startswith("## ")]
        assert section and section[0] in markdown, name
        for row in module.summary_rows(scenarios[name]):
            assert "| " + " | ".join(row) + " |" in markdown, (name, row)
