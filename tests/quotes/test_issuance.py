"""Poliçeleştirme: exactly one policy per quote, whatever the clicks, faults or dead workers."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from integrations.adapters.registry import registered_codes
from policies.models import Policy
from quotes.models import InsurerQuote, Issuance
from quotes.services import issuance as svc
from quotes.services import quote_requests
from tests import samples
from tests.quotes.request_samples import tasks_not_sent
from tests.work.sends import pump_kind
from work.replay import dead_letters_replay
from work.services import work_promote_due, work_reclaim_expired

pytestmark = pytest.mark.django_db


def quoted(agents, code: str) -> InsurerQuote:
    request = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    row = request.insurer_quotes.get(insurer__code=code)
    quote_requests.insurer_quote_fetch(row.id)
    row.refresh_from_db()
    assert row.state == "SUCCEEDED"
    return row


def start(agents, row: InsurerQuote) -> Issuance:
    return svc.issuance_start(user=agents["ACENTE1"], insurer_quote_id=row.id, payment_token=samples.PAYMENT_TOKEN)


@pytest.mark.parametrize("code", registered_codes())
def test_issuance_stores_the_policy(agents, sandbox, quick_issuance_policy, code):
    """A confirmed quote becomes a policy, stored for the nightly sync."""
    issuance = start(agents, quoted(agents, code))
    assert svc.issuance_process(issuance.pk) == "SUBMITTED"
    issuance.refresh_from_db()
    policy = Policy.objects.get(issuance=issuance)
    assert policy.policy_no == issuance.policy_no and policy.status == "ACTIVE"
    assert sandbox[code].state.counts()["issued_total"] == 1


def test_double_click_gives_the_same_issuance(agents, sandbox, quick_issuance_policy):
    """Starting twice (double click, second tab) returns the record already stored."""
    row = quoted(agents, "bogazici")
    first, second = start(agents, row), start(agents, row)
    assert first.pk == second.pk and first.reference == second.reference
    assert Issuance.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_workers_never_both_send(agents, sandbox, quick_issuance_policy, monkeypatch):
    """Two workers processing the same record at once: one claims it, one policy at the insurer."""
    # This test's threads are the only workers. Its commits are real (transaction=True), so the
    # tasks they would send reach the session's qcluster if an earlier test started it: a third
    # worker, which took the quote row or the issuance before the threads (seen in CI).
    tasks_not_sent(monkeypatch)
    issuance = start(agents, quoted(agents, "bogazici"))
    threads = [threading.Thread(target=svc.issuance_process, args=(issuance.pk,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    issuance.refresh_from_db()
    assert sandbox["bogazici"].state.counts()["issued_total"] <= 1, (issuance.state, issuance.error_message)
    # A try the platform itself put off (a send slot not had in time on a loaded machine, a busy
    # database) leaves the record waiting with nothing sent; it is taken on to the end: one policy.
    for _ in range(5):
        if issuance.state not in ("PENDING", "QUEUED"):
            break
        Issuance.objects.filter(pk=issuance.pk).update(next_attempt_at=timezone.now())
        work_promote_due(Issuance)
        svc.issuance_process(issuance.pk)
        issuance.refresh_from_db()
    assert issuance.state == "SUBMITTED", (issuance.state, issuance.error_message)
    assert sandbox["bogazici"].state.counts()["issued_total"] == 1


def test_expired_quote_is_refused_clearly(agents, sandbox):
    """A quote past its validity is refused with a Turkish message, and nothing is stored."""
    row = quoted(agents, "anka")
    InsurerQuote.objects.filter(pk=row.pk).update(valid_until=timezone.now() - timedelta(minutes=1))
    with pytest.raises(svc.IssuanceRefused, match="süresi dolmuş"):
        start(agents, row)
    assert Issuance.objects.count() == 0


def test_other_agency_cannot_issue(agents, sandbox):
    """Agent of another agency cannot issue this agency's quote (not found)."""
    row = quoted(agents, "anka")
    with pytest.raises(InsurerQuote.DoesNotExist):
        svc.issuance_start(user=agents["ACENTE2"], insurer_quote_id=row.id, payment_token="tok")


@pytest.mark.parametrize("code", registered_codes())
def test_lost_answer_yields_one_policy(agents, sandbox, quick_issuance_policy, code):
    """The insurer issued but the answer was lost: the retry finds that policy, never a second."""
    issuance = start(agents, quoted(agents, code))
    sandbox[code].state.add_faults([{"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset"}])
    assert svc.issuance_process(issuance.pk) == "SUBMITTED"
    issuance.refresh_from_db()
    quote_no = issuance.insurer_quote.quote_no
    assert sandbox[code].state.counts()["policies_by_quote"][quote_no] == [issuance.policy_no]
    assert issuance.attempts == 2


