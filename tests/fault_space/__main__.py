"""The long fault-space search: `python -m tests.fault_space [--examples N] [--seed S] [--insurer CODE ...]`.

Runs the suite's search (`tests/fault_space/test_issuance_search.py`) with more sequences and a
seed of your choosing (random by default), prints how many sequences and tries it explored per
insurer, and, for any failure, Hypothesis's shrunk counterexample: the steps as Python (paste
them into `test_issuance_counterexamples.py` to keep them as a plain test) and a
`@reproduce_failure` blob. The same `--seed` with the same `--examples` explores the same
sequences again (timing aside), which is how a failure is replayed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Each money operation's search, as the suite runs it.
SEARCHES = {
    "issue_policy": "tests/fault_space/test_issuance_search.py",
    "cancel_policy": "tests/fault_space/test_cancellation_search.py",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fault_space", description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="sequences per insurer (suite: 15)")
    parser.add_argument("--steps", type=int, default=20, help="most steps in one sequence (suite: 14)")
    parser.add_argument("--seed", type=int, help="default: a random one, printed")
    parser.add_argument("--insurer", action="append", help="search these insurers only (default: every one)")
    parser.add_argument(
        "--operation",
        action="append",
        choices=sorted(SEARCHES),
        help="search this money operation only (default: issuance and cancellation)",
    )
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1, 2**31)
    report = Path(tempfile.mkstemp(prefix="fault-space-", suffix=".jsonl")[1])
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "insurehub.settings.test"),
        "FAULT_SPACE_EXAMPLES": str(args.examples),
        "FAULT_SPACE_STEPS": str(args.steps),
        "FAULT_SPACE_SEED": str(seed),
        "FAULT_SPACE_REPORT": str(report),
    }
    if args.insurer:
        env["FAULT_SPACE_INSURERS"] = ",".join(args.insurer)
    print(f"fault-space search: seed {seed}, {args.examples} sequences of up to {args.steps} steps per insurer")
    started = time.monotonic()
    modules = [SEARCHES[operation] for operation in args.operation or sorted(SEARCHES)]
    command = [sys.executable, "-m", "pytest", *modules, "-p", "no:cacheprovider"]
    log = ROOT / "test-artifacts" / f"fault-space-{seed}.log"
    log.parent.mkdir(exist_ok=True)
    with log.open("w", encoding="utf-8") as out:
        status = subprocess.call([*command, "-q", "-rN", "--tb=short"], cwd=ROOT, env=env, stdout=out, stderr=out)
    print(_failures(log.read_text(encoding="utf-8")))
    rows = [json.loads(line) for line in report.read_text().splitlines() if line.strip()]
    report.unlink(missing_ok=True)
    total = sum(row["sequences"] for row in rows)
    for row in rows:
        print(f"  {row['operation']:<14} {row['insurer']:<10} {row['sequences']:>6} sequences")
    minutes = (time.monotonic() - started) / 60
    print(f"explored {total} sequences in {minutes:.1f} min; {'no counterexample' if status == 0 else 'FAILED'}")
    if status != 0:
        print(
            f"The shrunk counterexample is printed above (the steps, and a @reproduce_failure blob); the whole\n"
            f"output is in {log}.\n"
            f"Replay: python -m tests.fault_space --seed {seed} --examples {args.examples} --steps {args.steps}"
            + "".join(f" --insurer {code}" for code in args.insurer or [])
            + "".join(f" --operation {operation}" for operation in args.operation or [])
        )
    return status


def _failures(output: str) -> str:
    """What a person needs of pytest's output: the assertion, the shrunk steps and the blob."""
    keep = [
        line
        for line in output.splitlines()
        if (line.startswith("E ") and "INFO" not in line and "WARNING" not in line)
        or line.startswith(("FAILED", "PASSED"))
    ]
    return "\n".join(keep)


if __name__ == "__main__":
    sys.exit(main())
