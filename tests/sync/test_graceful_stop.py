"""SIGTERM stops a real cluster promptly even while a worker is in the ~50 s work pump.

django-q2 stops workers only after the task in hand, so before the pump watched the cluster's
stop event a SIGTERM waited out the pump's minute (and `run.sh` hung on it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django_q.models import Task
from django_q.tasks import async_task

from tests.conftest import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


def test_sigterm_stops_a_cluster_in_the_work_pump_within_ten_seconds(worker_env, tmp_path):
    """The pump notices the stop, ends its task cleanly, and the cluster exits within 10 s of SIGTERM."""
    # A queue of its own, so the session's shared cluster (if another test started it) cannot take the pump.
    name = f"graceful-stop-{os.getpid()}"
    log_path = tmp_path / "qcluster.log"
    with open(log_path, "wb") as log:
        cluster = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=REPO_ROOT,
            env={**worker_env, "Q_WORKERS": "2", "Q_CLUSTER_NAME": name},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        # The task the pump's schedule enqueues every minute, with its full ~50 s loop.
        task_id = async_task("sync.tasks.work_pump", cluster=name)
        try:
            wait_until(lambda: "'sync.tasks.work_pump'" in log_path.read_text(), timeout=60, interval=0.2)
        except AssertionError:
            pytest.fail("the pump never started:\n" + log_path.read_text())
        time.sleep(2.0)  # well into the loop: a few passes done, waiting for the next
        assert cluster.poll() is None, log_path.read_text()

        signalled = time.monotonic()
        cluster.send_signal(signal.SIGTERM)
        try:
            cluster.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail("qcluster still running 10 s after SIGTERM:\n" + log_path.read_text())
        assert time.monotonic() - signalled < 10

        # The pump returned (its result was stored as a success), rather than being killed mid-pass.
        pump = Task.objects.get(id=task_id)
        assert pump.success, pump.result
        assert (pump.stopped - pump.started).total_seconds() < 15
        assert "work pump: the cluster is stopping" in log_path.read_text()
    finally:
        if cluster.poll() is None:
            os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait()