def test_worker_killed_mid_call_is_resumed_with_a_lookup(agents, sandbox, quick_issuance_policy):
    """A record left IN_FLIGHT by a dead worker is reclaimed; its next try asks Boğaziçi first."""
    issuance = start(agents, quoted(agents, "bogazici"))
    sandbox["bogazici"].state.add_faults(
        [{"operation": "issue_policy", "fault": "commit_then_drop", "drop": "hang", "seconds": 2}]
    )
    # Simulate the worker dying right after sending: the record is IN_FLIGHT, marked maybe-sent, lease gone.
    Issuance.objects.filter(pk=issuance.pk).update(state="IN_FLIGHT", maybe_sent=True, lease_expires_at=timezone.now())
    from integrations.calling.calls import endpoint_for_account, insurer_operation_run

    row = issuance.insurer_quote
    insurer_operation_run(
        endpoint=endpoint_for_account(row.account),
        operation="issue_policy",
        data=svc.issuance_call_data(issuance),
        reference=issuance.reference,
        attempt_limit=1,
    )  # the dead worker's send: the policy now exists at the insurer, its answer lost
    assert work_reclaim_expired(Issuance) == [issuance.pk]
    assert svc.issuance_process(issuance.pk) == "SUBMITTED"
    counts = sandbox["bogazici"].state.counts()
    assert counts["policies_by_quote"][row.quote_no] == [Issuance.objects.get(pk=issuance.pk).policy_no]
    assert counts["received"]["issue_lookup"] >= 1


def test_permanent_refusal_fails_with_context_and_can_be_replayed(agents, sandbox, quick_issuance_policy):
    """A refusal is FAILED with the raw code and reason kept; after a fix, a replay issues it."""
    issuance = start(agents, quoted(agents, "deniz"))
    sandbox["deniz"].state.add_faults([{"operation": "issue_policy", "fault": "reject", "reason": "Ödeme reddedildi"}])
    assert svc.issuance_process(issuance.pk) == "FAILED"
    issuance.refresh_from_db()
    assert issuance.error_class == "permanent" and issuance.provider_code
    assert issuance.payload["quote_no"] == issuance.insurer_quote.quote_no
    assert dead_letters_replay(ids=[issuance.pk], model=Issuance) == [issuance.pk]
    replayed = Issuance.objects.get(pk=issuance.pk)
    assert replayed.reference == issuance.reference and replayed.reference_refused  # asked under it first
    assert svc.issuance_process(issuance.pk) == "SUBMITTED"
    # The insurer's answer to the old reference is final: the new send went under a new one.
    assert Issuance.objects.get(pk=issuance.pk).reference != issuance.reference


@pytest.mark.parametrize("sent", [True, False], ids=["refused-after-sending", "refused-before-sending"])
def test_replaying_a_refusal_whose_request_has_a_policy_by_now_leaves_it_and_says_why(
    agents, sandbox, quick_issuance_policy, admin_client, sent
):
    """The agent issued another insurer's quote after a refusal: replaying the refusal changes
    nothing (its reference stays the one the agent saw) and says the request has its policy,
    on the service, the admin action and the command alike."""
    from io import StringIO

    from django.core.management import call_command

    from work.replay import dead_letters_replay_outcome

    refused_row = quoted(agents, "deniz")
    refused = start(agents, refused_row)
    sandbox["deniz"].state.add_faults([{"operation": "issue_policy", "fault": "reject", "reason": "Ödeme reddedildi"}])
    assert svc.issuance_process(refused.pk) == "FAILED"
    if not sent:
        # As one refused on our side before anything left (a payment token past its retention).
        Issuance.objects.filter(pk=refused.pk).update(maybe_sent=False)
    other_row = refused_row.request.insurer_quotes.get(insurer__code="anka")
    quote_requests.insurer_quote_fetch(other_row.id)
    issued = start(agents, InsurerQuote.objects.get(pk=other_row.pk))
    assert svc.issuance_process(issued.pk) == "SUBMITTED"
    policy_no = Policy.objects.get(issuance=issued).policy_no
    before = Issuance.objects.values("state", "reference", "reference_refused", "maybe_sent").get(pk=refused.pk)
    reason = f"Bu teklif talebi için poliçe zaten düzenlendi: {policy_no}."

    outcome = dead_letters_replay_outcome(ids=[refused.pk], model=Issuance)
    assert outcome.replayed == [] and outcome.held == {refused.pk: reason}
    assert dead_letters_replay(ids=[refused.pk], model=Issuance) == []

    response = admin_client.post(
        "/admin/quotes/issuance/", {"action": "replay_selected", "_selected_action": [refused.pk]}, follow=True
    )
    page = response.content.decode()
    assert reason in page and before["reference"] in page and "olmadığı için atlandı" not in page

    errors = StringIO()
    command = ["replay_dead_letters", "--model", "issuance", "--id", str(refused.pk)]
    call_command(*command, stdout=StringIO(), stderr=errors)
    assert reason in errors.getvalue() and "not FAILED or DEFERRED" not in errors.getvalue()

    after = Issuance.objects.values("state", "reference", "reference_refused", "maybe_sent").get(pk=refused.pk)
    assert after == before
    assert sandbox["deniz"].state.counts()["received"]["issue_policy"] == 1


