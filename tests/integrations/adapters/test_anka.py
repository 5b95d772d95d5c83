"""Anka adapter against the Anka sandbox over real HTTP."""

from __future__ import annotations

from decimal import Decimal

import pytest

from integrations.models import Attempt
from integrations.results import PolicyStatus
from integrations.services.calls import insurer_operation_run, new_reference
from tests import samples

pytestmark = pytest.mark.django_db


def run(endpoint_for, operation, data, **kwargs):
    return insurer_operation_run(endpoint=endpoint_for("anka"), operation=operation, data=data, **kwargs)


def quote(endpoint_for):
    outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK)
    assert outcome.ok, outcome.error
    return outcome.result


def test_trafik_quote_is_normalised(endpoint_for):
    """A trafik quote comes back with a Decimal premium and an aware UTC expiry."""
    outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK)
    assert outcome.ok and outcome.attempts == 1
    assert outcome.result.quote_no.startswith("AK-T-")
    assert isinstance(outcome.result.premium, Decimal) and outcome.result.premium > 0
    assert outcome.result.valid_until.utcoffset().total_seconds() == 0
    assert outcome.provider_code == "200"


def test_kasko_quote_keeps_coverages(endpoint_for):
    """Kasko answers carry coverages, kept in the quote's details."""
    outcome = run(endpoint_for, "kasko_quote", samples.KASKO)
    assert outcome.ok and outcome.result.quote_no.startswith("AK-K-")
    assert outcome.result.details["coverages"]


def test_dask_address_then_quote(endpoint_for):
    """DASK: the address check gives the building id the quote needs."""
    address = run(endpoint_for, "dask_address", samples.DASK_ADDRESS)
    assert address.ok and address.result.uavt_code == samples.DASK_ADDRESS["uavt_code"]
    data = {**samples.DASK_RISK, "uavt_code": address.result.uavt_code, "building_id": address.result.building_id}
    dask = run(endpoint_for, "dask_quote", data)
    assert dask.ok and dask.result.details.get("sum_insured")


def test_issue_then_status(endpoint_for, sandbox):
    """Issuing a quote gives an ACTIVE policy whose status can be read back."""
    quote_no = quote(endpoint_for).quote_no
    issued = run(
        endpoint_for,
        "issue_policy",
        {"quote_no": quote_no, "payment_token": samples.PAYMENT_TOKEN},
        reference=new_reference(),
    )
    assert issued.ok and issued.result.status is PolicyStatus.ACTIVE
    status = run(endpoint_for, "policy_status", {"policy_no": issued.result.policy_no})
    assert status.ok and status.result.policy_no == issued.result.policy_no


@pytest.mark.parametrize(
    ("code", "error_class", "kind"),
    [
        ("VALIDATION", "permanent", "validation"),
        ("AUTH_INVALID", "permanent", "auth"),
        ("PRODUCT_NOT_ALLOWED", "permanent", "not_allowed"),
        ("NOT_FOUND", "permanent", "not_found"),
        ("QUOTE_EXPIRED", "permanent", "expired"),
        ("NOT_ELIGIBLE", "permanent", "business_reject"),
        ("RISK_DECLINED", "permanent", "business_reject"),
        ("IDEMPOTENCY_MISMATCH", "permanent", "business_reject"),
    ],
)
def test_permanent_codes_are_tried_exactly_once(endpoint_for, sandbox, code, error_class, kind):
    """Every permanent Anka code is classified and never retried."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": code}])
    outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK)
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (error_class, kind, code)
    assert outcome.attempts == 1
    assert sandbox["anka"].state.counts()["total_received"] == 1


def test_address_not_found_is_permanent(endpoint_for):
    """An unknown UAVT code is a permanent not_found, asked once."""
    outcome = run(endpoint_for, "dask_address", {"uavt_code": "9000000001"})
    assert (outcome.error.kind, outcome.error.provider_code, outcome.attempts) == ("not_found", "ADDRESS_NOT_FOUND", 1)


def test_not_eligible_shows_the_turkish_reason(endpoint_for, sandbox):
    """The agent reads Anka's refusal in Turkish."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "NOT_ELIGIBLE"}])
    outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK)
    assert outcome.error.agent_message() == "Araç teminata uygun değil"


