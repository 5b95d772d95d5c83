"""Anka adapter, cancellation and the production list, against the Anka sandbox over real HTTP."""

from __future__ import annotations

import pytest

from integrations.answers.taxonomy import plain_message
from integrations.models import Attempt
from sandbox.insurers import anka as anka_sandbox
from tests.integrations.adapters.cancellation_cases import CANCELLED, cancel, list_policies, seed

pytestmark = pytest.mark.django_db
POLICY = "AK-P-IPTAL-1"


@pytest.fixture
def anka(sandbox, endpoint_for):
    seed(sandbox["anka"], POLICY)
    return sandbox["anka"], endpoint_for("anka")


def test_a_409_is_read_by_its_code(anka):
    """At Anka a 409 is QUOTE_EXPIRED (a refusal) or ALREADY_CANCELLED (the first result)."""
    server, endpoint = anka
    server.state.add_faults([{"operation": "cancel_policy", "fault": "error", "code": "QUOTE_EXPIRED"}])
    expired = cancel(endpoint, POLICY)
    assert (expired.error.provider_code, expired.error.kind, expired.attempts) == ("QUOTE_EXPIRED", "expired", 1)
    server.state.add_faults([{"operation": "cancel_policy", "fault": "error", "code": "ALREADY_CANCELLED"}])
    already = cancel(endpoint, POLICY)
    assert already.ok and already.result.to_json() == {"policy_no": POLICY, **CANCELLED}
    row = Attempt.objects.filter(operation="cancel_policy").latest("started_at")
    assert (row.ok, row.http_status) == (True, 409)


def test_an_unreadable_already_cancelled_leaves_the_outcome_unknown(anka, monkeypatch):
    """A 409 ALREADY_CANCELLED without the cancellation it repeats is no result and no "no": the
    policy may be cancelled, so the outcome is unknown, never a failure."""
    _, endpoint = anka
    monkeypatch.setattr(
        anka_sandbox, "already_cancelled", lambda cancellation, message=None: anka_sandbox.error("ALREADY_CANCELLED")
    )
    cancel(endpoint, POLICY)
    again = cancel(endpoint, POLICY)
    assert not again.ok and again.outcome == "unknown"
    assert (again.error.kind, again.error.provider_code) == ("unclassified", "MALFORMED_RESPONSE")


def test_idempotency_mismatch_is_not_a_refusal_of_the_cancellation(anka):
    """Anka holds another request under our key: whatever it did is unknown."""
    server, endpoint = anka
    server.state.add_faults(
        [{"operation": "cancel_policy", "fault": "error", "code": "IDEMPOTENCY_MISMATCH", "times": 10}]
    )
    outcome = cancel(endpoint, POLICY)
    assert not outcome.ok and outcome.outcome == "unknown" and outcome.error.provider_code == "IDEMPOTENCY_MISMATCH"


def test_validation_names_the_field(anka):
    _, endpoint = anka
    outcome = cancel(endpoint, POLICY, reason="bored")
    assert (outcome.error.kind, outcome.error.field, outcome.attempts) == ("validation", "reason", 1)
    assert plain_message(outcome.error) == "Şirket iptal nedeni bilgisini kabul etmedi. Kontrol edip yeniden deneyin."


def test_an_unreadable_list_item_fails_the_page(anka, monkeypatch):
    """Never dropped: the page is a malformed answer (unknown, asked again), and so is the list."""
    _, endpoint = anka
    original = anka_sandbox.listed_item
    monkeypatch.setattr(anka_sandbox, "listed_item", lambda policy: {**original(policy), "product": "yat"})
    outcome = list_policies(endpoint)
    assert not outcome.ok and (outcome.error.kind, outcome.error.provider_code) == (
        "unclassified",
        "MALFORMED_RESPONSE",
    )
    assert outcome.attempts == 2
