"""Anka adapter against the Anka sandbox over real HTTP."""

from __future__ import annotations

import hashlib
import logging
import time
from datetime import date, timedelta
from decimal import Decimal

import pytest

from integrations.answers.coverages import COVERAGE_NAMES_TR
from integrations.answers.results import PolicyStatus
from integrations.answers.taxonomy import plain_message
from integrations.calling.calls import insurer_operation_run, new_reference
from integrations.models import Attempt
from sandbox import domain
from tests import samples

pytestmark = pytest.mark.django_db


def run(endpoint_for, operation, data, **kwargs):
    return insurer_operation_run(endpoint=endpoint_for("anka"), operation=operation, data=data, **kwargs)


def quote(endpoint_for):
    outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK)
    assert outcome.ok, outcome.error
    return outcome.result


def issue(endpoint_for):
    issued = run(
        endpoint_for,
        "issue_policy",
        {"quote_no": quote(endpoint_for).quote_no, "payment_token": samples.PAYMENT_TOKEN},
        reference=new_reference(),
    )
    assert issued.ok, issued.error
    return issued.result


class NoRetryBudget:
    """A retry budget that is always empty: any retry of a failure is refused."""

    def record_first_attempt(self, insurer_code, *, ok, ratio):
        return None

    def try_spend(self, insurer_code):
        return False

    def refund(self, insurer_code):
        return None


def test_trafik_quote_is_normalised(endpoint_for):
    """A trafik quote comes back with a Decimal premium and an aware UTC expiry."""
    outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK)
    assert outcome.ok and outcome.attempts == 1
    assert outcome.result.quote_no.startswith("AK-T-")
    assert isinstance(outcome.result.premium, Decimal) and outcome.result.premium > 0
    assert outcome.result.valid_until.utcoffset().total_seconds() == 0
    assert outcome.provider_code == "200"


def test_kasko_quote_keeps_coverages(endpoint_for):
    """Kasko covers are stored as {code, name, limit}; glass has no limit, the rest the vehicle value."""
    outcome = run(endpoint_for, "kasko_quote", samples.KASKO)
    assert outcome.ok and outcome.result.quote_no.startswith("AK-K-")
    coverages = outcome.result.details["coverages"]
    assert [c["code"] for c in coverages] == ["collision", "theft", "fire", "flood", "glass"]
    vehicle_value = (outcome.result.premium / Decimal("0.028")).quantize(Decimal("0.01"))
    assert coverages[0] == {"code": "collision", "name": "Çarpışma", "limit": str(vehicle_value)}
    assert coverages[-1] == {"code": "glass", "name": "Cam kırılması", "limit": None}


def test_trafik_quote_keeps_legal_limits_and_installments(endpoint_for):
    """Trafik lists the legal limits (platform names); the payment plans are kept as count and total."""
    outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK)
    assert outcome.ok
    assert outcome.result.details["coverages"] == [
        {"code": code, "name": COVERAGE_NAMES_TR[code], "limit": str(limit.quantize(Decimal("0.01")))}
        for code, limit in domain.TRAFIK_LIMITS.items()
    ]
    expected_plans = [{"count": n, "total": domain.money(t)} for n, t in domain.installments(outcome.result.premium)]
    assert outcome.result.details["installments"] == expected_plans
    assert outcome.result.details["installments"][0] == {"count": 1, "total": str(outcome.result.premium)}
    assert outcome.result.to_json()["details"]["installments"] == expected_plans  # JSON-safe as stored


def test_bare_coverage_codes_of_older_answers_are_read(endpoint_for, sandbox):
    """An older Anka release sends bare codes: each becomes a cover with our Turkish name and no limit."""
    sandbox["anka"].state.add_faults([{"operation": "kasko_quote", "fault": "legacy_coverages"}])
    outcome = run(endpoint_for, "kasko_quote", samples.KASKO)
    assert outcome.ok
    assert outcome.result.details["coverages"] == [
        {"code": code, "name": COVERAGE_NAMES_TR[code], "limit": None}
        for code in ("collision", "theft", "fire", "flood", "glass")
    ]


