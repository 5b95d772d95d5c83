"""How many drain tasks a nightly run takes of a cluster's workers.

Drains hold their workers in 30-s slices for the whole run: taking all of them made quote
fan-out tasks (an agent waiting) and the work pump wait up to a slice.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from sync import services as svc
from sync.models import SyncRun

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("workers", "drains"), [(1, 1), (2, 1), (3, 1), (4, 2), (8, 6)])
def test_default_leaves_the_pump_and_quotes_a_worker(workers, drains):
    assert svc.drain_tasks_default(workers) == drains


def test_a_run_is_handed_to_fewer_drains_than_the_cluster_has_workers(
    make_policies, sent_tasks, django_capture_on_commit_callbacks
):
    make_policies("anka", [f"ANKA-P-{i}" for i in range(10)])
    run = svc.sync_run_start(trigger=SyncRun.Trigger.COMMAND)

    with django_capture_on_commit_callbacks(execute=True):
        queued = svc.sync_run_enqueue(run)

    workers = settings.Q_CLUSTER["workers"]
    assert queued == 10
    assert sent_tasks == [("sync.tasks.sync_drain", None)] * svc.drain_tasks_default(workers)
    if workers > 1:
        assert len(sent_tasks) < workers


def _drain_tasks_in_a_fresh_process(env: dict[str, str]) -> int:
    code = "import django; django.setup(); from sync import services; print(services.DRAIN_TASKS)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return int(out.stdout.strip().splitlines()[-1])


def test_sync_drain_tasks_overrides_the_default():
    """`SYNC_DRAIN_TASKS` in the environment still sets the count (a benchmark sizes clusters so)."""
    assert _drain_tasks_in_a_fresh_process({"Q_WORKERS": "6", "SYNC_DRAIN_TASKS": "6"}) == 6
    assert _drain_tasks_in_a_fresh_process({"Q_WORKERS": "6", "SYNC_DRAIN_TASKS": ""}) == 4
