"""The health dashboard's numbers, checked against a scripted sandbox run with known counts."""

from __future__ import annotations

import re
from datetime import timedelta
from itertools import pairwise

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from console.health import (
    WINDOWS,
    HealthFilter,
    attempts_per_minute,
    insurer_health,
    provider_code_conclusions,
    unknown_codes_seen,
)
from integrations.answers.classification import clear_mapping_cache
from integrations.calling.calls import insurer_operation_run
from integrations.models import AdminChange, Attempt, ErrorMapping, InsurerAccount
from integrations.pacing.arithmetic import RETRY_BUDGET_RESERVE
from integrations.pacing.shared_state import shared_state
from tests import samples
from work.item import WorkState

pytestmark = pytest.mark.django_db

# What the scripted run below makes each insurer do, and therefore what the dashboard must count.
# Çınar's first call of a run fetches a token: a successful exchange of its own.
EXPECTED_CALLS = {
    ("anka", "trafik"): {  # throttled twice, then ok; then two clean quotes
        "attempts": 5,
        "successes": 3,
        "throttled": 2,
        "retries": 2,
        "retryable": 2,
        "permanent": 0,
        "unknown": 0,
    },
    ("bogazici", "trafik"): {  # an unknown code, tried twice (the unknown cap), then given up
        "attempts": 2,
        "successes": 0,
        "throttled": 0,
        "retries": 1,
        "retryable": 0,
        "permanent": 0,
        "unknown": 2,
    },
    ("cinar", "trafik"): {  # token, then a permanent validation refusal: tried once
        "attempts": 2,
        "successes": 1,
        "throttled": 0,
        "retries": 0,
        "retryable": 0,
        "permanent": 1,
        "unknown": 0,
    },
    ("deniz", "trafik"): {  # a gateway page, then ok
        "attempts": 2,
        "successes": 1,
        "throttled": 0,
        "retries": 1,
        "retryable": 1,
        "permanent": 0,
        "unknown": 0,
    },
}


@pytest.fixture(autouse=True)
def fresh_caches():
    """Mappings made here must not outlive the test's rolled-back database in the process cache."""
    clear_mapping_cache()
    yield
    clear_mapping_cache()


def no_sleep(seconds: float) -> None:
    """The engine's waits are tested elsewhere; here only what was sent matters."""


def trafik(endpoint_for, code: str):
    return insurer_operation_run(
        endpoint=endpoint_for(code), operation="trafik_quote", data=samples.TRAFIK, sleep=no_sleep
    )


