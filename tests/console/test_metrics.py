"""`/metrics`: Prometheus text read from the database, right whichever process made the calls; not public."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from integrations.adapters.registry import registered_codes
from integrations.models import Attempt, InsurerAccount, SendRateState
from integrations.operations import Operation
from integrations.pacing.arithmetic import RETRY_BUDGET_RESERVE
from integrations.pacing.shared_state import shared_state
from sandbox import DEFAULT_ACCOUNTS
from tests import samples
from work.item import WorkState

REPO = Path(__file__).resolve().parents[2]


def scrape(client) -> dict[str, dict[tuple, float]]:
    """`{sample name: {sorted label items: value}}` from a scrape, through Prometheus's own parser."""
    response = client.get(reverse("metrics"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    samples_by_name: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples_by_name.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples_by_name


def labels(**values: str) -> tuple:
    return tuple(sorted(values.items()))


def operator(username: str):
    """An on-call login: staff with `integrations.view_attempt`, what a session needs for /metrics."""
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user(username, is_staff=True)
    user.user_permissions.add(Permission.objects.get(content_type__app_label="integrations", codename="view_attempt"))
    return user


@pytest.fixture
def staff_client(client, db):
    client.force_login(operator("nobetci"))
    return client


# --- Who may scrape -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_anonymous_scrape_is_refused(client):
    """No session, no token: 401 with a Bearer challenge, and no numbers."""
    response = client.get(reverse("metrics"))
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"insurehub_" not in response.content


@pytest.mark.django_db
def test_non_staff_session_is_refused(client):
    """An agent's login does not open the metrics."""
    client.force_login(get_user_model().objects.create_user("ajan-metrik"))
    assert client.get(reverse("metrics")).status_code == 403


@pytest.mark.django_db
def test_bearer_token_opens_the_metrics(client, settings):
    """Prometheus scrapes with `Authorization: Bearer <METRICS_TOKEN>`; a wrong token is refused."""
    settings.METRICS_TOKEN = "kazan-9f2c"
    assert client.get(reverse("metrics"), headers={"Authorization": "Bearer kazan-9f2c"}).status_code == 200
    assert client.get(reverse("metrics"), headers={"Authorization": "Bearer kazan-0000"}).status_code == 401
    assert client.get(reverse("metrics"), headers={"Authorization": "Basic kazan-9f2c"}).status_code == 401


@pytest.mark.django_db
def test_no_configured_token_means_no_token_access(client, settings):
    """With METRICS_TOKEN unset, an empty bearer token is not a match."""
    settings.METRICS_TOKEN = ""
    assert client.get(reverse("metrics"), headers={"Authorization": "Bearer "}).status_code == 401


def test_staff_session_may_scrape(staff_client, seeded_accounts):
    """An admin looking at the numbers by hand needs no token."""
    assert "insurehub_insurer_unknown_answers_total" in scrape(staff_client)


# --- Counters across processes ------------------------------------------------------------------


def probe_process(worker_env, sandbox, code: str) -> subprocess.Popen:
    """`manage.py insurer_call` in its own process: another process writing attempt rows."""
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "insurer_call",
            code,
            "trafik_quote",
            "--base-url",
            sandbox[code].base_url,
            "--credentials",
            json.dumps(DEFAULT_ACCOUNTS[code][0]["credentials"]),
            "--data",
            json.dumps(samples.TRAFIK),
        ],
        cwd=REPO,
        env=worker_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


@pytest.mark.django_db(transaction=True)
def test_counters_count_the_calls_of_several_processes(worker_env, sandbox, seeded_accounts, client):
    """Four processes call at once; one scrape of this process counts every call each of them made."""
    sandbox["bogazici"].state.add_faults(
        [{"operation": "trafik_quote", "fault": "error", "code": "BS-999", "times": 2}]
    )
    sandbox["deniz"].state.add_faults([{"operation": "trafik_quote", "fault": "html", "http_status": 502}])
    processes = [probe_process(worker_env, sandbox, code) for code in ("anka", "anka", "bogazici", "deniz")]
    for process in processes:
        output, _ = process.communicate(timeout=60)
        assert process.returncode in (0, 1), output.decode()
    client.force_login(operator("nobetci-2"))

    metrics = scrape(client)
    attempts = metrics["insurehub_insurer_attempts_total"]
    trafik = {"operation": "trafik_quote", "product": "trafik"}
    assert attempts == {
        labels(insurer="anka", **trafik, **{"class": "success", "kind": "success"}): 2,
        labels(insurer="bogazici", **trafik, **{"class": "unknown", "kind": "unclassified"}): 2,
        labels(insurer="deniz", **trafik, **{"class": "retryable", "kind": "unavailable"}): 1,
        labels(insurer="deniz", **trafik, **{"class": "success", "kind": "success"}): 1,
    }
    assert sum(attempts.values()) == Attempt.objects.count() == 6
    retries = metrics["insurehub_insurer_retries_total"]
    assert retries[labels(insurer="bogazici", **trafik, **{"class": "unknown", "kind": "unclassified"})] == 1
    assert retries[labels(insurer="deniz", **trafik, **{"class": "success", "kind": "success"})] == 1
    unknown = metrics["insurehub_insurer_unknown_answers_total"]
    assert unknown[labels(insurer="bogazici", operation="trafik_quote")] == 2


def test_every_insurer_and_operation_has_an_unknown_answers_series_from_zero(staff_client, seeded_accounts):
    """The first unknown code must be an increase Prometheus can see, so the series exists before it."""
    unknown = scrape(staff_client)["insurehub_insurer_unknown_answers_total"]
    expected = {labels(insurer=code, operation=op.value) for code in registered_codes() for op in Operation}
    assert set(unknown) == expected and set(unknown.values()) == {0.0}


@pytest.mark.django_db
def test_latency_histogram_buckets_are_counts_under_each_bound(staff_client):
    """Cumulative buckets, count and sum come straight from the attempt rows' latencies."""
    now = timezone.now()
    Attempt.objects.bulk_create(
        Attempt(
            insurer_code="cinar",
            operation="policy_status",
            product="kasko",
            attempt_no=1,
            ok=True,
            latency_ms=latency,
            started_at=now,
            finished_at=now,
        )
        for latency in (30.0, 80.0, 300.0, 1200.0, 70_000.0)
    )
    metrics = scrape(staff_client)
    series = {"insurer": "cinar", "operation": "policy_status", "product": "kasko", "class": "success"}
    buckets = {
        dict(key)["le"]: value
        for key, value in metrics["insurehub_insurer_attempt_latency_seconds_bucket"].items()
        if dict(key)["insurer"] == "cinar"
    }
    assert buckets["0.05"] == 1
    assert buckets["0.1"] == 2
    assert buckets["0.25"] == 2
    assert buckets["0.5"] == 3
    assert buckets["1.0"] == 3
    assert buckets["2.0"] == 4
    assert buckets["60.0"] == 4
    assert buckets["+Inf"] == 5
    key = labels(**series, kind="success")
    assert metrics["insurehub_insurer_attempt_latency_seconds_count"][key] == 5
    assert metrics["insurehub_insurer_attempt_latency_seconds_sum"][key] == pytest.approx(71.61)


# --- Gauges ------------------------------------------------------------------------------------


def test_send_rate_and_retry_budget_gauges_come_from_the_shared_state(staff_client, seeded_accounts):
    """The current rate beside the contract; the retry-budget tokens left and the retries refused."""
    account = InsurerAccount.objects.get(insurer__code="anka", agency__code="ACENTE1")
    SendRateState.objects.create(account_key=account.rate_key, rate=7.5)
    state = shared_state()
    spent = [state.budget_try_spend("anka") for _ in range(int(RETRY_BUDGET_RESERVE) + 2)]
    assert spent.count(False) == 2
    for _ in range(10):
        state.budget_record_first("anka", ok=True, ratio=0.2)
    state.count_local_refusal("anka")
    state.count_local_refusal("anka")
    metrics = scrape(staff_client)
    assert metrics["insurehub_send_rate_per_second"][labels(insurer="anka", account=account.rate_key)] == 7.5
    assert metrics["insurehub_contracted_rate_per_second"][labels(insurer="anka", account=account.rate_key)] == 20.0
    headroom = metrics["insurehub_retry_budget_headroom"]
    # The reserve spent, then 10 successes × 0.2 (plus a moment's refill); an untouched insurer is full.
    assert headroom[labels(insurer="anka")] == pytest.approx(2.0, abs=0.5)
    assert headroom[labels(insurer="deniz")] == pytest.approx(RETRY_BUDGET_RESERVE)
    assert metrics["insurehub_retry_budget_denied"][labels(insurer="anka")] == 2
    assert metrics["insurehub_retry_budget_denied"][labels(insurer="deniz")] == 0
    assert metrics["insurehub_local_refusals"][labels(insurer="anka")] == 2
    assert metrics["insurehub_local_refusals"][labels(insurer="deniz")] == 0
    threshold = metrics["insurehub_policy_throttle_threshold"]
    assert threshold[labels(insurer="anka", operation="trafik_quote")] == pytest.approx(0.02)


def test_work_gauges_show_dead_letters_and_the_oldest_due_record(staff_client, seeded_accounts):
    """Dead letters = FAILED + DEFERRED; the oldest-pending age counts due records, not those in backoff."""
    from policies.models import Policy
    from sync.models import SyncItem, SyncRun

    now = timezone.now()
    account = InsurerAccount.objects.select_related("insurer", "agency").get(
        insurer__code="deniz", agency__code="ACENTE1"
    )
    run = SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND)
    states = [
        (WorkState.FAILED, {}),
        (WorkState.DEFERRED, {}),
        (WorkState.PENDING, {"next_attempt_at": now + timedelta(hours=1)}),
        (WorkState.QUEUED, {"updated_at": now - timedelta(minutes=10)}),
    ]
    for i, (state, fields) in enumerate(states):
        policy = Policy.objects.create(
            agency=account.agency, insurer=account.insurer, account=account, product="dask", policy_no=f"DZ-P-M{i}"
        )
        item = SyncItem.objects.create(run=run, policy=policy, state=state)
        SyncItem.objects.filter(pk=item.pk).update(**fields)
    metrics = scrape(staff_client)
    deniz_dask = {"work": "sync", "insurer": "deniz", "product": "dask"}
    assert metrics["insurehub_work_dead_letters"][labels(**deniz_dask)] == 2
    assert 595 <= metrics["insurehub_work_oldest_pending_age_seconds"][labels(**deniz_dask)] <= 640
    items = metrics["insurehub_work_items"]
    assert items[labels(**deniz_dask, state="pending_backoff")] == 1
    assert items[labels(**deniz_dask, state="pending_due")] == 0
    assert items[labels(**deniz_dask, state="queued")] == 1
    # Every product an insurer sells has its series from the start, at zero.
    assert metrics["insurehub_work_dead_letters"][labels(work="issuance", insurer="anka", product="kasko")] == 0