def test_malformed_coverage_entries_are_skipped_not_the_quote(endpoint_for, sandbox, caplog):
    """Entries without a code, with a limit that is no amount, or not an entry at all are dropped
    with a warning each; the quote and its readable covers stand, in one attempt."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "broken_coverages"}])
    with caplog.at_level(logging.WARNING, logger="integrations.insurers.anka.adapter"):
        outcome = run(endpoint_for, "trafik_quote", samples.TRAFIK)
    assert outcome.ok and outcome.attempts == 1 and outcome.result.premium > 0
    assert [c["code"] for c in outcome.result.details["coverages"]] == ["bodily_injury", "medical", "property_damage"]
    skipped = [r for r in caplog.records if r.name == "integrations.insurers.anka.adapter" and r.levelname == "WARNING"]
    assert len(skipped) == 5


# --- quote and issuance terms (CONTRACTS.md, "Policy start", "Installments", "Kasko options") ----


def test_kasko_options_are_sent_and_the_priced_covers_read_back(endpoint_for):
    """The options reach Anka and move the premium; the covers it priced come back in the
    platform's vocabulary: İMM unlimited (no limit), the replacement car with its days, the deductible."""
    plain = run(endpoint_for, "kasko_quote", samples.KASKO)
    options = {"deductible": 5000, "replacement_car_days": 15, "liability_limit": None, "repair_shop": "authorized"}
    chosen = run(endpoint_for, "kasko_quote", {**samples.KASKO, **options})
    assert plain.ok and chosen.ok, chosen.error
    assert chosen.result.premium != plain.result.premium
    assert chosen.result.details["coverages"][:5] == plain.result.details["coverages"]
    assert chosen.result.details["coverages"][5:] == [
        {"code": "liability", "name": "İhtiyari mali mesuliyet (İMM)", "limit": None},
        {"code": "replacement_car", "name": "İkame araç", "limit": None, "days": 15},
        {"code": "deductible", "name": "Muafiyet", "limit": "5000.00"},
    ]
    limited = run(endpoint_for, "kasko_quote", {**samples.KASKO, "liability_limit": Decimal("2500000")})
    assert limited.result.details["coverages"][-1] == {
        "code": "liability",
        "name": "İhtiyari mali mesuliyet (İMM)",
        "limit": "2500000.00",
    }


def test_an_unsold_option_is_a_field_error_naming_it_in_turkish(endpoint_for):
    """Anka sells no 750 000 TRY İMM: a validation refusal on `liability_limit`, read as such."""
    outcome = run(endpoint_for, "kasko_quote", {**samples.KASKO, "liability_limit": 750000})
    assert not outcome.ok and outcome.attempts == 1
    assert (outcome.error.provider_code, outcome.error.field) == ("VALIDATION", "liability_limit")
    assert plain_message(outcome.error) == (
        "Şirket seçilen İMM limiti seçeneğini satmıyor. Başka bir seçenekle teklifi yeniden çalışın."
    )


def test_absent_terms_are_not_sent(endpoint_for, sandbox):
    """No term in the data, none on the wire: not even a null (null İMM would mean unlimited)."""
    run(endpoint_for, "kasko_quote", {**samples.KASKO, "deductible": "", "repair_shop": None})
    quote_no = next(iter(sandbox["anka"].state.ledger.quotes))
    assert sandbox["anka"].state.ledger.quotes[quote_no].terms.options == {}


@pytest.mark.parametrize("held_as", [lambda day: day, date.isoformat], ids=["date", "iso-string"])
def test_policy_start_of_the_quote_is_the_policys_start(endpoint_for, held_as):
    """`starts_on` as a date or an ISO string: the quote remembers it, the period begins on it."""
    starts_on = domain.today_in_turkiye(time.time()) + timedelta(days=9)
    quoted = run(endpoint_for, "trafik_quote", {**samples.TRAFIK, "starts_on": held_as(starts_on)})
    assert quoted.ok, quoted.error
    data = {"quote_no": quoted.result.quote_no, "payment_token": samples.PAYMENT_TOKEN}
    issued = run(endpoint_for, "issue_policy", data, reference=new_reference())
    assert (issued.result.starts_on, issued.result.ends_on) == (starts_on, domain.one_year_after(starts_on))


