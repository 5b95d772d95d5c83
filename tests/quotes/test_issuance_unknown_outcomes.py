"""An issuance whose answer was lost stays open until the insurer itself says: the five paths.

1. a look-up refused (validation, business, "expired") answers the look-up, never the issuance;
2. a replay asks under the old reference before anything else;
3. the quote request stays held while the outcome is unknown;
4. the settling time is measured on the database's clock, not a skewed worker's;
5. (admin classification: tests/integrations/test_admin_classification_warning.py).

Asserted on the insurer's side: policies per quote and calls received.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from integrations.models import Insurer, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from policies.models import Policy
from quotes.models import Issuance
from quotes.services import issuance as svc
from quotes.services import quote_requests
from tests import samples
from tests.integrations.management.test_insurer_call import creds, probe
from tests.quotes.conftest import issuance_policy_override
from tests.quotes.test_issuance import quoted, start
from tests.quotes.test_issuance_safety import SLOW_COMMIT_SECONDS, policies_for, run_to_the_end
from work.item import WorkState
from work.replay import dead_letters_replay

pytestmark = pytest.mark.django_db

SETTLING_SECONDS = 4.0

# A refusal each insurer with a look-up may give the look-up itself, in its own words.
REFUSED_LOOK_UPS = [
    ("bogazici", "BS-320"),  # expired
    ("bogazici", "BS-100"),  # validation
    ("bogazici", "BS-310"),  # business
    ("bogazici", "BS-200"),  # authentication
    ("deniz", "INVALID_REQUEST"),
    ("deniz", "QUOTE_EXPIRED"),
    ("deniz", "UNDERWRITING_DECLINED"),
]


@pytest.fixture
def edge_policy(seeded_accounts):
    issuance_policy_override(
        max_attempts=4,
        base_delay=0.05,
        max_delay=0.2,
        deadline=20.0,
        attempt_timeout=1.0,
        settling_seconds={"bogazici": SETTLING_SECONDS},
    )
    yield
    clear_policy_cache()


def lost_answer_then_refused_look_ups(sandbox, code: str, provider_code: str, *, times: int | None) -> None:
    sandbox[code].state.add_faults(
        [
            {"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset"},
            {"operation": "issue_lookup", "fault": "error", "code": provider_code, "times": times},
        ]
    )


@pytest.mark.parametrize(("code", "provider_code"), REFUSED_LOOK_UPS)
def test_a_refused_look_up_leaves_the_outcome_open_and_the_next_look_up_finds_the_policy(
    agents, sandbox, edge_policy, code, provider_code
):
    """The send committed and its answer was lost; the look-up that follows is refused. That
    refusal is about the look-up: the issuance is asked about again, and ends with the one
    policy the first send made (never FAILED, never a second send)."""
    row = quoted(agents, code)
    lost_answer_then_refused_look_ups(sandbox, code, provider_code, times=1)
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.SUBMITTED, (issuance.provider_code, issuance.error_message)
    counts = sandbox[code].state.counts()
    assert counts["received"]["issue_policy"] == 1
    assert counts["policies_by_quote"] == {row.quote_no: [issuance.policy_no]}
    assert Policy.objects.get(issuance=issuance).policy_no == issuance.policy_no


@pytest.mark.parametrize(("code", "provider_code"), [("bogazici", "BS-320"), ("deniz", "INVALID_REQUEST")])
def test_look_ups_refused_to_the_end_wait_as_deferred_and_the_replay_finds_the_policy(
    agents, sandbox, edge_policy, code, provider_code
):
    """Every look-up refused: the outcome is unknown, so the record waits for a person as
    DEFERRED with a note (never FAILED). The admin's replay keeps the reference and asks first:
    the policy the lost send made is found, and nothing is sent again."""
    row = quoted(agents, code)
    lost_answer_then_refused_look_ups(sandbox, code, provider_code, times=None)
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.DEFERRED and issuance.maybe_sent
    assert "Sonuç bilinmiyor" in issuance.error_message
    assert issuance.error_class != "permanent"

    sandbox[code].state.clear_faults()
    assert dead_letters_replay(model=Issuance, ids=[issuance.pk]) == [issuance.pk]
    replayed = Issuance.objects.get(pk=issuance.pk)
    assert replayed.reference == issuance.reference and replayed.maybe_sent
    assert run_to_the_end(replayed).state == WorkState.SUBMITTED
    counts = sandbox[code].state.counts()
    assert counts["received"]["issue_policy"] == 1
    assert len(counts["policies_by_quote"][row.quote_no]) == 1


def test_the_probe_says_unknown_never_permanent_when_the_look_up_is_refused(sandbox, seeded_accounts):
    """`insurer_call bogazici issue_policy`: the send's answer is lost and every look-up is
    refused as expired; the probe prints an unknown outcome, not a permanent failure."""
    OperationPolicy.objects.update_or_create(
        insurer=Insurer.objects.get(code="bogazici"),
        operation="issue_policy",
        defaults={"max_attempts": 3, "base_delay": 0.05, "max_delay": 0.2, "deadline": 6.0, "attempt_timeout": 1.0},
    )
    clear_policy_cache()
    status, quoted_report = probe(
        "bogazici",
        "trafik_quote",
        "--base-url",
        sandbox["bogazici"].base_url,
        "--data",
        json.dumps(samples.TRAFIK),
        "--credentials",
        creds("bogazici"),
    )
    assert status == 0, quoted_report
    number = quoted_report["result"]["quote_no"]
    lost_answer_then_refused_look_ups(sandbox, "bogazici", "BS-320", times=None)
    status, report = probe(
        "bogazici",
        "issue_policy",
        "--base-url",
        sandbox["bogazici"].base_url,
        "--data",
        json.dumps({"quote_no": number, "payment_token": samples.PAYMENT_TOKEN}),
        "--credentials",
        creds("bogazici"),
    )
    assert status == 1
    assert report["status"] == "failed" and report["outcome"] == "unknown", report
    assert report["error_class"] != "permanent" and report["provider_code"] == "BS-320"
    counts = sandbox["bogazici"].state.counts()
    assert counts["received"]["issue_policy"] == 1 and len(counts["policies_by_quote"][number]) == 1
    clear_policy_cache()


# --- 2. replay asks first ---------------------------------------------------------------------------


def test_replaying_a_refused_deniz_issuance_asks_under_the_old_reference_then_sends_under_a_new_one(
    agents, sandbox, edge_policy
):
    """A definite "no" (Deniz REJECTED the request) earns a new reference, but only after the
    insurer was asked under the old one and holds nothing there."""
    row = quoted(agents, "deniz")
    sandbox["deniz"].state.add_faults([{"operation": "issue_policy", "fault": "reject"}])
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.FAILED
    looked_up = sandbox["deniz"].state.counts()["received"].get("issue_lookup", 0)

    dead_letters_replay(model=Issuance, ids=[issuance.pk])
    replayed = Issuance.objects.get(pk=issuance.pk)
    assert replayed.state == WorkState.QUEUED and replayed.reference == issuance.reference
    assert replayed.maybe_sent and replayed.reference_refused

    done = run_to_the_end(replayed)
    assert done.state == WorkState.SUBMITTED and done.reference != issuance.reference
    assert not done.reference_refused
    counts = sandbox["deniz"].state.counts()
    assert counts["received"]["issue_lookup"] == looked_up + 1  # asked first, under the old reference
    assert counts["received"]["issue_policy"] == 2
    assert counts["policies_by_quote"] == {row.quote_no: [done.policy_no]}


def test_replaying_a_refused_bogazici_issuance_finds_a_policy_the_refusal_hid(agents, sandbox, edge_policy):
    """A send answered with a refusal that was in truth committed (a code an admin mapped to
    permanent, say): the replay asks Boğaziçi by quote first, finds the policy, sends nothing."""
    row = quoted(agents, "bogazici")
    sandbox["bogazici"].state.add_faults(
        [{"operation": "issue_policy", "fault": "error", "code": "BS-310", "commit": True}]
    )
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.FAILED
    dead_letters_replay(model=Issuance, ids=[issuance.pk])
    done = run_to_the_end(Issuance.objects.get(pk=issuance.pk))
    assert done.state == WorkState.SUBMITTED
    counts = sandbox["bogazici"].state.counts()
    assert counts["received"]["issue_policy"] == 1
    assert counts["policies_by_quote"] == {row.quote_no: [done.policy_no]}


def test_the_admin_action_replays_through_the_same_path(agents, sandbox, edge_policy, admin_client):
    """ "Seçilenleri yeniden dene" in the admin keeps the reference of an issuance that was sent."""
    row = quoted(agents, "bogazici")
    lost_answer_then_refused_look_ups(sandbox, "bogazici", "BS-320", times=None)
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.DEFERRED
    response = admin_client.post(
        "/admin/quotes/issuance/",
        {"action": "replay_selected", "_selected_action": [issuance.pk]},
    )
    assert response.status_code == 302, response.content[:500]
    replayed = Issuance.objects.get(pk=issuance.pk)
    assert replayed.state == WorkState.QUEUED and replayed.reference == issuance.reference and replayed.maybe_sent


# --- 3. the request stays held ----------------------------------------------------------------------


def quoted_too(row, code: str):
    """Another insurer's quote on the same request, fetched."""
    other = row.request.insurer_quotes.get(insurer__code=code)
    quote_requests.insurer_quote_fetch(other.id)
    other.refresh_from_db()
    assert other.state == "SUCCEEDED"
    return other


