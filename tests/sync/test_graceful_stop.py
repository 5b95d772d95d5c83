"""SIGTERM stops a real cluster within 10 s, whatever its workers are doing, and loses nothing.

django-q2 stops a worker only after the task in hand. Before the pump watched the cluster's
stop event, a SIGTERM waited out the pump's minute (and `run.sh` hung on it); before durable work
made its insurer calls stoppable, it waited out a slow insurer's answer (up to the policy's
attempt timeout) and the record stayed IN_FLIGHT until its lease ran out. Here the cluster is a
real `qcluster` process and the insurers are the sandbox, over HTTP on loopback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from django_q.models import Task
from django_q.tasks import async_task

from agencies.models import Agency, AgentProfile
from integrations.adapters.registry import registered_codes
from integrations.calling.channel import WORKER_STOPPED
from integrations.models import Attempt, Insurer, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from policies.models import Policy
from quotes.models import Issuance
from quotes.services import issuance as issuance_services
from quotes.services import quote_requests
from sync.models import SyncItem, SyncRun
from sync.services import sync_item_process, sync_run_start
from tests import samples
from tests.conftest import wait_until
from tests.quotes.request_samples import tasks_not_sent
from work.item import WorkState
from work.services import work_promote_due

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)

# How long the sandbox takes over the slow call. Waited out, it would hold the stop well past
# 10 s; the policies below give the call even longer before its own timeout.
SLOW_CALL_SECONDS = 15.0
STOP_WITHIN_SECONDS = 10.0


class Cluster:
    """A `qcluster` serving a queue of its own, so the session's shared cluster (if another test
    started it) cannot take these tasks, nor this one the others'."""

    def __init__(self, worker_env: dict, log_path: Path, *, workers: int) -> None:
        self.name = f"graceful-stop-{os.getpid()}"
        self.log_path = log_path
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "qcluster"],
                cwd=REPO_ROOT,
                env={**worker_env, "Q_WORKERS": str(workers), "Q_CLUSTER_NAME": self.name},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def log(self) -> str:
        return self.log_path.read_text()

    def send(self, func: str, *args: object) -> str:
        return async_task(func, *args, cluster=self.name)

    def stop(self) -> float:
        """SIGTERM to the main process, as `run.sh` and process managers send it; seconds to exit."""
        assert self.process.poll() is None, self.log()
        signalled = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=STOP_WITHIN_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail(f"qcluster still running {STOP_WITHIN_SECONDS:g} s after SIGTERM:\n" + self.log())
        return time.monotonic() - signalled

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def cluster(worker_env, tmp_path) -> Iterator[Callable[..., Cluster]]:
    started: list[Cluster] = []

    def start(workers: int = 2) -> Cluster:
        started.append(Cluster(worker_env, tmp_path / "qcluster.log", workers=workers))
        return started[-1]

    yield start
    for each in started:
        each.kill()


def test_sigterm_stops_a_cluster_in_the_work_pump_within_ten_seconds(cluster):
    """The pump notices the stop, ends its task cleanly, and the cluster exits within 10 s of SIGTERM."""
    qcluster = cluster(workers=2)
    # The task the pump's schedule enqueues every minute, with its full ~50 s loop.
    task_id = qcluster.send("work.tasks.work_pump")
    try:
        wait_until(lambda: "'work.tasks.work_pump'" in qcluster.log(), timeout=60, interval=0.2)
    except AssertionError:
        pytest.fail("the pump never started:\n" + qcluster.log())
    time.sleep(2.0)  # well into the loop: a few passes done, waiting for the next

    assert qcluster.stop() < STOP_WITHIN_SECONDS

    # The pump returned (its result was stored as a success), rather than being killed mid-pass.
    pump = Task.objects.get(id=task_id)
    assert pump.success, pump.result
    assert (pump.stopped - pump.started).total_seconds() < 15
    assert "work pump: the cluster is stopping" in qcluster.log()


# --- a worker in the middle of an insurer call --------------------------------------------------


def _patient_policy(operation: str, **fields: object) -> None:
    """Every insurer's policy for `operation` waits far longer than the slow call takes, so only
    the stop can end the call early."""
    for insurer in Insurer.objects.all():
        values = {key: (value.get(insurer.code) if isinstance(value, dict) else value) for key, value in fields.items()}
        OperationPolicy.objects.update_or_create(
            insurer=insurer,
            operation=operation,
            defaults={
                "max_attempts": 5,
                "attempt_timeout": 40.0,
                "deadline": 120.0,
                "base_delay": 0.2,
                "max_delay": 1.0,
                **values,
            },
        )
    clear_policy_cache()


