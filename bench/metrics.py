"""Small arithmetic shared by the scenarios: time series, percentiles, peak-to-mean."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any


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
