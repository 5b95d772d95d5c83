"""Deniz adapter, the polled cancellation and the cursor-paged list, against the Deniz sandbox."""

from __future__ import annotations

import pytest

from integrations.models import Attempt, Insurer, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from sandbox.insurers import deniz as deniz_sandbox
from tests.integrations.adapters.cancellation_cases import CANCELLED, cancel, list_policies, seed

pytestmark = pytest.mark.django_db
POLICY = "DZ-P-IPTAL-1"


@pytest.fixture
def deniz(sandbox, endpoint_for):
    server = sandbox["deniz"]
    server.state.configure(issuance_processing_seconds=0.1)
    seed(server, POLICY)
    return server, endpoint_for("deniz")


def test_the_cancellation_is_polled_to_done_within_one_attempt(deniz):
    _, endpoint = deniz
    outcome = cancel(endpoint, POLICY)
    assert outcome.ok and outcome.attempts == 1, outcome.error
    assert outcome.result.to_json() == {"policy_no": POLICY, **CANCELLED}
    polls = Attempt.objects.filter(operation="cancel_policy", call="poll")
    assert polls.exists() and all(row.attempt_no == 1 for row in polls)


def test_a_rejected_poll_is_deniz_verdict(deniz):
    """REJECTED: a permanent refusal that settles it (nothing was cancelled), asked once."""
    server, endpoint = deniz
    server.state.add_faults([{"operation": "cancel_policy", "fault": "reject", "reason": "HASAR_DOSYASI"}])
    outcome = cancel(endpoint, POLICY)
    assert (outcome.error.provider_code, outcome.error.kind, outcome.attempts) == ("REJECTED", "business_reject", 1)
    assert outcome.error.settles_issuance and outcome.outcome == ""
    assert "HASAR_DOSYASI" in outcome.error.message
    assert server.state.counts()["cancellations_by_policy"] == {}


def test_lagging_polls_are_waited_through(deniz):
    """For a while after the 202 the poll cluster answers 404: the cancellation stands, we poll on."""
    server, endpoint = deniz
    server.state.configure(poll_lag_seconds=0.5)
    outcome = cancel(endpoint, POLICY)
    assert outcome.ok and outcome.attempts == 1, outcome.error
    assert Attempt.objects.filter(operation="cancel_policy", call="poll", provider_code="NOT_FOUND").exists()


def test_a_cancellation_still_processing_at_the_deadline_is_unknown_never_failed(deniz, seeded_accounts):
    """Decided at the 202, revealed later than the operation may wait: the outcome stays unknown,
    each try asks again under the same reference (409 DUPLICATE_REFERENCE), one cancellation."""
    server, endpoint = deniz
    server.state.configure(issuance_processing_seconds=30)
    OperationPolicy.objects.update_or_create(
        insurer=Insurer.objects.get(code="deniz"),
        operation="cancel_policy",
        defaults={"attempt_timeout": 1.0, "deadline": 2.5, "base_delay": 0.1, "max_delay": 0.2, "max_attempts": 3},
    )
    clear_policy_cache()
    try:
        outcome = cancel(endpoint, POLICY)
    finally:
        clear_policy_cache()
    assert not outcome.ok and outcome.outcome == "unknown" and outcome.error.provider_code == "STILL_PROCESSING"
    assert server.state.counts()["cancellations_by_policy"] == {POLICY: 1}


def test_an_unreadable_list_item_fails_the_page(deniz, monkeypatch):
    _, endpoint = deniz
    original = deniz_sandbox.listed_item
    broken = {"amount": "1.00", "currency": "EUR"}
    monkeypatch.setattr(deniz_sandbox, "listed_item", lambda policy: {**original(policy), "gross_premium": broken})
    outcome = list_policies(endpoint)
    assert not outcome.ok and (outcome.error.kind, outcome.error.provider_code) == (
        "unclassified",
        "MALFORMED_RESPONSE",
    )
