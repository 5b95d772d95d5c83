"""Çınar adapter, police-iptal and uretim-listesi, against the Çınar sandbox over real HTTP."""

from __future__ import annotations

import pytest

from sandbox.insurers import cinar as cinar_sandbox
from tests.integrations.adapters.cancellation_cases import CANCELLED, cancel, list_policies, seed

pytestmark = pytest.mark.django_db
POLICY = "CN-P-IPTAL-1"


@pytest.fixture
def cinar(sandbox, endpoint_for):
    seed(sandbox["cinar"], POLICY)
    return sandbox["cinar"], endpoint_for("cinar")


def test_a_duplicate_request_on_a_cancellation_is_a_success(cinar):
    """BIZ_DUPLICATE_REQUEST: our request_ref already cancelled the policy; its data is the result."""
    server, endpoint = cinar
    server.state.add_faults([{"operation": "cancel_policy", "fault": "error", "code": "BIZ_DUPLICATE_REQUEST"}])
    outcome = cancel(endpoint, POLICY)
    assert outcome.ok and outcome.attempts == 1, outcome.error
    assert outcome.result.to_json() == {"policy_no": POLICY, **CANCELLED}


def test_an_expired_token_is_renewed_once_within_the_cancellation(cinar):
    server, endpoint = cinar
    assert list_policies(endpoint).ok  # a token is cached
    server.state.ledger.tokens.clear()  # ...and Çınar forgot it
    outcome = cancel(endpoint, POLICY)
    assert outcome.ok and outcome.attempts == 1, outcome.error
    assert server.state.counts()["received"] == {"token": 2, "policy_list": 1, "cancel_policy": 2}
    assert server.state.counts()["cancellations_by_policy"] == {POLICY: 1}


def test_validation_codes_name_the_platform_field(cinar):
    _, endpoint = cinar
    outcome = cancel(endpoint, POLICY, effective_on="2026-05-01")
    assert (outcome.error.provider_code, outcome.error.kind, outcome.error.field) == (
        "VAL_IPTAL_TARIHI",
        "validation",
        "effective_on",
    )
    too_long = list_policies(endpoint, {"issued_from": "2026-05-01", "issued_to": "2026-07-01"})
    assert (too_long.error.provider_code, too_long.error.kind) == ("VAL_TARIH", "validation")


def test_an_unreadable_list_entry_fails_the_page(cinar, monkeypatch):
    _, endpoint = cinar
    original = cinar_sandbox.listed_item
    monkeypatch.setattr(cinar_sandbox, "listed_item", lambda policy: {**original(policy), "prim": 12.5})
    outcome = list_policies(endpoint)
    assert not outcome.ok and (outcome.error.kind, outcome.error.provider_code) == (
        "unclassified",
        "MALFORMED_RESPONSE",
    )
