"""The one list of benchmark scenarios: name → module, in the order a full run plays them.

Importing this module imports nothing else, so `python -m bench --help` and the quick-run test can
read the names before Django starts. A scenario module states its own contract (see
bench/README.md, "Writing a scenario"): `params(quick)`, `run(world)`, and — for the ones that are
not among the first five, whose renderers live in `bench/report.py` — `summary_rows(s)`,
`markdown(s, plot)` and `plot(s, out_dir)`; optionally `REPEATS` and `repeat_metrics(s)`.

A registered module that is not there yet, or does not import, is skipped with a note: one
half-written scenario must not cost the others their numbers.
"""

from __future__ import annotations

import importlib
import importlib.util
import traceback
from types import ModuleType

SCENARIOS: dict[str, str] = {
    "rate": "bench.s1_rate",
    "storm": "bench.s2_storm",
    "fanout": "bench.s3_fanout",
    "overhead": "bench.s4_overhead",
    "mixed": "bench.s5_mixed",
    "overload": "bench.s6_overload",
    "scaleout": "bench.s7_scaleout",
    "screen": "bench.s8_screen",
    "hosts": "bench.s9_hosts",
    "deskload": "bench.s10_desk_load",
}
# Rendered by bench/report.py itself (their modules predate the summary_rows/markdown/plot contract).
BUILT_IN_RENDERERS = ("rate", "storm", "fanout", "overhead", "mixed")


def exists(name: str) -> bool:
    """Whether the scenario's module file is there (without importing it)."""
    try:
        return importlib.util.find_spec(SCENARIOS[name]) is not None
    except (ImportError, ValueError):
        return False


def load(name: str) -> tuple[ModuleType | None, str]:
    """The scenario's module, or None and why not (a note for results.md, never an exception)."""
    if not exists(name):
        return None, f"`{SCENARIOS[name]}` does not exist (yet)"
    try:
        module = importlib.import_module(SCENARIOS[name])
    except Exception as exc:  # any import failure is reported, not raised
        tail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return None, f"`{SCENARIOS[name]}` failed to import ({tail})"
    if not callable(getattr(module, "run", None)):
        return None, f"`{SCENARIOS[name]}` has no `run(world)`"
    return module, ""
