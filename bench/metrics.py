"""Small arithmetic shared by the scenarios: time series, percentiles, peak-to-mean."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, overload


def series(
    times: Iterable[float], *, start: float, end: float, bin_s: float, weights: Iterable[float] | None = None
) -> list[float]:
    """Counts per bin of `bin_s` seconds over [start, end)."""
    n = max(math.ceil((end - start) / bin_s), 1)
    out = [0.0] * n
    weight_list = list(weights) if weights is not None else None
    for i, t in enumerate(times):
        index = int((t - start) // bin_s)
        if 0 <= index < n:
            out[index] += weight_list[i] if weight_list is not None else 1.0
    return out


def event_series(
    events: Sequence[Any], *, start: float, end: float, bin_s: float, when: Callable[[Any], bool]
) -> list[float]:
    return series((e.start for e in events if when(e)), start=start, end=end, bin_s=bin_s)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(math.ceil(q / 100.0 * len(ordered)), 1)
    return ordered[min(rank, len(ordered)) - 1]


def peak_to_mean(counts: Sequence[float]) -> float | None:
    if not counts:
        return None
    mean = sum(counts) / len(counts)
    return max(counts) / mean if mean else None


def share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


# --- repeated measurements -------------------------------------------------------------------
#
# A noisy number is measured several times in a full run (issue 14: five times, min / median /
# max). Whoever repeats — the runner, calling a scenario's `run(world)` REPEATS times, or a
# scenario that repeats part of itself — stores the numbers in the scenario's result as
#
#     s["repeats"] = {"n": 5, "metrics": {name: {"values": [...], "min": x, "median": y, "max": z}}}
#
# and the report shows min / median / max wherever it finds them (targets are judged on the median).


def spread(values: Iterable[float | None]) -> dict[str, Any]:
    """min / median / max of the values that were measured (None = not measured in that run)."""
    listed = [None if v is None else float(v) for v in values]
    measured = sorted(v for v in listed if v is not None)
    if not measured:
        return {"values": listed, "min": None, "median": None, "max": None}
    middle = len(measured) // 2
    median = measured[middle] if len(measured) % 2 else (measured[middle - 1] + measured[middle]) / 2
    return {"values": listed, "min": measured[0], "median": median, "max": measured[-1]}


def repeats_aggregate(runs: Sequence[dict[str, float | None]]) -> dict[str, Any]:
    """The `s["repeats"]` block from each run's named numbers (a name missing in a run is None)."""
    names: list[str] = []
    for run in runs:
        names += [name for name in run if name not in names]
    return {"n": len(runs), "metrics": {name: spread([run.get(name) for run in runs]) for name in names}}


def median_run(runs: Sequence[dict[str, float | None]]) -> int:
    """Index of the run whose first named number is the median one: its detailed tables are shown,
    so that they agree with the median the summary reports."""
    if not runs or not runs[0]:
        return 0
    key = next(iter(runs[0]))
    order = sorted(range(len(runs)), key=lambda i: (runs[i].get(key) is None, runs[i].get(key) or 0.0))
    return order[(len(order) - 1) // 2]


def repeated(s: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The min / median / max block of one repeated number, or None if it was measured once."""
    block = (s.get("repeats") or {}).get("metrics", {}).get(name)
    return block if block and block.get("median") is not None and len(block["values"]) > 1 else None


@overload
def median_or(s: dict[str, Any], name: str, single: float) -> float: ...
@overload
def median_or(s: dict[str, Any], name: str, single: float | None) -> float | None: ...
def median_or(s: dict[str, Any], name: str, single: float | None) -> float | None:
    """The median over the repeats where the number was repeated, else the single value (a
    repeated number always has a median, so a number given in ``single`` gives a number)."""
    block = repeated(s, name)
    return block["median"] if block else single


def spread_text(
    s: dict[str, Any], name: str, single: float | None, *, digits: int = 0, suffix: str = "", scale: float = 1.0
) -> str:
    """ "min / median / max<suffix>" for a repeated number, else the single value; for tables."""

    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value * scale:,.{digits}f}"

    block = repeated(s, name)
    if block is None:
        return "n/a" if single is None else fmt(single) + suffix
    return f"{fmt(block['min'])} / **{fmt(block['median'])}** / {fmt(block['max'])}{suffix}"
