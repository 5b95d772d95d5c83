"""A later run of some scenarios merged into a full run's raw numbers, and said so."""

from __future__ import annotations

from bench.report import _reruns_text, rerun_merge


def test_a_rerun_replaces_its_scenarios_only_and_is_noted_with_its_commit():
    base = {"meta": {"commit": "aaa111", "mode": "full"}, "scenarios": {"rate": {"v": 1}, "screen": {"v": 2}}}
    rerun = {
        "meta": {"commit": "bbb222", "started_at": "2026-12-01T04:26:49+00:00", "bare_call": {"median_us": 650.0}},
        "scenarios": {"rate": {"v": 3}},
    }

    merged = rerun_merge(base, rerun)

    assert merged["scenarios"] == {"rate": {"v": 3}, "screen": {"v": 2}}
    assert merged["meta"]["commit"] == "aaa111"  # the full run's own record is kept
    [note] = merged["meta"]["reruns"]
    assert note["scenarios"] == ["rate"] and note["commit"] == "bbb222"
    assert "rate — commit `bbb222`" in _reruns_text(merged["meta"]) and "0.65 ms" in _reruns_text(merged["meta"])
    assert base["scenarios"]["rate"] == {"v": 1}  # the inputs are not changed