@pytest.fixture
def scripted_run(sandbox, seeded_accounts, endpoint_for):
    """One trafik quote at every insurer with a known fault each, and two clean ones at Anka."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "throttle", "times": 2}])
    sandbox["bogazici"].state.add_faults(
        [{"operation": "trafik_quote", "fault": "error", "code": "BS-999", "times": 2}]
    )
    sandbox["cinar"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "VAL_PLAKA"}])
    sandbox["deniz"].state.add_faults([{"operation": "trafik_quote", "fault": "html", "http_status": 502}])
    outcomes = {code: trafik(endpoint_for, code) for code, _ in EXPECTED_CALLS}
    outcomes["anka-2"] = trafik(endpoint_for, "anka")
    outcomes["anka-3"] = trafik(endpoint_for, "anka")
    # Sanity: the sandbox received exactly the calls the expectations count.
    for code, expected in EXPECTED_CALLS.items():
        assert sandbox[code[0]].state.counts()["total_received"] == expected["attempts"]
    return outcomes


@pytest.fixture
def old_unknown_call(seeded_accounts):
    """An unknown code Anka sent two hours ago: outside the last hour, inside the last day."""
    started = timezone.now() - timedelta(hours=2)
    return Attempt.objects.create(
        insurer_code="anka",
        operation="trafik_quote",
        product="trafik",
        attempt_no=1,
        ok=False,
        provider_code="AK-OLD",
        error_class="unknown",
        error_kind="unclassified",
        raw_sample='{"error": {"code": "AK-OLD"}}',
        latency_ms=12.0,
        started_at=started,
        finished_at=started,
    )


def last(window: str, **kwargs) -> HealthFilter:
    return HealthFilter.last(WINDOWS[window], **kwargs)


def by_key(rows):
    return {(row.insurer_code, row.product): row for row in rows}


def test_dashboard_counts_match_the_scripted_run(scripted_run):
    """Attempts, successes, throttles, retries and each class per insurer are exactly the calls made."""
    rows = by_key(insurer_health(health=last("1h")))
    seen = {key: {name: getattr(rows[key], name) for name in expected} for key, expected in EXPECTED_CALLS.items()}
    assert seen == EXPECTED_CALLS


def test_throttle_ratio_and_retry_rate_are_shares_of_the_calls(scripted_run):
    """Anka: 2 of its 5 calls were throttled and 2 were re-sends."""
    anka = by_key(insurer_health(health=last("1h")))[("anka", "trafik")]
    assert anka.throttle_ratio == pytest.approx(0.4)
    assert anka.retry_rate == pytest.approx(0.4)


def test_window_and_filters_choose_the_calls_counted(scripted_run, old_unknown_call):
    """A call two hours old counts in the last day only; an insurer filter leaves only its rows."""
    hour = by_key(insurer_health(health=last("1h")))[("anka", "trafik")]
    day = by_key(insurer_health(health=last("1d")))[("anka", "trafik")]
    assert (hour.attempts, hour.unknown) == (5, 0)
    assert (day.attempts, day.unknown) == (6, 1)
    only_deniz = insurer_health(health=last("1h", insurer_code="deniz"))
    assert [(r.insurer_code, r.attempts) for r in only_deniz] == [("deniz", 2)]
    assert insurer_health(health=last("1h", product="kasko")) == []


def test_what_the_insurer_said_beside_what_we_concluded(scripted_run):
    """Raw code × our class and kind, with counts; successes are not in this table."""
    table = {
        (c.insurer_code, c.provider_code, c.error_class, c.error_kind): c.count
        for c in provider_code_conclusions(health=last("1h"))
    }
    assert table == {
        ("anka", "RATE_LIMITED", "retryable", "throttled"): 2,
        ("bogazici", "BS-999", "unknown", "unclassified"): 2,
        ("cinar", "VAL_PLAKA", "permanent", "validation"): 1,
        ("deniz", "502", "retryable", "unavailable"): 1,
    }


def test_per_minute_series_covers_the_window_and_sums_to_the_calls(scripted_run):
    """Every minute of the window is a point (quiet ones zero); totals are the calls and throttles."""
    points = attempts_per_minute(health=last("15m"))
    assert len(points) == 16  # the minutes the window starts and ends in, and every one between
    assert sum(p.attempts for p in points) == 11
    assert sum(p.throttled for p in points) == 2
    assert all(b.minute - a.minute == timedelta(minutes=1) for a, b in pairwise(points))


def test_per_minute_series_tells_a_plateau_from_a_spike(seeded_accounts):
    """Calls land in the minute they started: a steady throttled plateau, then an outage spike."""
    now = timezone.now().replace(second=30, microsecond=0)
    rows = []
    for minutes_ago in range(10, 4, -1):  # a plateau: 10 calls a minute, 1 throttled, for 6 minutes
        for i in range(10):
            rows.append(_attempt("anka", now - timedelta(minutes=minutes_ago), throttled=i == 0))
    for i in range(40):  # a spike: 40 calls, 30 throttled, all in one minute
        rows.append(_attempt("anka", now - timedelta(minutes=2), throttled=i < 30))
    Attempt.objects.bulk_create(rows)
    points = attempts_per_minute(health=HealthFilter(since=now - timedelta(minutes=12), now=now))
    series = [(p.attempts, p.throttled) for p in points]
    assert series == [(0, 0)] * 2 + [(10, 1)] * 6 + [(0, 0)] * 2 + [(40, 30)] + [(0, 0)] * 2


def _attempt(insurer_code: str, started_at, *, throttled: bool) -> Attempt:
    return Attempt(
        insurer_code=insurer_code,
        operation="trafik_quote",
        product="trafik",
        attempt_no=1,
        ok=not throttled,
        error_class="retryable" if throttled else "",
        error_kind="throttled" if throttled else "",
        provider_code="RATE_LIMITED" if throttled else "",
        latency_ms=5.0,
        started_at=started_at,
        finished_at=started_at,
    )


def test_unknown_codes_are_listed_with_their_raw_sample(scripted_run, old_unknown_call):
    """BS-999 is listed once with its count and the insurer's own answer; older codes are out of the window."""
    codes = unknown_codes_seen(health=last("1h"))
    assert [(u.insurer_code, u.provider_code, u.count) for u in codes] == [("bogazici", "BS-999", 2)]
    (code,) = codes
    assert "<HataKodu>BS-999</HataKodu>" in code.raw_sample
    assert code.operations == ("trafik_quote",)
    assert code.classifiable and code.mapped_kind == ""
    assert {u.provider_code for u in unknown_codes_seen(health=last("1d"))} == {"BS-999", "AK-OLD"}


# --- Work records -------------------------------------------------------------------------------


