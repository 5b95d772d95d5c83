"""Issuance safety at the edges, asserted on the insurer's side (policies per quote, calls in order).

A slow insurer that commits after our read timeout, polls that lag the POST, a lookup that says
"not issued" while the first send is still running, dead letters replayed, crashes inside the
try loop, records that would otherwise cycle for ever.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from integrations.adapters.registry import registered_codes
from integrations.models import InsurerAccount, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from policies.models import Policy
from quotes.models import Issuance
from quotes.services import issuance as svc
from tests.quotes.conftest import issuance_policy_override
from tests.quotes.test_issuance import quoted, start
from work.item import WorkState
from work.services import WORK_MAX_RECLAIMS, work_claim, work_promote_due, work_reclaim_expired

pytestmark = pytest.mark.django_db

INSURERS = registered_codes()
# Commits this long after receiving the send: past the 1 s read timeout below.
SLOW_COMMIT_SECONDS = 2.5
# Boğaziçi's contract says 30 s; the tests scale it down (the admin can tune it the same way).
SETTLING_SECONDS = 4.0


@pytest.fixture
def edge_policy(seeded_accounts):
    """Short timeouts and waits; Boğaziçi's settling time scaled down like the rest."""
    issuance_policy_override(
        max_attempts=5,
        base_delay=0.05,
        max_delay=0.2,
        deadline=20.0,
        attempt_timeout=1.0,
        settling_seconds={"bogazici": SETTLING_SECONDS},
    )
    yield
    clear_policy_cache()


def run_to_the_end(issuance: Issuance, *, timeout: float = 40.0) -> Issuance:
    """Work the record as the workers and the pump would, until it leaves the open states."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = svc.issuance_process(issuance.pk)
        if state in (WorkState.SUBMITTED, WorkState.FAILED, WorkState.DEFERRED):
            issuance.refresh_from_db()
            return issuance
        due = Issuance.objects.values_list("next_attempt_at", flat=True).get(pk=issuance.pk)
        if due is not None:
            time.sleep(max((due - timezone.now()).total_seconds(), 0.0) + 0.02)
        work_promote_due(Issuance)
    raise AssertionError(f"issuance {issuance.pk} still {Issuance.objects.get(pk=issuance.pk).state}")


def policies_for(sandbox, code: str, quote_no: str) -> list[str]:
    return sandbox[code].state.counts()["policies_by_quote"].get(quote_no, [])


@pytest.mark.parametrize("code", INSURERS)
def test_a_send_that_commits_after_the_read_timeout_makes_exactly_one_policy(agents, sandbox, edge_policy, code):
    """The insurer is still working on the first send when we time out; whatever we ask or
    re-send meanwhile, the quote ends with one policy, and it is the one we store."""
    row = quoted(agents, code)
    sandbox[code].state.add_faults([{"operation": "issue_policy", "fault": "latency", "seconds": SLOW_COMMIT_SECONDS}])
    issuance = run_to_the_end(start(agents, row))
    time.sleep(SLOW_COMMIT_SECONDS)  # anything still sleeping at the insurer has committed by now
    assert issuance.state == WorkState.SUBMITTED, (issuance.error_kind, issuance.provider_code, issuance.error_message)
    assert policies_for(sandbox, code, row.quote_no) == [issuance.policy_no]
    assert Policy.objects.get(issuance=issuance).policy_no == issuance.policy_no


def test_bogazici_not_issued_is_final_only_after_the_settling_time(agents, sandbox, edge_policy):
    """BS-404 while the first Policelestir still runs is not a "no": no re-send before the settling
    time since that send, and then the lookup finds the policy the first send made."""
    row = quoted(agents, "bogazici")
    sandbox["bogazici"].state.add_faults(
        [{"operation": "issue_policy", "fault": "latency", "seconds": SLOW_COMMIT_SECONDS}]
    )
    issuance = start(agents, row)
    started = time.monotonic()
    issuance = run_to_the_end(issuance)
    assert issuance.state == WorkState.SUBMITTED
    counts = sandbox["bogazici"].state.counts()
    assert counts["received"]["issue_policy"] == 1  # never sent again
    assert counts["received"]["issue_lookup"] >= 2  # BS-404 at once, the policy after settling
    assert counts["policies_by_quote"] == {row.quote_no: [issuance.policy_no]}
    assert time.monotonic() - started >= SLOW_COMMIT_SECONDS


def test_bogazici_resends_once_the_settling_time_has_passed(agents, sandbox, edge_policy):
    """A send that never reached the backend (the gateway dropped it): after the settling time
    the lookup's BS-404 is final, and the one re-send issues the policy."""
    row = quoted(agents, "bogazici")
    sandbox["bogazici"].state.add_faults([{"operation": "issue_policy", "fault": "reset"}])
    issuance = start(agents, row)
    issuance = run_to_the_end(issuance)
    assert issuance.state == WorkState.SUBMITTED
    counts = sandbox["bogazici"].state.counts()
    assert counts["received"]["issue_policy"] == 2
    assert counts["policies_by_quote"] == {row.quote_no: [issuance.policy_no]}
    sends = issuance_sends(issuance)
    assert (sends[1] - sends[0]).total_seconds() >= SETTLING_SECONDS


