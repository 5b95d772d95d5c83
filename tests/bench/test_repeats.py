"""The runner's repeats: a scenario declaring REPEATS runs that many times in a full run, once in
quick mode, and its numbers come back as min / median / max with the median run's details kept."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from bench.env import Probe, World
from bench.metrics import repeats_aggregate, spread, spread_text
from bench.runner import repeats_for, run_repeated


class FakeScenario:
    REPEATS = 5

    def __init__(self, values: list[float]) -> None:
        self.values = values
        self.calls = 0

    def run(self, world: Any) -> dict[str, Any]:
        value = self.values[self.calls]
        self.calls += 1
        return {"p95": value, "run": self.calls, "repeat_seen": world.repeat}

    @staticmethod
    def repeat_metrics(s: dict[str, Any]) -> dict[str, float | None]:
        return {"p95": s["p95"], "other": None if s["run"] == 2 else s["run"] * 10.0}


def _world() -> World:
    """A world without insurers: the fake scenario reads only which repeat it is."""
    return World(servers={}, probe=Probe({}), raw_dir="", quick=False)


def test_full_run_repeats_and_keeps_the_median_run() -> None:
    scenario = FakeScenario([90.0, 40.0, 70.0, 120.0, 60.0])
    world = _world()

    s = run_repeated("fake", scenario, world, repeats_for(scenario, quick=False, override=None))

    assert scenario.calls == 5
    assert s["run"] == 3  # p95 70 is the median of 40, 60, 70, 90, 120
    assert s["repeat_seen"] == 2
    assert s["repeats"]["n"] == 5
    p95 = s["repeats"]["metrics"]["p95"]
    assert (p95["min"], p95["median"], p95["max"]) == (40.0, 70.0, 120.0)
    assert p95["values"] == [90.0, 40.0, 70.0, 120.0, 60.0]
    other = s["repeats"]["metrics"]["other"]
    assert other["values"][1] is None
    assert (other["min"], other["median"], other["max"]) == (10.0, 35.0, 50.0)
    assert spread_text(s, "p95", s["p95"], suffix=" ms") == "40 / **70** / 120 ms"


def test_quick_runs_once_and_repeats_override_counts() -> None:
    scenario = FakeScenario([1.0, 2.0, 3.0])
    assert repeats_for(scenario, quick=True, override=None) == 1
    assert repeats_for(scenario, quick=True, override=3) == 3
    assert repeats_for(SimpleNamespace(), quick=False, override=3) == 1  # declares no REPEATS

    s = run_repeated("fake", scenario, _world(), 1)

    assert "repeats" not in s
    assert spread_text(s, "p95", s["p95"], suffix=" ms") == "1 ms"


def test_spread_of_nothing_measured() -> None:
    assert spread([None, None])["median"] is None
    assert repeats_aggregate([{"a": 1.0}, {"b": 2.0}])["metrics"]["a"]["values"] == [1.0, None]


def test_the_fan_out_repeats_its_flavours_itself_and_is_run_once() -> None:
    """It would otherwise run REPEATS × its own repeats."""
    from bench import s3_fanout

    assert repeats_for(s3_fanout, quick=False, override=3) == 1
    assert s3_fanout.FLAVOUR_REPEATS == 5