def _slow(sandbox: dict, operation: str) -> None:
    for code in registered_codes():
        sandbox[code].state.add_faults([{"operation": operation, "fault": "latency", "seconds": SLOW_CALL_SECONDS}])


def _wait_for_calls_in_flight(sandbox: dict, operation: str, qcluster: Cluster) -> None:
    """Every insurer is holding one slow call of a worker (the sandbox counts a call on receipt)."""
    try:
        wait_until(
            lambda: all(sandbox[code].state.counts()["received"].get(operation, 0) for code in registered_codes()),
            timeout=60,
            interval=0.1,
        )
    except AssertionError:
        pytest.fail(f"the workers never reached the insurers' {operation}:\n" + qcluster.log())
    time.sleep(0.5)  # the insurers are well into their slow answer


def _assert_handed_back_due_now(records: list, *, signalled_at) -> None:
    """Not IN_FLIGHT waiting for its lease to run out: PENDING, no lease, due now, no try used up."""
    now = timezone.now()
    for record in records:
        record.refresh_from_db()
        assert record.state == WorkState.PENDING, (record.pk, record.state, record.error_message)
        assert record.lease_expires_at is None
        assert signalled_at - timedelta(seconds=1) <= record.next_attempt_at <= now
        assert record.attempts == 0 and record.reclaims == 0
        assert record.provider_code == WORKER_STOPPED


def test_sigterm_cuts_slow_status_calls_short_and_hands_the_sync_items_back_due_now(cluster, sandbox, make_policies):
    """Each worker is waiting on a slow policy_status when SIGTERM comes: the cluster exits within
    10 s, and every item is handed back at once (not left IN_FLIGHT under its lease), due now and
    with no try used up; the next try syncs it."""
    _patient_policy("policy_status")
    for code in registered_codes():
        make_policies(code, [f"{code.upper()}-STOP-1"])
    run = sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    items = list(run.items.order_by("pk"))
    _slow(sandbox, "policy_status")
    qcluster = cluster(workers=len(items))
    for item in items:
        qcluster.send("sync.tasks.sync_item_process", item.pk)
    _wait_for_calls_in_flight(sandbox, "policy_status", qcluster)
    assert set(SyncItem.objects.values_list("state", flat=True)) == {WorkState.IN_FLIGHT}

    signalled_at = timezone.now()
    assert qcluster.stop() < STOP_WITHIN_SECONDS

    _assert_handed_back_due_now(items, signalled_at=signalled_at)
    assert sorted(work_promote_due(SyncItem)) == [item.pk for item in items]  # the next pump pass queues them
    assert "handed back: the worker is stopping" in qcluster.log()
    # The cut call is in the attempt log (it reached the insurer), marked as ours, not the insurer's.
    cut = Attempt.objects.filter(operation="policy_status", provider_code=WORKER_STOPPED)
    assert sorted(cut.values_list("insurer_code", flat=True)) == registered_codes()

    for item in items:
        assert sync_item_process(item.pk) == WorkState.SUBMITTED
    assert not Policy.objects.filter(last_synced_at__isnull=True).exists()


def test_sigterm_stops_a_drain_and_hands_its_items_back_due_now(cluster, sandbox, make_policies):
    """A drain task holds a batch of items, one per insurer waiting on a slow policy_status (the
    others answered at once), when SIGTERM comes: the cluster exits within 10 s, the items whose
    calls were cut are handed back due now with no try used up, the answered ones are stored,
    and nothing is left IN_FLIGHT."""
    _patient_policy("policy_status")
    for code in registered_codes():
        make_policies(code, [f"{code.upper()}-DRAIN-{i}" for i in range(3)])
    run = sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    _slow(sandbox, "policy_status")
    qcluster = cluster(workers=1)
    qcluster.send("sync.tasks.sync_drain", run.pk)
    _wait_for_calls_in_flight(sandbox, "policy_status", qcluster)

    signalled_at = timezone.now()
    assert qcluster.stop() < STOP_WITHIN_SECONDS

    states = dict(run.items.values_list("pk", "state"))
    assert WorkState.IN_FLIGHT not in states.values(), states
    handed = [item for item in run.items.order_by("pk") if states[item.pk] == WorkState.PENDING]
    assert handed, states
    _assert_handed_back_due_now(handed, signalled_at=signalled_at)
    assert len(handed) >= len(registered_codes())  # the slow call at each insurer, at least
    assert set(states.values()) <= {WorkState.PENDING, WorkState.QUEUED, WorkState.SUBMITTED}
    synced = run.items.filter(state=WorkState.SUBMITTED).values_list("policy_id", flat=True)
    assert not Policy.objects.filter(pk__in=list(synced), last_synced_at__isnull=True).exists()
    assert "handed back: the worker is stopping" in qcluster.log()