def issuance_sends(issuance: Issuance) -> list:
    from integrations.models import Attempt

    return list(
        Attempt.objects.filter(reference=issuance.reference, call="main")
        .order_by("started_at")
        .values_list("started_at", flat=True)
    )


@pytest.mark.parametrize(
    "lag",
    [
        {"fault": "error", "code": "NOT_FOUND", "times": 3},
        {"fault": "error", "code": "SERVICE_UNAVAILABLE", "times": 3},
        {"fault": "reset", "times": 2},
    ],
    ids=["404", "503", "reset"],
)
def test_deniz_polls_that_lag_the_post_do_not_end_the_issuance(agents, sandbox, edge_policy, lag):
    """After a 202 only REJECTED means no policy: a 404, a 503 or a reset from the poll cluster
    is waited out, and the request Deniz accepted becomes our one policy."""
    row = quoted(agents, "deniz")
    sandbox["deniz"].state.add_faults([{"operation": "issue_poll", **lag}])
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.SUBMITTED, (issuance.provider_code, issuance.error_message)
    counts = sandbox["deniz"].state.counts()
    assert counts["received"]["issue_policy"] == 1
    assert counts["policies_by_quote"] == {row.quote_no: [issuance.policy_no]}


def test_deniz_polls_lagging_past_every_try_wait_for_a_person_never_fail(agents, sandbox, edge_policy, client):
    """Polls that never answer within the tries: the outcome is unknown, so the record is
    DEFERRED (never FAILED), and the desk says so instead of offering another issue."""
    OperationPolicy.objects.filter(insurer__code="deniz", operation="issue_policy").update(max_attempts=2, deadline=3.0)
    clear_policy_cache()
    row = quoted(agents, "deniz")
    sandbox["deniz"].state.add_faults(
        [{"operation": "issue_poll", "fault": "error", "code": "NOT_FOUND", "times": None}]
    )
    sandbox["deniz"].state.add_faults(
        [{"operation": "issue_lookup", "fault": "error", "code": "NOT_FOUND", "times": None}]
    )
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.DEFERRED and issuance.maybe_sent
    assert "Sonuç bilinmiyor" in issuance.error_message
    assert sandbox["deniz"].state.counts()["received"]["issue_policy"] == 1  # the 409 path never re-sent it
    client.force_login(agents["ACENTE1"])
    page = client.get(f"/policelestirme/{issuance.pk}/").content.decode()
    assert "Sonuç bilinmiyor" in page
    request_page = client.get(f"/talepler/{row.request.public_id}/sonuclar/").content.decode()
    assert "Poliçeleştir</a>" not in request_page


def test_unknown_outcome_is_shown_while_the_insurer_is_asked(agents, sandbox, edge_policy, client):
    """An issuance whose send may have taken effect, waiting for its next lookup."""
    row = quoted(agents, "bogazici")
    issuance = start(agents, row)
    Issuance.objects.filter(pk=issuance.pk).update(state=WorkState.PENDING, attempts=1, maybe_sent=True)
    client.force_login(agents["ACENTE1"])
    page = client.get(f"/policelestirme/{issuance.pk}/").content.decode()
    assert "Sonuç bilinmiyor, sigorta şirketine soruluyor" in page


# --- one replay path ------------------------------------------------------------------------------------