@pytest.fixture
def work_records(seeded_accounts):
    """Anka trafik sync items in every state, and Boğaziçi kasko issuances: one in backoff, one failed."""
    from policies.models import Policy
    from quotes.models import InsurerQuote, Issuance, QuoteRequest
    from sync.models import SyncItem, SyncRun

    now = timezone.now()
    anka = InsurerAccount.objects.select_related("insurer", "agency").get(insurer__code="anka", agency__code="ACENTE1")
    run = SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND)
    states = [
        (WorkState.QUEUED, {"updated_at": now - timedelta(minutes=5)}),  # waiting 5 min: the oldest
        (WorkState.QUEUED, {"updated_at": now - timedelta(seconds=30)}),
        (WorkState.IN_FLIGHT, {"lease_expires_at": now + timedelta(minutes=1)}),
        (WorkState.PENDING, {"next_attempt_at": now + timedelta(minutes=10)}),  # backoff, not stuck
        (WorkState.PENDING, {"next_attempt_at": now - timedelta(minutes=2)}),  # due 2 min ago
        (WorkState.SUBMITTED, {"finished_at": now - timedelta(minutes=1)}),
        (WorkState.SUBMITTED, {"finished_at": now - timedelta(hours=3)}),
        (WorkState.FAILED, {"finished_at": now - timedelta(minutes=10)}),
        (WorkState.DEFERRED, {"finished_at": now - timedelta(minutes=20)}),
        (WorkState.FAILED, {"finished_at": now - timedelta(days=2)}),
    ]
    for i, (state, fields) in enumerate(states):
        policy = Policy.objects.create(
            agency=anka.agency,
            insurer=anka.insurer,
            account=anka,
            product="trafik",
            policy_no=f"AK-P-HEALTH-{i}",
        )
        item = SyncItem.objects.create(run=run, policy=policy, state=state, payload={"policy_no": policy.policy_no})
        SyncItem.objects.filter(pk=item.pk).update(created_at=now - timedelta(days=3), **fields)

    bogazici = InsurerAccount.objects.select_related("insurer", "agency").get(
        insurer__code="bogazici", agency__code="ACENTE1"
    )
    user = get_user_model().objects.create_user("saglik-ajan")
    for i, (state, fields) in enumerate(
        [
            (WorkState.PENDING, {"next_attempt_at": now + timedelta(minutes=1)}),
            (WorkState.FAILED, {"finished_at": now - timedelta(minutes=5)}),
        ]
    ):
        request = QuoteRequest.objects.create(
            agency=bogazici.agency,
            created_by=user,
            product="kasko",
            input_data=samples.KASKO,
            owner_id=samples.KASKO["owner_id"],
            deadline_at=now,
        )
        quote = InsurerQuote.objects.create(request=request, insurer=bogazici.insurer, account=bogazici)
        Issuance.objects.create(
            insurer_quote=quote,
            quote_request=request,
            agency=bogazici.agency,
            requested_by=user,
            reference=f"IH-HEALTH-{i}",
            state=state,
            **fields,
        )


def test_work_records_are_counted_apart_by_state(work_records):
    """In flight, queued, backoff, due, done and dead are separate numbers; dead growth is the window's."""
    rows = by_key(insurer_health(health=last("1h")))
    sync = rows[("anka", "trafik")].work["sync"]
    assert (sync.queued, sync.in_flight, sync.backoff, sync.due) == (2, 1, 1, 1)
    assert (sync.submitted, sync.done_in_window) == (2, 1)
    assert (sync.failed, sync.deferred, sync.dead, sync.dead_in_window) == (2, 1, 3, 2)
    assert 295 <= sync.oldest_pending_age <= 330
    assert by_key(insurer_health(health=last("1d")))[("anka", "trafik")].work["sync"].dead_in_window == 2
    assert by_key(insurer_health(health=last("15m")))[("anka", "trafik")].work["sync"].dead_in_window == 1


def test_backoff_is_not_a_stuck_queue(work_records):
    """Issuances only in backoff have an oldest-pending age of zero, not the time since they were made."""
    issuance = by_key(insurer_health(health=last("1h")))[("bogazici", "kasko")].work["issuance"]
    assert (issuance.backoff, issuance.due, issuance.dead, issuance.dead_in_window) == (1, 0, 1, 1)
    assert issuance.oldest_pending_age == 0.0


# --- The page and its "classify as" button ------------------------------------------------------------


def dashboard_url(**params) -> str:
    from urllib.parse import urlencode

    return reverse("integrations_health") + ("?" + urlencode(params) if params else "")


def test_dashboard_page_shows_the_numbers(admin_client, scripted_run, work_records):
    """The admin page renders every table from the same selectors, for the chosen window."""
    response = admin_client.get(dashboard_url(window="15m"))
    assert response.status_code == 200
    assert response.context["window"].key == "15m"
    rows = by_key(response.context["rows"])
    assert rows[("anka", "trafik")].attempts == 5 and rows[("bogazici", "kasko")].work["issuance"].dead == 1
    html = response.content.decode()
    assert 'data-insurer="anka" data-product="trafik"' in html
    assert '<td class="num" data-field="attempts">5</td>' in html
    assert 'id="minute-chart"' in html and "<polyline" in html
    assert "BS-999" in html and "Olarak sınıflandır" in html