def test_an_unknown_outcome_keeps_the_request_from_another_insurers_issuance(agents, sandbox, edge_policy):
    """While an issuance's outcome is unknown, a policy may exist: the agent can not issue
    another insurer's quote for the same risk."""
    row = quoted(agents, "bogazici")
    lost_answer_then_refused_look_ups(sandbox, "bogazici", "BS-320", times=None)
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.DEFERRED
    other = quoted_too(row, "anka")
    with pytest.raises(svc.IssuanceRefused, match="sonucu henüz bilinmiyor"):
        start(agents, other)
    assert Issuance.objects.filter(quote_request=row.request).count() == 1
    assert sandbox["anka"].state.counts()["received"].get("issue_policy", 0) == 0


def test_a_definite_refusal_frees_the_request(agents, sandbox, edge_policy):
    """Only the insurer's definite "no" to the send lets another insurer's quote be issued."""
    row = quoted(agents, "anka")
    sandbox["anka"].state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "RISK_DECLINED"}])
    assert run_to_the_end(start(agents, row)).state == WorkState.FAILED
    other = quoted_too(row, "cinar")
    assert run_to_the_end(start(agents, other)).state == WorkState.SUBMITTED


# --- 4. one clock ---------------------------------------------------------------------------------


def test_a_worker_whose_clock_is_behind_does_not_shorten_the_settling_time(agents, sandbox, edge_policy, monkeypatch):
    """Worker A's clock is 20 s behind; it sends to Boğaziçi, which commits after our read
    timeout. Worker B, on the right time, takes the next tries: the send's age comes from the
    database's clock, so B waits the settling time out and finds the one policy."""
    row = quoted(agents, "bogazici")
    sandbox["bogazici"].state.add_faults(
        [{"operation": "issue_policy", "fault": "latency", "seconds": SLOW_COMMIT_SECONDS}]
    )
    issuance = start(agents, row)
    right_now = timezone.now
    with monkeypatch.context() as skewed:
        skewed.setattr(timezone, "now", lambda: right_now() - timedelta(seconds=20))
        skewed.setattr(svc, "INLINE_RETRY_MAX_WAIT", 0.0)  # A makes one try, then leaves it to the pump
        assert svc.issuance_process(issuance.pk) == WorkState.PENDING  # worker A: its send timed out
    done = run_to_the_end(Issuance.objects.get(pk=issuance.pk))  # worker B
    time.sleep(SLOW_COMMIT_SECONDS)
    assert done.state == WorkState.SUBMITTED
    counts = sandbox["bogazici"].state.counts()
    assert counts["received"]["issue_policy"] == 1
    assert policies_for(sandbox, "bogazici", row.quote_no) == [done.policy_no]


