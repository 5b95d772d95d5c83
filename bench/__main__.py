"""`python -m bench [--quick] [--scenario NAME ...] [--out DIR]`: run the benchmark suite.

A run measures one version of the code: the working tree (tracked and untracked, not ignored
files) is first copied to a temporary directory, and the run — this process, every client
process, every qcluster — imports from that copy, so code that changes in the tree meanwhile
cannot mix two versions into one set of numbers. The commit, the number of uncommitted files
and a fingerprint of the copied sources are written into the results.

Then: the four sandbox insurers start in the bench process, a fresh SQLite database of its own
is migrated, and each scenario runs the naive client, plain tenacity and the platform. Writes
`results.md` and the PNG plots to `--out` (default `bench/results`, or `bench/results/raw/quick`
with `--quick`, so a CI run never overwrites the committed full-run results), and the raw
numbers as JSON under `<out>/raw/`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.registry import SCENARIOS as REGISTERED

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
SCENARIOS = tuple(REGISTERED)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small loads, under a minute (CI: the suite still works)")
    parser.add_argument(
        "--scenario", action="append", choices=SCENARIOS, help="run only these (repeatable); default: all"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        help="times each repeated scenario runs (default: its REPEATS in a full run, 1 with --quick)",
    )
    parser.add_argument("--out", help="where results.md and the PNGs go")
    return parser.parse_args(argv)


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args],  # noqa: S607
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout
    except OSError:
        return ""


def snapshot(destination: Path) -> dict[str, str]:
    """Copy the working tree's sources to `destination`; returns what identifies them."""
    listed = _git("ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0")
    files = sorted(f for f in listed if f and not f.startswith("bench/results/") and (REPO_ROOT / f).is_file())
    if not files:  # not a git checkout: everything but the usual clutter
        ignore = shutil.ignore_patterns(
            ".git", ".venv", "var", "test-artifacts", "__pycache__", "results", "*.sqlite3*"
        )
        shutil.copytree(REPO_ROOT, destination, ignore=ignore)
        files = sorted(str(p.relative_to(destination)) for p in destination.rglob("*") if p.is_file())
    else:
        for name in files:
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / name, target)
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0" + (destination / name).read_bytes() + b"\0")
    status = [line for line in _git("status", "--porcelain").splitlines() if line]
    return {
        "BENCH_GIT_COMMIT": _git("rev-parse", "--short", "HEAD").strip(),
        "BENCH_GIT_UNCOMMITTED": str(len(status)),
        "BENCH_SOURCE_SHA": digest.hexdigest()[:12],
        "BENCH_SOURCE_FILES": str(len(files)),
    }


def boot(workdir: str) -> None:
    """Django on the benchmark's own fresh SQLite file, migrated."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ["BENCH_DB_PATH"] = os.path.join(workdir, "bench.sqlite3")
    os.environ.pop("BENCH_REDIS_URL", None)
    os.environ.pop("BENCH_DATABASE_URL", None)
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not os.environ.get("BENCH_SNAPSHOT"):
        return _run_from_snapshot(args, sys.argv[1:] if argv is None else argv)
    scenarios = [s for s in SCENARIOS if not args.scenario or s in args.scenario]
    out_dir = Path(args.out)
    raw_dir = out_dir / "raw"
    out_dir.mkdir(parents=True, exist_ok=True)
    raw_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="insurehub-bench-db-") as workdir:
        boot(workdir)
        from bench import report, runner

        started = time.monotonic()
        results = runner.run_all(
            scenarios, quick=args.quick, workdir=workdir, raw_dir=str(raw_dir), repeats=args.repeats
        )
        results["meta"]["wall_seconds"] = time.monotonic() - started
        report.write(results, out_dir=out_dir, raw_dir=raw_dir)
    print(f"bench: results in {out_dir / 'results.md'} ({results['meta']['wall_seconds']:.0f} s)")
    print("\n".join(report.summary_text(results)), flush=True)
    for name, why in results["skipped"].items():
        print(f"bench: skipped {name}: {why}")
    if results["failed"]:
        print(f"bench: FAILED: {', '.join(results['failed'])} (tracebacks in results.md and raw/results.json)")
        return 1
    return 0


def _run_from_snapshot(args: argparse.Namespace, argv: list[str]) -> int:
    """Copy the sources, then run this same command from the copy (outputs stay in this tree)."""
    if args.out:
        out_dir = Path(args.out).resolve()
    else:
        out_dir = BENCH_DIR / "results" / "raw" / "quick" if args.quick else BENCH_DIR / "results"
    workdir = Path(tempfile.mkdtemp(prefix="insurehub-bench-src-"))
    try:
        identity = snapshot(workdir / "src")
        print(
            f"bench: measuring a copy of the working tree (commit {identity['BENCH_GIT_COMMIT'] or '?'}, "
            f"{identity['BENCH_GIT_UNCOMMITTED']} uncommitted files, sources {identity['BENCH_SOURCE_SHA']})",
            flush=True,
        )
        forwarded = [a for a in argv if a != "--out" and not a.startswith("--out=")]
        if "--out" in argv:  # drop the value that followed --out
            index = argv.index("--out")
            forwarded = argv[:index] + argv[index + 2 :]
        env = {**os.environ, **identity, "BENCH_SNAPSHOT": str(workdir / "src")}
        command = [sys.executable, "-m", "bench", *forwarded, "--out", str(out_dir)]
        return subprocess.call(command, cwd=workdir / "src", env=env)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