def test_installments_chosen_at_issuance_reach_the_policy(endpoint_for, sandbox):
    quote_no = quote(endpoint_for).quote_no
    data = {"quote_no": quote_no, "payment_token": samples.PAYMENT_TOKEN, "installments": 6}
    issued = run(endpoint_for, "issue_policy", data, reference=new_reference())
    assert issued.ok, issued.error
    assert sandbox["anka"].state.ledger.policies[issued.result.policy_no].installments == 6


def test_a_count_not_offered_or_a_late_start_is_refused_naming_the_field(endpoint_for, sandbox):
    quote_no = quote(endpoint_for).quote_no
    data = {"quote_no": quote_no, "payment_token": samples.PAYMENT_TOKEN, "installments": 12}
    refused = run(endpoint_for, "issue_policy", data, reference=new_reference())
    assert (refused.error.provider_code, refused.error.field) == ("VALIDATION", "installments")
    assert "taksit sayısı" in plain_message(refused.error)
    late = domain.today_in_turkiye(time.time()) + timedelta(days=31)
    quoted = run(endpoint_for, "trafik_quote", {**samples.TRAFIK, "starts_on": late})
    assert quoted.error.field == "starts_on" and "poliçe başlangıç tarihi" in plain_message(quoted.error)
    assert sandbox["anka"].state.counts()["issued_total"] == 0


def test_dask_address_then_quote(endpoint_for):
    """DASK: the address check gives the building id the quote needs; the earthquake cover is the sum insured."""
    address = run(endpoint_for, "dask_address", samples.DASK_ADDRESS)
    assert address.ok and address.result.uavt_code == samples.DASK_ADDRESS["uavt_code"]
    data = {**samples.DASK_RISK, "uavt_code": address.result.uavt_code, "building_id": address.result.building_id}
    dask = run(endpoint_for, "dask_quote", data)
    assert dask.ok and dask.result.details.get("sum_insured")
    assert dask.result.details["coverages"] == [
        {"code": "earthquake", "name": COVERAGE_NAMES_TR["earthquake"], "limit": dask.result.details["sum_insured"]}
    ]


def test_issue_then_status(endpoint_for, sandbox):
    """Issuing a quote gives an ACTIVE policy whose status and period can be read back."""
    quote_no = quote(endpoint_for).quote_no
    issued = run(
        endpoint_for,
        "issue_policy",
        {"quote_no": quote_no, "payment_token": samples.PAYMENT_TOKEN},
        reference=new_reference(),
    )
    assert issued.ok and issued.result.status is PolicyStatus.ACTIVE
    at_anka = sandbox["anka"].state.ledger.policies[issued.result.policy_no]
    assert (issued.result.starts_on, issued.result.ends_on) == (at_anka.starts_on, at_anka.ends_on)
    assert issued.result.ends_on == domain.one_year_after(issued.result.starts_on)
    status = run(endpoint_for, "policy_status", {"policy_no": issued.result.policy_no})
    assert status.ok and status.result.policy_no == issued.result.policy_no
    assert (status.result.starts_on, status.result.ends_on) == (at_anka.starts_on, at_anka.ends_on)
    assert status.result.to_json()["starts_on"] == at_anka.starts_on.isoformat()


def test_status_of_a_seeded_policy_carries_its_period(endpoint_for, sandbox):
    """A policy from before the platform (seeded at Anka) reads with the period Anka holds."""
    from datetime import date

    sandbox["anka"].state.ledger.seed_policy(
        "AK-P-SEED-000007", "EXPIRED", starts_on=date(2024, 2, 29), ends_on=date(2025, 2, 28)
    )
    status = run(endpoint_for, "policy_status", {"policy_no": "AK-P-SEED-000007"})
    assert status.ok and status.result.status is PolicyStatus.EXPIRED
    assert (status.result.starts_on, status.result.ends_on) == (date(2024, 2, 29), date(2025, 2, 28))


# --- policy documents ---------------------------------------------------------------------------------


