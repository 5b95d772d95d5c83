"""Boğaziçi adapter, PoliceIptal and UretimListesi, against the Boğaziçi sandbox over real HTTP."""

from __future__ import annotations

import pytest

from sandbox.insurers import bogazici as bogazici_sandbox
from tests.integrations.adapters.cancellation_cases import CANCELLED, cancel, list_policies, seed

pytestmark = pytest.mark.django_db
POLICY = "BG-P-IPTAL-1"


@pytest.fixture
def bogazici(sandbox, endpoint_for):
    seed(sandbox["bogazici"], POLICY)
    return sandbox["bogazici"], endpoint_for("bogazici")


def test_a_backend_timeout_that_cancelled_is_asked_again_and_bs_330_answers(bogazici):
    """BS-902 after the cancellation was done: unknown, so the same PoliceIptal goes again; Boğaziçi
    does not deduplicate, but its BS-330 carries the first result. One cancellation."""
    server, endpoint = bogazici
    server.state.add_faults([{"operation": "cancel_policy", "fault": "error", "code": "BS-902", "commit": True}])
    outcome = cancel(endpoint, POLICY)
    assert outcome.ok and outcome.attempts == 2, outcome.error
    assert outcome.result.to_json() == {"policy_no": POLICY, **CANCELLED}
    assert server.state.counts()["cancellations_by_policy"] == {POLICY: 1}


def test_bs_100_names_the_platform_field(bogazici):
    _, endpoint = bogazici
    outcome = cancel(endpoint, POLICY, effective_on="2027-06-02")
    assert (outcome.error.provider_code, outcome.error.kind, outcome.error.field) == (
        "BS-100",
        "validation",
        "effective_on",
    )
    reversed_range = list_policies(endpoint, {"issued_from": "2026-05-31", "issued_to": "2026-05-01"})
    assert (reversed_range.error.provider_code, reversed_range.error.field) == ("BS-100", "issued_to")


def test_bs_340_is_a_business_refusal(bogazici):
    server, endpoint = bogazici
    server.state.set_policy_status(POLICY, "EXPIRED")
    outcome = cancel(endpoint, POLICY)
    assert (outcome.error.provider_code, outcome.error.kind, outcome.attempts) == ("BS-340", "business_reject", 1)


def test_an_unreadable_police_fails_the_page(bogazici, monkeypatch):
    _, endpoint = bogazici
    original = bogazici_sandbox._listed_xml
    monkeypatch.setattr(bogazici_sandbox, "_listed_xml", lambda policy: original(policy).replace("TRAFIK", "YAT"))
    outcome = list_policies(endpoint)
    assert not outcome.ok and (outcome.error.kind, outcome.error.provider_code) == (
        "unclassified",
        "MALFORMED_RESPONSE",
    )