def test_rate_limited_waits_retry_after_seconds(endpoint_for, sandbox, recording_sleep):
    """429 RATE_LIMITED is retried after at least its Retry-After, and the wait is logged with its source."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "throttle", "wait_seconds": 1}])
    outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK, sleep=recording_sleep)
    assert outcome.ok and outcome.attempts == 2
    assert recording_sleep.waits and recording_sleep.waits[0] >= 1.0
    throttled = Attempt.objects.get(attempt_no=1)
    assert (throttled.provider_code, throttled.error_kind, throttled.http_status) == ("RATE_LIMITED", "throttled", 429)
    assert throttled.wait_reason == "signal:Retry-After" and throttled.wait_seconds >= 1.0


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_errors_are_retried(endpoint_for, sandbox, recording_sleep, status):
    """A 5xx (JSON or HTML) is retryable: the second try succeeds."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "html", "http_status": status}])
    outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK, sleep=recording_sleep)
    assert outcome.ok and outcome.attempts == 2
    first = Attempt.objects.get(attempt_no=1)
    assert (first.provider_code, first.error_kind, first.wait_reason) == (
        str(status),
        "unavailable",
        "backoff:full-jitter",
    )


def test_unknown_code_gets_two_attempts_and_a_loud_log(endpoint_for, sandbox, recording_sleep, caplog):
    """An unmapped code is unknown: two attempts in all, logged at WARNING with the raw code."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "ZZ-999", "times": 5}])
    with caplog.at_level("WARNING", logger="integrations.attempts"):
        outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK, sleep=recording_sleep)
    assert (outcome.error.error_class, outcome.error.kind, outcome.attempts) == ("unknown", "unclassified", 2)
    assert sum("ZZ-999" in r.getMessage() for r in caplog.records if r.levelname == "WARNING") == 2


def test_admin_mapping_overrides_the_adapter_table(endpoint_for, sandbox, seeded_accounts):
    """An admin's mapping of a raw code wins over the adapter's own table, without a deploy."""
    from integrations.classification import clear_mapping_cache
    from integrations.models import ErrorMapping, Insurer

    ErrorMapping.objects.create(
        insurer=Insurer.objects.get(code="anka"), provider_code="ZZ-999", kind="business_reject"
    )
    clear_mapping_cache()
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "ZZ-999"}])
    outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK)
    clear_mapping_cache()
    assert (outcome.error.kind, outcome.attempts) == ("business_reject", 1)


def test_commit_then_drop_issues_one_policy(endpoint_for, sandbox, recording_sleep):
    """A lost issuance answer is re-sent with the same Idempotency-Key: one policy at Anka."""
    quote_no = quote(endpoint_for).quote_no
    sandbox["anka"].state.add_faults([{"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset"}])
    outcome = run(
        endpoint_for,
        "issue_policy",
        {"quote_no": quote_no, "payment_token": samples.PAYMENT_TOKEN},
        reference=new_reference(),
        sleep=recording_sleep,
    )
    assert outcome.ok and outcome.attempts == 2
    policies = sandbox["anka"].state.counts()["policies_by_quote"][quote_no]
    assert policies == [outcome.result.policy_no]


def test_calls_received_equal_attempts_recorded(endpoint_for, sandbox, recording_sleep):
    """The insurer saw exactly as many calls as the attempt log holds."""
    sandbox["anka"].state.add_faults(
        [
            {"operation": "trafik_quote", "fault": "throttle", "wait_seconds": 1},
            {"operation": "kasko_quote", "fault": "html", "http_status": 502},
            {"operation": "dask_address", "fault": "error", "code": "VALIDATION"},
        ]
    )
    run(endpoint_for, "trafik_quote", samples.TRAFIK, sleep=recording_sleep)
    run(endpoint_for, "kasko_quote", samples.KASKO, sleep=recording_sleep)
    run(endpoint_for, "dask_address", samples.DASK_ADDRESS, sleep=recording_sleep)
    assert sandbox["anka"].state.counts()["total_received"] == Attempt.objects.count() == 5