def test_deferred_issuance_is_replayed_with_its_reference(agents, sandbox, quick_issuance_policy):
    """A DEFERRED issuance may have reached the insurer: its replay keeps the reference and looks first."""
    issuance = start(agents, quoted(agents, "bogazici"))
    sandbox["bogazici"].state.add_faults(
        [
            {"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset"},
            {"operation": "issue_lookup", "fault": "html", "http_status": 502, "times": 4},
        ]
    )
    assert svc.issuance_process(issuance.pk) == "DEFERRED"
    assert dead_letters_replay(ids=[issuance.pk], model=Issuance) == [issuance.pk]
    assert Issuance.objects.get(pk=issuance.pk).reference == issuance.reference
    assert svc.issuance_process(issuance.pk) == "SUBMITTED"
    quote_no = issuance.insurer_quote.quote_no
    assert len(sandbox["bogazici"].state.counts()["policies_by_quote"][quote_no]) == 1


def test_retryable_failures_past_the_cap_are_deferred_for_a_human(agents, sandbox, quick_issuance_policy):
    """An insurer down for every try: the record is DEFERRED (not lost, not failed), with its context."""
    issuance = start(agents, quoted(agents, "anka"))
    sandbox["anka"].state.add_faults([{"operation": "issue_policy", "fault": "html", "http_status": 503, "times": 10}])
    assert svc.issuance_process(issuance.pk) == "DEFERRED"
    issuance.refresh_from_db()
    assert issuance.attempts == 3 and issuance.error_kind == "unavailable"
    assert sandbox["anka"].state.counts()["received"]["issue_policy"] == 3


def test_pump_resends_an_issuance_whose_task_was_lost(
    agents, sandbox, quick_issuance_policy, django_capture_on_commit_callbacks
):
    """A QUEUED issuance whose task vanished (broker restart) is queued again by the pump."""
    with django_capture_on_commit_callbacks(execute=False):
        issuance = start(agents, quoted(agents, "anka"))
    Issuance.objects.filter(pk=issuance.pk).update(updated_at=timezone.now() - timedelta(minutes=5))
    assert pump_kind(Issuance) == [issuance.pk]
    assert pump_kind(Issuance) == []  # touched: not re-sent again at once
    assert svc.issuance_process(issuance.pk) == "SUBMITTED"


def test_a_broker_down_at_the_confirm_loses_nothing_and_the_pump_sends_it_later(
    agents, sandbox, quick_issuance_policy, django_capture_on_commit_callbacks, monkeypatch
):
    """The record is committed before its task is sent: a broker that refuses the task (Redis
    restarting) must not turn the agent's confirm into an error page, nor lose the record; the
    pump sends the task again once the broker is back."""
    import django_q.tasks
    from redis.exceptions import ConnectionError as RedisConnectionError

    def broker_down(*args, **kwargs):
        raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    row = quoted(agents, "anka")
    monkeypatch.setattr(django_q.tasks, "async_task", broker_down)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        issuance = start(agents, row)
    assert len(callbacks) == 1  # the task was tried, and refused
    assert Issuance.objects.get(pk=issuance.pk).state == "QUEUED"

    monkeypatch.undo()
    Issuance.objects.filter(pk=issuance.pk).update(updated_at=timezone.now() - timedelta(minutes=5))
    assert pump_kind(Issuance) == [issuance.pk]
    assert svc.issuance_process(issuance.pk) == "SUBMITTED"