# Boğaziçi does not deduplicate: a "not issued" answer is final only this long after the send,
# which must outlast the sandbox's slow commit (its contract says 30 s; scaled down like the call).
BOGAZICI_SETTLING_SECONDS = SLOW_CALL_SECONDS + 3.0


def _agent():
    user = get_user_model().objects.create_user("ajan-graceful-stop", password="test-pass-123")
    AgentProfile.objects.create(user=user, agency=Agency.objects.get(code="ACENTE1"))
    return user


def _issuances_started(agent, monkeypatch) -> list[Issuance]:
    """One stored issuance per insurer, on a quote fetched here; nothing queued for any cluster."""
    tasks_not_sent(monkeypatch)
    issuances = []
    for code in registered_codes():
        # A quote request has one live issuance: a request per insurer.
        request = quote_requests.quote_request_create(user=agent, product="trafik", data=samples.TRAFIK)
        quote = request.insurer_quotes.get(insurer__code=code)
        quote_requests.insurer_quote_fetch(quote.pk)
        issuances.append(
            issuance_services.issuance_start(user=agent, insurer_quote_id=quote.pk, payment_token=samples.PAYMENT_TOKEN)
        )
    return issuances


def _process_to_the_end(issuance: Issuance, *, timeout: float) -> Issuance:
    """What the next cluster's pump and workers do with a PENDING record: queue it when due, try it."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        work_promote_due(Issuance)
        state = issuance_services.issuance_process(issuance.pk)
        if state not in (WorkState.QUEUED, WorkState.IN_FLIGHT, WorkState.PENDING):
            issuance.refresh_from_db()
            return issuance
        due = Issuance.objects.values_list("next_attempt_at", flat=True).get(pk=issuance.pk)
        time.sleep(max((due - timezone.now()).total_seconds(), 0.0) + 0.05 if due else 0.1)
    raise AssertionError(f"issuance {issuance.pk} still {Issuance.objects.get(pk=issuance.pk).state}")


def test_sigterm_cuts_slow_issuances_short_and_each_quote_still_gets_exactly_one_policy(
    cluster, sandbox, seeded_accounts, monkeypatch
):
    """Each worker is waiting on a slow issue_policy (the insurer commits it anyway, later) when
    SIGTERM comes: the cluster exits within 10 s, and every issuance is handed back at once, due
    now, marked maybe-sent and never FAILED; the next tries ask the insurer first, and each quote
    ends with exactly one policy at its insurer."""
    _patient_policy("issue_policy", settling_seconds={"bogazici": BOGAZICI_SETTLING_SECONDS})
    issuances = _issuances_started(_agent(), monkeypatch)
    _slow(sandbox, "issue_policy")
    qcluster = cluster(workers=len(issuances))
    for issuance in issuances:
        qcluster.send("quotes.tasks.issuance_process", issuance.pk)
    _wait_for_calls_in_flight(sandbox, "issue_policy", qcluster)

    signalled_at = timezone.now()
    assert qcluster.stop() < STOP_WITHIN_SECONDS

    _assert_handed_back_due_now(issuances, signalled_at=signalled_at)
    for issuance in issuances:
        assert issuance.maybe_sent, issuance.pk  # so the next try asks the insurer before sending
        assert issuance.error_message.startswith(issuance_services.UNKNOWN_OUTCOME_MESSAGE)
        assert issuance.policy_no == ""

    for issuance in issuances:
        code = issuance.insurer_quote.insurer.code
        issuance = _process_to_the_end(issuance, timeout=SLOW_CALL_SECONDS + 30)
        assert issuance.state == WorkState.SUBMITTED, (code, issuance.provider_code, issuance.error_message)
        counts = sandbox[code].state.counts()
        assert counts["policies_by_quote"] == {issuance.insurer_quote.quote_no: [issuance.policy_no]}, code
        assert counts["issued_total"] == 1, code
    # Boğaziçi cannot deduplicate a second send: the next try only asked, until the policy showed.
    assert sandbox["bogazici"].state.counts()["received"]["issue_policy"] == 1