def test_dashboard_names_insurers_by_their_names_not_their_codes(admin_client, scripted_run, work_records):
    """Every table's insurer column reads "Anka Sigorta" as the desk does; the code stays a data attribute."""
    from integrations.models import Insurer

    html = admin_client.get(dashboard_url(window="15m")).content.decode()
    names = dict(Insurer.objects.values_list("code", "name"))
    assert all(name != code for code, name in names.items())
    cells = set(re.findall(r"<td>([^<]*)</td>", html))
    assert names["anka"] in cells and names["bogazici"] in cells
    assert not cells & set(names), sorted(cells & set(names))
    assert 'data-insurer="anka"' in html


def test_a_refused_retry_shows_on_the_dashboard(admin_client, seeded_accounts):
    """The retry-budget table shows the tokens left and marks refused retries."""
    state = shared_state()
    while state.budget_try_spend("bogazici"):
        pass
    state.count_local_refusal("anka")
    response = admin_client.get(dashboard_url())
    budgets = {b.insurer_code: b for b in response.context["budgets"]}
    assert budgets["bogazici"].denied == 1 and budgets["bogazici"].tokens < 1
    assert budgets["anka"].denied == 0 and budgets["anka"].tokens == pytest.approx(RETRY_BUDGET_RESERVE)
    html = response.content.decode()
    assert '<td class="num bad" data-field="denied">1</td>' in html
    assert budgets["anka"].local_refusals == 1 and budgets["bogazici"].local_refusals == 0
    assert '<td class="num bad" data-field="local_refusals">1</td>' in html
    assert '<td class="num" data-field="tokens">15,0</td>' in html  # a full bucket, Turkish decimals


def test_dashboard_is_for_staff_only(client, scripted_run):
    """Anonymous and non-staff users are sent to the admin login."""
    assert client.get(dashboard_url()).status_code == 302
    get_user_model().objects.create_user("ajan-meraklı", password="pass-12345")
    client.login(username="ajan-meraklı", password="pass-12345")
    response = client.get(dashboard_url())
    assert response.status_code == 302 and reverse("admin:login") in response["Location"]


def test_classify_as_creates_an_audited_mapping_used_by_the_next_call(
    admin_client, admin_user, scripted_run, sandbox, endpoint_for, django_capture_on_commit_callbacks
):
    """One click maps BS-999 to "unavailable": the mapping is audited and the next BS-999 is retried as such."""
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("integrations_health_classify"),
            {"insurer": "bogazici", "provider_code": "BS-999", "kind": "unavailable", "window": "15m"},
        )
    assert response.status_code == 302 and response["Location"] == dashboard_url(window="15m")
    mapping = ErrorMapping.objects.get(insurer__code="bogazici", provider_code="BS-999")
    assert mapping.kind == "unavailable"
    entry = AdminChange.objects.get(model_name="errormapping", object_id=str(mapping.pk))
    assert (entry.action, entry.user, entry.insurer_code) == ("add", admin_user, "bogazici")
    assert {"field": "kind", "label": "tür", "from": None, "to": "unavailable"} in entry.changes

    sandbox["bogazici"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "BS-999"}])
    outcome = trafik(endpoint_for, "bogazici")
    assert outcome.ok  # retried as "unavailable", where an unknown code would have stopped at the cap
    latest = Attempt.objects.filter(insurer_code="bogazici", provider_code="BS-999").order_by("-started_at").first()
    assert (latest.error_class, latest.error_kind) == ("retryable", "unavailable")
    page = admin_client.get(dashboard_url(window="15m")).content.decode()
    assert "Eşlendi: unavailable" in page


def test_classify_refuses_a_meaningless_kind(admin_client, scripted_run):
    """Mapping a code to "unclassified" (or to no kind at all) is refused with a message; nothing is written."""
    for kind in ("unclassified", "nonsense"):
        response = admin_client.post(
            reverse("integrations_health_classify"),
            {"insurer": "bogazici", "provider_code": "BS-999", "kind": kind},
            follow=True,
        )
        assert "sınıflandırılamadı" in response.content.decode()
    assert not ErrorMapping.objects.exists()
    assert not AdminChange.objects.filter(model_name="errormapping").exists()


def test_classify_needs_the_mapping_permission(client, scripted_run):
    """A staff user who may not edit error mappings gets 403 from the button's endpoint."""
    get_user_model().objects.create_user("izleyici", password="pass-12345", is_staff=True)
    client.login(username="izleyici", password="pass-12345")
    response = client.post(
        reverse("integrations_health_classify"),
        {"insurer": "bogazici", "provider_code": "BS-999", "kind": "unavailable"},
    )
    assert response.status_code == 403
    assert not ErrorMapping.objects.exists()
