"""A benchmark client in a process of its own: `python -m bench.agent SPEC.json OUT.json`.

The bench process hosts the sandbox insurers (and the probe on their door); each client — naive,
tenacity, the platform — runs in its own process, with its own interpreter and GIL, the way a
worker process talks to a remote insurer. The sandbox's own CPU is then not the platform's.

Protocol: the agent prepares (database rows, sessions), prints `READY`, waits for a `GO <t>`
line on stdin (`t` is a `time.monotonic()` instant, shared by every process on the machine),
sleeps until `t`, runs, and writes its JSON result to OUT.json.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


def ready_and_wait() -> float:
    """Tell the bench process we are ready; return the common start instant once it says go."""
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line.startswith("GO "):
        raise SystemExit(f"agent: expected 'GO <t>', got {line!r}")
    start_at = float(line.split()[1])
    sys.stdout = sys.stderr  # nothing else may go to the pipe the bench process stopped reading
    delay = start_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    return start_at


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django

    django.setup()


def main(argv: list[str]) -> int:
    spec_path, out_path = argv[1], argv[2]
    spec: dict[str, Any] = json.loads(Path(spec_path).read_text())
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    if spec.get("django"):
        setup_django()
    module_name, func_name = spec["entry"].split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    result = func(spec)
    Path(out_path).write_text(json.dumps(result))
    sys.stderr.flush()
    # Threads still blocked in an insurer's backoff past the scenario's cap must not hold us.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