def test_replay_command_gives_a_refused_issuance_a_new_reference(agents, sandbox, edge_policy):
    """`replay_dead_letters --model issuance` takes the same path as the admin: a definite "no"
    gets a new reference once Deniz, asked under the old one, holds nothing there (it would
    answer the old one with its refusal again)."""
    row = quoted(agents, "deniz")
    sandbox["deniz"].state.add_faults([{"operation": "issue_policy", "fault": "reject"}])
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.FAILED
    call_command("replay_dead_letters", "--model", "issuance", "--id", str(issuance.pk))
    replayed = Issuance.objects.get(pk=issuance.pk)
    assert replayed.state == WorkState.QUEUED and replayed.reference == issuance.reference
    assert replayed.maybe_sent and replayed.reference_refused  # asked under the old one first
    done = run_to_the_end(replayed)
    assert done.state == WorkState.SUBMITTED and done.reference != issuance.reference
    assert len(policies_for(sandbox, "deniz", row.quote_no)) == 1


def test_replay_command_keeps_a_deferred_issuance_reference_and_asks_first(agents, sandbox, edge_policy):
    """A DEFERRED issuance may have reached the insurer: the replay keeps its reference, and its
    first try asks the insurer, which finds the policy the lost send made."""
    row = quoted(agents, "bogazici")
    sandbox["bogazici"].state.add_faults(
        [
            {"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset"},
            {"operation": "issue_lookup", "fault": "html", "http_status": 502, "times": 5},
        ]
    )
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.DEFERRED
    call_command("replay_dead_letters", "--model", "issuance", "--id", str(issuance.pk))
    replayed = Issuance.objects.get(pk=issuance.pk)
    assert replayed.reference == issuance.reference and replayed.maybe_sent
    assert run_to_the_end(replayed).state == WorkState.SUBMITTED
    counts = sandbox["bogazici"].state.counts()
    assert counts["received"]["issue_policy"] == 1
    assert counts["policies_by_quote"] == {row.quote_no: [Issuance.objects.get(pk=issuance.pk).policy_no]}


# --- the try loop's guards --------------------------------------------------------------------------------


def test_a_crash_on_our_side_ends_in_deferred_not_a_loop(agents, sandbox, edge_policy):
    """Credentials that no longer decrypt: each try crashes before sending. The record is tried
    under the unknown cap and DEFERRED with the reason, never left IN_FLIGHT to loop."""
    row = quoted(agents, "anka")
    InsurerAccount.objects.filter(pk=row.account_id).update(credentials_encrypted="not-a-fernet-token")
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.DEFERRED
    assert issuance.provider_code == "PLATFORM_ERROR" and issuance.attempts == 2
    assert sandbox["anka"].state.counts()["received"].get("issue_policy", 0) == 0


def test_a_record_whose_workers_keep_dying_is_deferred(agents, sandbox, edge_policy):
    """Reclaimed from dead workers again and again: past the cap a person decides."""
    issuance = start(agents, quoted(agents, "anka"))
    for _ in range(WORK_MAX_RECLAIMS):
        assert work_claim(Issuance, issuance.pk, lease_seconds=60)
        Issuance.objects.filter(pk=issuance.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        work_reclaim_expired(Issuance)
    issuance.refresh_from_db()
    assert issuance.state == WorkState.DEFERRED and issuance.reclaims == WORK_MAX_RECLAIMS
    assert "kayboldu" in issuance.error_message


def test_a_record_in_play_too_long_is_deferred_when_it_would_wait_again(agents, sandbox, edge_policy):
    """Budget postponements and retries are capped over time: a day in play, then a person."""
    row = quoted(agents, "anka")
    issuance = start(agents, row)
    Issuance.objects.filter(pk=issuance.pk).update(in_play_since=timezone.now() - timedelta(hours=25))
    sandbox["anka"].state.add_faults([{"operation": "issue_policy", "fault": "html", "http_status": 503}])
    assert svc.issuance_process(issuance.pk) == WorkState.DEFERRED


def test_an_issuance_task_leaves_retries_to_the_pump_rather_than_outlive_its_timeout(
    agents, sandbox, edge_policy, settings
):
    """A short wait is kept inline only while the next try still fits inside django-q2's task
    timeout; otherwise the task ends and the pump takes the record up when it is due."""
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "timeout": 15}  # 5 s left after the margin; a try may take 20
    row = quoted(agents, "anka")
    sandbox["anka"].state.add_faults([{"operation": "issue_policy", "fault": "html", "http_status": 503}])
    issuance = start(agents, row)
    assert svc.issuance_process(issuance.pk) == WorkState.PENDING
    assert sandbox["anka"].state.counts()["received"]["issue_policy"] == 1
    assert run_to_the_end(Issuance.objects.get(pk=issuance.pk)).state == WorkState.SUBMITTED