def test_policy_document_is_the_policys_pdf(endpoint_for, sandbox):
    """The document is Anka's PDF for that policy, byte for byte, fetched in one attempt."""
    policy = issue(endpoint_for)
    outcome = run(endpoint_for, "policy_document", {"policy_no": policy.policy_no})
    assert outcome.ok and outcome.attempts == 1, outcome.error
    document = outcome.result
    assert document.policy_no == policy.policy_no and document.content_type == "application/pdf"
    assert document.content.startswith(b"%PDF-")
    expected = domain.policy_pdf("Anka Sigorta", policy.policy_no, policy.starts_on, policy.ends_on)
    assert document.sha256 == hashlib.sha256(expected).hexdigest()
    assert outcome.to_json()["result"] == {
        "policy_no": policy.policy_no,
        "content_type": "application/pdf",
        "bytes": len(expected),
        "sha256": hashlib.sha256(expected).hexdigest(),
    }
    row = Attempt.objects.get(operation="policy_document")
    assert (row.ok, row.http_status, row.call) == (True, 200, "main")


def test_document_not_ready_waits_retry_after_and_is_no_failure(endpoint_for, sandbox, recording_sleep):
    """409 DOCUMENT_NOT_READY: the engine waits Anka's Retry-After and fetches again. The wait is
    the insurer's request, not a failure: even with no retry budget left the fetch goes on."""
    sandbox["anka"].state.configure(document_delay_seconds=1)
    policy = issue(endpoint_for)
    outcome = run(
        endpoint_for, "policy_document", {"policy_no": policy.policy_no}, sleep=recording_sleep, budget=NoRetryBudget()
    )
    assert outcome.ok and outcome.attempts == 2, outcome.error
    assert outcome.result.content.startswith(b"%PDF-")
    assert recording_sleep.waits and recording_sleep.waits[0] >= 1.0
    waiting = Attempt.objects.get(operation="policy_document", attempt_no=1)
    assert (waiting.provider_code, waiting.error_kind, waiting.error_class, waiting.http_status) == (
        "DOCUMENT_NOT_READY",
        "not_ready",
        "retryable",
        409,
    )
    assert not waiting.ambiguous
    assert waiting.wait_reason == "signal:Retry-After" and waiting.wait_seconds >= 1.0
    assert sandbox["anka"].state.counts()["received"]["policy_document"] == 2


def test_a_document_failure_is_a_failure_for_the_budget(endpoint_for, sandbox, recording_sleep):
    """The counterpart: a 502 on the same fetch is a failure, and an empty budget refuses its retry."""
    policy = issue(endpoint_for)
    sandbox["anka"].state.add_faults([{"operation": "policy_document", "fault": "html", "http_status": 502}])
    outcome = run(
        endpoint_for, "policy_document", {"policy_no": policy.policy_no}, sleep=recording_sleep, budget=NoRetryBudget()
    )
    assert (outcome.ok, outcome.attempts, outcome.retry_refused) == (False, 1, "budget")
    assert outcome.error.kind == "unavailable"


def test_document_of_an_unknown_policy_is_permanent_not_found(endpoint_for, sandbox):
    outcome = run(endpoint_for, "policy_document", {"policy_no": "AK-P-NOPE-000001"})
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (
        "permanent",
        "not_found",
        "NOT_FOUND",
    )
    assert outcome.attempts == 1 and sandbox["anka"].state.counts()["received"]["policy_document"] == 1


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ({"fault": "garbage"}, "application/json"),
        ({"fault": "wrong_content_type"}, "text/html"),
        ({"fault": "empty", "http_status": 200}, "application/json"),
    ],
)
def test_a_200_that_is_no_pdf_is_unknown(endpoint_for, sandbox, recording_sleep, fault, message):
    """A 200 whose body or content type is not a PDF is an unreadable answer: unknown, tried twice."""
    policy = issue(endpoint_for)
    sandbox["anka"].state.add_faults([{"operation": "policy_document", "times": 5, **fault}])
    outcome = run(endpoint_for, "policy_document", {"policy_no": policy.policy_no}, sleep=recording_sleep)
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (
        "unknown",
        "unclassified",
        "MALFORMED_BODY",
    )
    assert outcome.attempts == 2 and message in outcome.error.message


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
    from integrations.answers.classification import clear_mapping_cache
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