# --- rows the earlier rule left behind ---------------------------------------------------------------


def test_the_migration_reopens_issuances_failed_by_a_refused_look_up(agents, sandbox, edge_policy):
    """Rows FAILED under the earlier rule because a look-up was refused become DEFERRED (they
    hold their request again); one FAILED by a refused send stays FAILED."""
    import importlib

    from django.apps import apps

    by_look_up, by_send = quoted(agents, "bogazici"), quoted(agents, "anka")
    lost_answer_then_refused_look_ups(sandbox, "bogazici", "BS-320", times=None)
    sandbox["anka"].state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "RISK_DECLINED"}])
    unknown = run_to_the_end(start(agents, by_look_up))
    refused = run_to_the_end(start(agents, by_send))
    assert (unknown.state, refused.state) == (WorkState.DEFERRED, WorkState.FAILED)
    Issuance.objects.filter(pk=unknown.pk).update(state=WorkState.FAILED)  # as the earlier rule left it

    migration = importlib.import_module("quotes.migrations.0008_issuance_reference_refused")
    migration.reopen_failed_by_a_refused_look_up(apps, None)
    assert Issuance.objects.get(pk=unknown.pk).state == WorkState.DEFERRED
    assert "Sonuç bilinmiyor" in Issuance.objects.get(pk=unknown.pk).error_message
    assert Issuance.objects.get(pk=refused.pk).state == WorkState.FAILED


def test_an_open_outcome_without_its_payment_token_is_never_failed(agents, sandbox, edge_policy):
    """A send may be at the insurer and its token is gone (a row reopened after the purge):
    nothing can be sent to ask, so the record waits for a person, DEFERRED, nothing sent."""
    row = quoted(agents, "anka")
    issuance = start(agents, row)
    Issuance.objects.filter(pk=issuance.pk).update(
        payload={"quote_no": row.quote_no}, maybe_sent=True, last_sent_at=timezone.now() - timedelta(hours=1)
    )
    done = run_to_the_end(Issuance.objects.get(pk=issuance.pk))
    assert done.state == WorkState.DEFERRED and done.provider_code == "PAYMENT_TOKEN_GONE"
    assert sandbox["anka"].state.counts()["received"].get("issue_policy", 0) == 0
