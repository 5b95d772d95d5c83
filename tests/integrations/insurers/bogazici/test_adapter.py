"""Boğaziçi Sigorta adapter against its sandbox over real loopback HTTP (SOAP 1.1, no dedup)."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, timedelta
from decimal import Decimal
from typing import Any

import defusedxml.ElementTree as safe_xml
import pytest

from integrations.answers.results import Address, Document, Policy, PolicyStatus, Quote
from integrations.answers.taxonomy import ErrorClass, ErrorKind, plain_message
from integrations.calling.calls import insurer_operation_run
from integrations.calling.engine import IssuanceHistory, Outcome
from integrations.insurers.bogazici.adapter import BS_NS, SOAP_NS, soap_envelope
from integrations.models import Attempt, Insurer, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from sandbox.domain import one_year_after, policy_pdf, today_in_turkiye
from sandbox.insurers.bogazici import Bogazici
from tests import samples

pytestmark = pytest.mark.django_db

CODE = "bogazici"


@pytest.fixture
def bogazici(sandbox: dict) -> Any:
    return sandbox[CODE]


@pytest.fixture
def run(endpoint_for: Callable, recording_sleep: Any) -> Callable[..., Outcome]:
    def call(operation: str, data: dict[str, Any], **kwargs: Any) -> Outcome:
        kwargs.setdefault("sleep", recording_sleep)
        return insurer_operation_run(endpoint=endpoint_for(CODE), operation=operation, data=data, **kwargs)

    return call


@pytest.fixture
def fast_issuance(db: None) -> Iterator[None]:
    """A short attempt timeout and settling time for issue_policy, so the tests run in seconds."""
    insurer, _ = Insurer.objects.get_or_create(code=CODE, defaults={"name": "Boğaziçi Sigorta", "base_url": "http://x"})
    OperationPolicy.objects.update_or_create(
        insurer=insurer,
        operation="issue_policy",
        defaults={
            "max_attempts": 5,
            "base_delay": 0.1,
            "max_delay": 0.5,
            "deadline": 20.0,
            "attempt_timeout": 1.0,
            # The contract says 30 s; a second keeps the tests quick and still shows the wait.
            "settling_seconds": 1.0,
        },
    )
    clear_policy_cache()
    yield
    clear_policy_cache()


@pytest.fixture
def one_try_documents(db: None) -> Iterator[None]:
    """policy_document with a single try for failures: only a wait the insurer asked for may repeat it."""
    insurer, _ = Insurer.objects.get_or_create(code=CODE, defaults={"name": "Boğaziçi Sigorta", "base_url": "http://x"})
    OperationPolicy.objects.update_or_create(
        insurer=insurer,
        operation="policy_document",
        defaults={"max_attempts": 1, "base_delay": 0.1, "max_delay": 0.5, "deadline": 20.0, "attempt_timeout": 5.0},
    )
    clear_policy_cache()
    yield
    clear_policy_cache()


def _quote_no(run: Callable[..., Outcome]) -> str:
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok, outcome.to_json()
    return outcome.result_as(Quote).quote_no


def _issue(run: Callable[..., Outcome], quote_no: str, **kwargs: Any) -> Outcome:
    return run(
        "issue_policy", {"quote_no": quote_no, "payment_token": samples.PAYMENT_TOKEN}, reference="IH-TEST-1", **kwargs
    )


# --- happy paths ------------------------------------------------------------------------------------


def test_trafik_quote_is_normalised(run: Callable[..., Outcome]) -> None:
    """A TrafikTeklif answer becomes a Quote: Decimal premium, aware UTC validity."""
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok, outcome.to_json()
    quote = outcome.result_as(Quote)
    assert quote.quote_no.startswith("BG-T-")
    assert isinstance(quote.premium, Decimal) and quote.premium > 0
    assert quote.currency == "TRY"
    offset = quote.valid_until.utcoffset()
    assert offset is not None and offset.total_seconds() == 0
    assert outcome.attempts == 1


def test_kasko_quote_keeps_coverages(run: Callable[..., Outcome]) -> None:
    """KaskoTeklif's Teminat entries (Kod/Ad/Limit) become platform coverages; an empty Limit is None."""
    outcome = run("kasko_quote", samples.KASKO)
    assert outcome.ok, outcome.to_json()
    assert outcome.result_as(Quote).quote_no.startswith("BG-K-")
    assert isinstance(outcome.result_as(Quote).premium, Decimal)
    coverages = outcome.result_as(Quote).details["coverages"]
    assert [entry["code"] for entry in coverages] == ["collision", "theft", "fire", "flood", "glass"]
    assert coverages[0]["name"] == "Çarpışma"
    assert Decimal(coverages[0]["limit"]) > outcome.result_as(Quote).premium
    assert coverages[-1]["limit"] is None


# --- quote and issuance terms (CONTRACTS.md, "Policy start", "Installments", "Kasko options") ----


def test_kasko_options_are_sent_as_elements_and_the_priced_covers_read_back(run: Callable[..., Outcome]) -> None:
    """Unlimited İMM goes as <ImmLimit>0</ImmLimit>, the shop as ANLASMALI; IMM, IKAME_ARAC (its
    <Gun>) and MUAFIYET come back as the platform's liability, replacement_car and deductible."""
    plain = run("kasko_quote", samples.KASKO)
    options = {"deductible": 2500, "replacement_car_days": 7, "liability_limit": None, "repair_shop": "contracted"}
    chosen = run("kasko_quote", {**samples.KASKO, **options})
    assert chosen.ok, chosen.to_json()
    assert chosen.result_as(Quote).premium != plain.result_as(Quote).premium
    assert chosen.result_as(Quote).details["coverages"][5:] == [
        {"code": "liability", "name": "İhtiyari mali mesuliyet (İMM)", "limit": None},
        {"code": "replacement_car", "name": "İkame araç", "limit": None, "days": 7},
        {"code": "deductible", "name": "Muafiyet", "limit": "2500.00"},
    ]
    limited = run("kasko_quote", {**samples.KASKO, "liability_limit": 500000})
    assert limited.result_as(Quote).details["coverages"][-1]["limit"] == "500000.00"


def test_an_unsold_deductible_is_a_field_error_naming_it(run: Callable[..., Outcome]) -> None:
    """Boğaziçi sells no 10 000 TRY deductible: BS-100 "Muafiyet alanı geçersiz" is `deductible`."""
    outcome = run("kasko_quote", {**samples.KASKO, "deductible": 10000})
    assert outcome.error is not None
    assert (outcome.error.provider_code, outcome.error.field, outcome.attempts) == ("BS-100", "deductible", 1)
    assert plain_message(outcome.error) == (
        "Şirket seçilen muafiyet seçeneğini satmıyor. Başka bir seçenekle teklifi yeniden çalışın."
    )


def test_a_zero_liability_limit_is_never_sent_as_unlimited(run: Callable[..., Outcome], bogazici: Any) -> None:
    """0 means unlimited at Boğaziçi: a zero limit of ours is refused here, nothing sent."""
    outcome = run("kasko_quote", {**samples.KASKO, "liability_limit": 0})
    assert outcome.error is not None
    assert (outcome.error.kind, outcome.error.field, outcome.attempts) == (ErrorKind.VALIDATION, "liability_limit", 1)
    assert bogazici.state.counts()["received"] == {} and not Attempt.objects.exists()


def test_start_and_installments_reach_the_policy(run: Callable[..., Outcome], bogazici: Any) -> None:
    """<BaslangicTarihi> on the quote, <TaksitSayisi> on Policelestir: the period and the count."""
    starts_on = today_in_turkiye(time.time()) + timedelta(days=5)
    quoted = run("trafik_quote", {**samples.TRAFIK, "starts_on": starts_on})
    issued = run(
        "issue_policy",
        {"quote_no": quoted.result_as(Quote).quote_no, "payment_token": samples.PAYMENT_TOKEN, "installments": "3"},
        reference="IH-TERMS-1",
    )
    assert issued.ok, issued.to_json()
    assert (issued.result_as(Policy).starts_on, issued.result_as(Policy).ends_on) == (
        starts_on,
        one_year_after(starts_on),
    )
    assert bogazici.state.ledger.policies[issued.result_as(Policy).policy_no].installments == 3


def test_a_count_not_offered_is_refused_and_no_policy_made(run: Callable[..., Outcome], bogazici: Any) -> None:
    data = {"quote_no": _quote_no(run), "payment_token": samples.PAYMENT_TOKEN, "installments": 5}
    refused = run("issue_policy", data, reference="IH-TERMS-2")
    assert refused.error is not None
    assert (refused.error.provider_code, refused.error.field) == ("BS-100", "installments")
    assert bogazici.state.counts()["issued_total"] == 0


def test_dask_address_then_quote(run: Callable[..., Outcome]) -> None:
    """DaskAdresSorgu gives the building id that DaskTeklif needs; SigortaBedeli is kept as a decimal string."""
    address = run("dask_address", samples.DASK_ADDRESS)
    assert address.ok, address.to_json()
    assert address.result_as(Address).uavt_code == samples.DASK_ADDRESS["uavt_code"]
    assert address.result_as(Address).address and len(address.result_as(Address).building_id) == 8
    quote = run(
        "dask_quote",
        {**samples.DASK_RISK, **samples.DASK_ADDRESS, "building_id": address.result_as(Address).building_id},
    )
    assert quote.ok, quote.to_json()
    assert quote.result_as(Quote).quote_no.startswith("BG-D-")
    assert isinstance(quote.result_as(Quote).premium, Decimal)
    assert Decimal(quote.result_as(Quote).details["sum_insured"]) > quote.result_as(Quote).premium
    assert quote.result_as(Quote).valid_until.tzinfo == UTC


def test_issue_policy_and_status(run: Callable[..., Outcome], bogazici: Any) -> None:
    """Policelestir issues once; PoliceSorgu's YURURLUKTE reads as ACTIVE."""
    quote_no = _quote_no(run)
    issued = _issue(run, quote_no)
    assert issued.ok, issued.to_json()
    assert issued.result_as(Policy).status is PolicyStatus.ACTIVE
    assert bogazici.state.counts()["policies_by_quote"] == {quote_no: [issued.result_as(Policy).policy_no]}
    status = run("policy_status", {"policy_no": issued.result_as(Policy).policy_no})
    assert status.ok and status.result_as(Policy).policy_no == issued.result_as(Policy).policy_no
    assert status.result_as(Policy).status is PolicyStatus.ACTIVE


def test_issue_status_and_lookup_carry_the_policy_period(run: Callable[..., Outcome], bogazici: Any) -> None:
    """BaslangicTarihi/BitisTarihi become starts_on/ends_on on issuance, status and the lookup alike."""
    quote_no = _quote_no(run)
    issued = _issue(run, quote_no)
    assert issued.ok, issued.to_json()
    policy = bogazici.state.ledger.policies[issued.result_as(Policy).policy_no]
    period = (policy.starts_on, policy.ends_on)
    assert all(isinstance(day, date) for day in period)
    assert (issued.result_as(Policy).starts_on, issued.result_as(Policy).ends_on) == period
    status = run("policy_status", {"policy_no": issued.result_as(Policy).policy_no})
    assert (status.result_as(Policy).starts_on, status.result_as(Policy).ends_on) == period
    found = _issue(run, quote_no, history=IssuanceHistory(maybe_sent=True))
    assert found.result == issued.result
    assert bogazici.state.counts()["received"]["issue_lookup"] == 1
    assert issued.to_json()["result"]["starts_on"] == policy.starts_on.isoformat()


def test_seeded_policy_period_is_read(run: Callable[..., Outcome], bogazici: Any) -> None:
    bogazici.state.seed_policies(
        [{"policy_no": "BG-P-SEED-9", "status": "ACTIVE", "starts_on": "2026-02-28", "ends_on": "2027-02-28"}]
    )
    outcome = run("policy_status", {"policy_no": "BG-P-SEED-9"})
    assert (outcome.result_as(Policy).starts_on, outcome.result_as(Policy).ends_on) == (
        date(2026, 2, 28),
        date(2027, 2, 28),
    )


# --- the policy document (PoliceBasim) ------------------------------------------------------------------


def test_policy_document_is_the_policy_pdf(run: Callable[..., Outcome], bogazici: Any) -> None:
    """PoliceBasim's PdfIcerik decodes to exactly the PDF Boğaziçi printed for this policy."""
    policy_no = _issue(run, _quote_no(run)).result_as(Policy).policy_no
    outcome = run("policy_document", {"policy_no": policy_no})
    assert outcome.ok and outcome.attempts == 1, outcome.to_json()
    document = outcome.result
    assert isinstance(document, Document) and document.policy_no == policy_no
    policy = bogazici.state.ledger.policies[policy_no]
    expected = policy_pdf(Bogazici.document_name, policy_no, policy.starts_on, policy.ends_on)
    assert document.sha256 == hashlib.sha256(expected).hexdigest()
    assert outcome.to_json()["result"] == {
        "policy_no": policy_no,
        "content_type": "application/pdf",
        "bytes": len(expected),
        "sha256": hashlib.sha256(expected).hexdigest(),
    }
    assert Attempt.objects.get(operation="policy_document").ok


def test_document_not_ready_waits_tekrardenemesn_and_is_no_failure(
    run: Callable[..., Outcome], bogazici: Any, recording_sleep: Any, one_try_documents: None
) -> None:
    """BS-405 is NOT_READY: the engine waits TekrarDenemeSn and asks again, even with a single try for
    failures, and the BS-405 attempt is logged as a wait, not a failure."""
    bogazici.state.configure(document_delay_seconds=0.8)
    policy_no = _issue(run, _quote_no(run)).result_as(Policy).policy_no
    outcome = run("policy_document", {"policy_no": policy_no})
    assert outcome.ok and outcome.attempts == 2, outcome.to_json()
    assert recording_sleep.waits[-1] >= 1.0
    rows = list(Attempt.objects.filter(operation="policy_document").order_by("started_at", "id"))
    assert [(row.ok, row.provider_code, row.error_kind) for row in rows] == [
        (False, "BS-405", "not_ready"),
        (True, "", ""),
    ]
    assert rows[0].error_class == "retryable" and not rows[0].ambiguous
    wait_seconds = rows[0].wait_seconds
    assert rows[0].wait_reason == "signal:TekrarDenemeSn" and wait_seconds is not None and wait_seconds >= 1.0
    assert bogazici.state.counts()["received"]["policy_document"] == 2


def test_document_not_ready_without_tekrardenemesn_backs_off(
    run: Callable[..., Outcome], bogazici: Any, one_try_documents: None
) -> None:
    """A BS-405 that names no wait: our own backoff, still a wait and not a used-up try."""
    policy_no = _issue(run, _quote_no(run)).result_as(Policy).policy_no
    bogazici.state.add_faults(
        [{"operation": "policy_document", "fault": "error", "code": "BS-405", "wait_seconds": None}]
    )
    outcome = run("policy_document", {"policy_no": policy_no})
    assert outcome.ok and outcome.attempts == 2, outcome.to_json()
    first = Attempt.objects.filter(operation="policy_document").order_by("started_at", "id").first()
    assert first is not None
    assert (first.error_kind, first.wait_reason) == ("not_ready", "backoff:full-jitter")


def test_document_of_an_unknown_policy_is_permanent_not_found(run: Callable[..., Outcome], bogazici: Any) -> None:
    outcome = run("policy_document", {"policy_no": "BG-P-999999"})
    assert outcome.error is not None
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (
        ErrorClass.PERMANENT,
        ErrorKind.NOT_FOUND,
        "BS-404",
    )
    assert outcome.attempts == 1


@pytest.mark.parametrize("fault", ["document_not_base64", "document_not_pdf"])
def test_unreadable_document_is_unknown(run: Callable[..., Outcome], bogazici: Any, fault: str) -> None:
    """Basarili=true with a PdfIcerik that is not base64, or not a PDF: an unreadable answer (unknown),
    retried under the unknown cap, never a document."""
    policy_no = _issue(run, _quote_no(run)).result_as(Policy).policy_no
    bogazici.state.add_faults([{"operation": "policy_document", "fault": fault, "times": 50}])
    outcome = run("policy_document", {"policy_no": policy_no})
    assert outcome.result is None
    assert outcome.error is not None
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (
        ErrorClass.UNKNOWN,
        ErrorKind.UNCLASSIFIED,
        "MALFORMED_RESPONSE",
    )
    assert outcome.attempts == 2
    assert bogazici.state.counts()["received"]["policy_document"] == 2


def test_document_throttle_waits_tekrardenemesn(
    run: Callable[..., Outcome], bogazici: Any, recording_sleep: Any
) -> None:
    """BS-901 on PoliceBasim is the quota like anywhere else: wait the insurer's seconds, then the PDF."""
    policy_no = _issue(run, _quote_no(run)).result_as(Policy).policy_no
    bogazici.state.add_faults([{"operation": "policy_document", "fault": "error", "code": "BS-901", "wait_seconds": 1}])
    outcome = run("policy_document", {"policy_no": policy_no})
    assert outcome.ok and outcome.attempts == 2, outcome.to_json()
    assert recording_sleep.waits[-1] >= 1.0


def test_trafik_quote_lists_the_legal_limits(run: Callable[..., Outcome]) -> None:
    """Trafik answers carry the legal limits, under the platform's codes and Turkish names."""
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok, outcome.to_json()
    assert outcome.result_as(Quote).details["coverages"] == [
        {"code": "bodily_injury", "name": "Kişi başı sakatlanma ve ölüm", "limit": "2700000.00"},
        {"code": "medical", "name": "Kişi başı tedavi masrafları", "limit": "2700000.00"},
        {"code": "property_damage", "name": "Araç başı maddi hasar", "limit": "300000.00"},
    ]


def test_dask_quote_lists_the_earthquake_cover(run: Callable[..., Outcome], bogazici: Any) -> None:
    """DASK's one cover (DEPREM) is limited to the sum insured."""
    building_id = run("dask_address", samples.DASK_ADDRESS).result_as(Address).building_id
    outcome = run("dask_quote", {**samples.DASK_RISK, **samples.DASK_ADDRESS, "building_id": building_id})
    assert outcome.ok, outcome.to_json()
    details = outcome.result_as(Quote).details
    assert details["coverages"] == [
        {"code": "earthquake", "name": "Deprem ve deprem kaynaklı yangın", "limit": details["sum_insured"]}
    ]


@pytest.mark.parametrize("operation", ["trafik_quote", "kasko_quote"])
def test_quote_keeps_installments(run: Callable[..., Outcome], operation: str) -> None:
    """Taksitler/Taksit (Sayi, Toplam) become installments; one part costs exactly the premium."""
    outcome = run(operation, samples.TRAFIK if operation == "trafik_quote" else samples.KASKO)
    assert outcome.ok, outcome.to_json()
    installments = outcome.result_as(Quote).details["installments"]
    assert [plan["count"] for plan in installments] == [1, 3, 6, 9]
    assert installments[0]["total"] == str(outcome.result_as(Quote).premium)
    assert Decimal(installments[-1]["total"]) > outcome.result_as(Quote).premium


def test_older_bare_coverage_codes_are_read(run: Callable[..., Outcome], bogazici: Any) -> None:
    """An older answer's <Teminat>CARPISMA</Teminat> is still a coverage: our code and name, no limit."""
    bogazici.state.add_faults([{"operation": "kasko_quote", "fault": "coverages_bare"}])
    outcome = run("kasko_quote", samples.KASKO)
    assert outcome.ok, outcome.to_json()
    assert outcome.result_as(Quote).details["coverages"] == [
        {"code": "collision", "name": "Çarpışma", "limit": None},
        {"code": "theft", "name": "Hırsızlık", "limit": None},
        {"code": "fire", "name": "Yangın", "limit": None},
        {"code": "flood", "name": "Sel ve su baskını", "limit": None},
        {"code": "glass", "name": "Cam kırılması", "limit": None},
    ]
    assert bogazici.state.counts()["faults"] == {"kasko_quote": 1}


def test_malformed_coverage_is_skipped_and_the_quote_kept(
    run: Callable[..., Outcome], bogazici: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A Teminat without a Kod, or with a Limit that is no amount, is left out (logged); the price stands."""
    bogazici.state.add_faults([{"operation": "trafik_quote", "fault": "coverage_malformed"}])
    with caplog.at_level(logging.WARNING, logger="integrations.insurers.bogazici.adapter"):
        outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok and outcome.attempts == 1, outcome.to_json()
    assert [entry["code"] for entry in outcome.result_as(Quote).details["coverages"]] == [
        "bodily_injury",
        "medical",
        "property_damage",
    ]
    skipped = [record for record in caplog.records if "Teminat" in record.getMessage()]
    assert [record.levelno for record in skipped] == [logging.WARNING, logging.WARNING]


@pytest.mark.parametrize(
    ("sandbox_status", "expected"), [("CANCELLED", PolicyStatus.CANCELLED), ("EXPIRED", PolicyStatus.EXPIRED)]
)
def test_policy_status_vocabulary_is_mapped(
    run: Callable[..., Outcome], bogazici: Any, sandbox_status: str, expected: PolicyStatus
) -> None:
    """IPTAL reads as CANCELLED and SURESI_DOLDU as EXPIRED."""
    policy_no = _issue(run, _quote_no(run)).result_as(Policy).policy_no
    bogazici.state.set_policy_status(policy_no, sandbox_status)
    outcome = run("policy_status", {"policy_no": policy_no})
    assert outcome.ok, outcome.to_json()
    assert outcome.result_as(Policy).status is expected


# --- the error table ----------------------------------------------------------------------------------

TABLE = [
    ("BS-100", ErrorClass.PERMANENT, ErrorKind.VALIDATION, 1),
    ("BS-110", ErrorClass.PERMANENT, ErrorKind.VALIDATION, 1),
    ("BS-200", ErrorClass.PERMANENT, ErrorKind.AUTH, 1),
    ("BS-300", ErrorClass.PERMANENT, ErrorKind.BUSINESS_REJECT, 1),
    ("BS-310", ErrorClass.PERMANENT, ErrorKind.BUSINESS_REJECT, 1),
    ("BS-320", ErrorClass.PERMANENT, ErrorKind.EXPIRED, 1),
    ("BS-404", ErrorClass.PERMANENT, ErrorKind.NOT_FOUND, 1),
    # trafik_quote's default policy: 3 tries for failures.
    ("BS-900", ErrorClass.RETRYABLE, ErrorKind.UNAVAILABLE, 3),
    ("BS-902", ErrorClass.RETRYABLE, ErrorKind.TIMEOUT, 3),
    # A throttle does not use up a try; the engine gives up after 2 * max_attempts throttles.
    ("BS-901", ErrorClass.RETRYABLE, ErrorKind.THROTTLED, 6),
    ("ZZ-999", ErrorClass.UNKNOWN, ErrorKind.UNCLASSIFIED, 2),
]


@pytest.mark.parametrize(("code", "error_class", "kind", "attempts"), TABLE)
def test_error_code_is_classified(
    run: Callable[..., Outcome], bogazici: Any, code: str, error_class: ErrorClass, kind: ErrorKind, attempts: int
) -> None:
    """Each HataKodu of the contract (and an unknown one) maps to its class, kind and number of tries."""
    rule: dict[str, Any] = {"operation": "trafik_quote", "fault": "error", "code": code, "times": 50}
    if code == "BS-901":
        rule["wait_seconds"] = None  # no TekrarDenemeSn: our own short backoff, to keep the test fast
    bogazici.state.add_faults([rule])
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.error is not None
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (error_class, kind, code)
    assert outcome.attempts == attempts
    assert bogazici.state.counts()["received"]["trafik_quote"] == attempts


@pytest.mark.parametrize(
    ("code", "message"),
    [("BS-300", "Araç teminata uygun değil"), ("BS-310", "Risk kabul edilmedi"), ("BS-320", "Teklifin süresi dolmuş")],
)
def test_business_refusals_carry_turkish_agent_message(
    run: Callable[..., Outcome], bogazici: Any, code: str, message: str
) -> None:
    """Business refusals show the agent a Turkish sentence, not the raw code."""
    bogazici.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": code}])
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.error is not None
    assert outcome.error.agent_message() == message


def test_bs100_names_the_platform_field(run: Callable[..., Outcome]) -> None:
    """A real BS-100 ("Plaka alanı geçersiz") points at the platform field `plate`."""
    outcome = run("trafik_quote", {**samples.TRAFIK, "plate": "XX"})
    assert outcome.error is not None
    assert outcome.error.provider_code == "BS-100"
    assert outcome.error.kind is ErrorKind.VALIDATION
    assert outcome.error.field == "plate"
    assert outcome.attempts == 1


def test_missing_field_is_sent_empty_and_refused_by_the_insurer(run: Callable[..., Outcome]) -> None:
    """A missing input is not a crash here: Boğaziçi refuses it and names it."""
    outcome = run("kasko_quote", {key: value for key, value in samples.KASKO.items() if key != "model_code"})
    assert outcome.error is not None
    assert (outcome.error.provider_code, outcome.error.field) == ("BS-100", "model_code")


def test_bs110_invalid_identity_points_at_owner_id(run: Callable[..., Outcome]) -> None:
    """A TCKN that fails its checksum is Boğaziçi's BS-110, a validation error on `owner_id`."""
    outcome = run("trafik_quote", {**samples.TRAFIK, "owner_id": "12345678901"})
    assert outcome.error is not None
    assert (outcome.error.provider_code, outcome.error.kind, outcome.error.field) == (
        "BS-110",
        ErrorKind.VALIDATION,
        "owner_id",
    )


def test_values_are_xml_escaped(run: Callable[..., Outcome], bogazici: Any) -> None:
    """Markup in a value reaches Boğaziçi as text (refused as a bad plate), never as XML."""
    outcome = run("trafik_quote", {**samples.TRAFIK, "plate": "34<b:Plaka>&amp;</x>"})
    assert outcome.error is not None
    assert (outcome.error.provider_code, outcome.error.field) == ("BS-100", "plate")
    assert bogazici.state.counts()["faults"] == {}


def test_envelope_matches_the_contract() -> None:
    """Credentials travel in the b:Kimlik header and the Islem element is namespaced urn:bogazici."""
    root = safe_xml.fromstring(
        soap_envelope("TrafikTeklif", [("Plaka", "34<&>"), ("ModelYili", 2021)], username="a&b", password="p<q"),
        forbid_dtd=True,
    )
    assert root.findtext(f"{{{SOAP_NS}}}Header/{{{BS_NS}}}Kimlik/{{{BS_NS}}}Kullanici") == "a&b"
    assert root.findtext(f"{{{SOAP_NS}}}Header/{{{BS_NS}}}Kimlik/{{{BS_NS}}}Sifre") == "p<q"
    islem = root.find(f"{{{SOAP_NS}}}Body/{{{BS_NS}}}TrafikTeklif")
    assert islem is not None
    assert [(child.tag, child.text) for child in islem] == [
        (f"{{{BS_NS}}}Plaka", "34<&>"),
        (f"{{{BS_NS}}}ModelYili", "2021"),
    ]


def test_wrong_password_is_bs200_auth(endpoint_for: Callable, recording_sleep: Any) -> None:
    """Wrong credentials in the SOAP header are BS-200: permanent, one try."""
    endpoint = endpoint_for(CODE)
    endpoint = type(endpoint)(
        insurer_code=CODE, base_url=endpoint.base_url, credentials={"username": "acente1", "password": "wrong"}
    )
    outcome = insurer_operation_run(
        endpoint=endpoint, operation="trafik_quote", data=samples.TRAFIK, sleep=recording_sleep
    )
    assert outcome.error is not None
    assert (outcome.error.kind, outcome.error.provider_code, outcome.attempts) == (ErrorKind.AUTH, "BS-200", 1)


# --- SOAP faults, gateway pages and unreadable answers -----------------------------------------------


@pytest.mark.parametrize(
    ("faultcode", "kind", "provider_code", "attempts"),
    [
        ("soap:Server", ErrorKind.UNAVAILABLE, "soap:Server", 3),
        ("soap:Client", ErrorKind.VALIDATION, "soap:Client", 1),
    ],
)
def test_soap_fault_side_decides(
    run: Callable[..., Outcome], bogazici: Any, faultcode: str, kind: ErrorKind, provider_code: str, attempts: int
) -> None:
    """An HTTP 500 SOAP Fault: soap:Server is retried as unavailable, soap:Client is a permanent validation error."""
    bogazici.state.add_faults([{"operation": "trafik_quote", "fault": "soap_fault", "code": faultcode, "times": 50}])
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.error is not None
    assert (outcome.error.kind, outcome.error.provider_code, outcome.error.http_status) == (kind, provider_code, 500)
    assert outcome.attempts == attempts


@pytest.mark.parametrize("status", [502, 503])
def test_gateway_html_page_is_unavailable(run: Callable[..., Outcome], bogazici: Any, status: int) -> None:
    """The gateway's HTML page under load carries no code: the bare status, unavailable, retried."""
    bogazici.state.add_faults([{"operation": "trafik_quote", "fault": "html", "http_status": status, "times": 1}])
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok and outcome.attempts == 2
    first = Attempt.objects.order_by("started_at", "id").first()
    assert first is not None
    assert (first.provider_code, first.error_kind, first.http_status) == (str(status), "unavailable", status)


def test_xml_bomb_is_refused_unexpanded(run: Callable[..., Outcome], bogazici: Any) -> None:
    """A billion-laughs answer is refused as XML_REFUSED (unclassified) at once, never expanded."""
    bogazici.state.add_faults([{"operation": "trafik_quote", "fault": "xml_bomb", "times": 50}])
    started = time.monotonic()
    outcome = run("trafik_quote", samples.TRAFIK)
    assert time.monotonic() - started < 3
    assert outcome.error is not None
    assert (outcome.error.error_class, outcome.error.provider_code) == (ErrorClass.UNKNOWN, "XML_REFUSED")
    assert outcome.attempts == 2


@pytest.mark.parametrize("fault", ["garbage", "empty"])
def test_truncated_or_empty_answer_is_unknown(run: Callable[..., Outcome], bogazici: Any, fault: str) -> None:
    """Half an envelope or an empty 200 is an unknown answer, retried under the unknown cap, not a crash."""
    bogazici.state.add_faults([{"operation": "trafik_quote", "fault": fault, "times": 50}])
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.error is not None
    assert outcome.error.kind is ErrorKind.UNCLASSIFIED
    assert outcome.attempts == 2


def test_mislabelled_soap_answer_is_still_read(run: Callable[..., Outcome], bogazici: Any) -> None:
    """A real SOAP answer labelled text/html is read by its content, not its label."""
    bogazici.state.add_faults([{"operation": "trafik_quote", "fault": "wrong_content_type"}])
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok and outcome.attempts == 1


# --- throttling -----------------------------------------------------------------------------------------


def test_bs901_throttle_waits_tekrardenemesn_seconds(
    run: Callable[..., Outcome], bogazici: Any, recording_sleep: Any
) -> None:
    """BS-901 with <TekrarDenemeSn>1 makes the engine wait at least 1 s, logged as the insurer's signal."""
    bogazici.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "BS-901", "wait_seconds": 1}])
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok and outcome.attempts == 2
    assert recording_sleep.waits and recording_sleep.waits[0] >= 1.0
    throttled = Attempt.objects.get(provider_code="BS-901")
    assert throttled.wait_reason == "signal:TekrarDenemeSn"
    assert throttled.error_kind == "throttled"
    assert throttled.wait_seconds is not None and throttled.wait_seconds >= 1.0
    assert bogazici.state.counts()["throttled"] == {"trafik_quote": 1}


def test_bs901_without_tekrardenemesn_backs_off_with_jitter(
    run: Callable[..., Outcome], bogazici: Any, recording_sleep: Any
) -> None:
    """BS-901 without a wait element: our own full-jitter backoff, capped by the policy's base delay."""
    bogazici.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "BS-901", "wait_seconds": None}])
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok and outcome.attempts == 2
    assert Attempt.objects.get(provider_code="BS-901").wait_reason == "backoff:full-jitter"
    assert 0 <= recording_sleep.waits[0] <= 0.25


def test_calls_received_equal_attempts_recorded(
    run: Callable[..., Outcome], bogazici: Any, fast_issuance: None
) -> None:
    """Every request Boğaziçi received has exactly one Attempt row, lookups and faults included."""
    bogazici.state.add_faults(
        [
            {"operation": "trafik_quote", "fault": "error", "code": "BS-900", "times": 1},
            {"operation": "trafik_quote", "fault": "reset", "times": 1},
            {"operation": "issue_policy", "fault": "html", "http_status": 502, "times": 1},
            {"operation": "policy_status", "fault": "error", "code": "BS-901", "wait_seconds": 0, "times": 1},
        ]
    )
    quote_no = _quote_no(run)
    policy = _issue(run, quote_no)
    assert policy.ok, policy.to_json()
    assert run("policy_status", {"policy_no": policy.result_as(Policy).policy_no}).ok
    counts = bogazici.state.counts()
    # The 502 left the outcome open: one lookup at once (BS-404), one after the settling time.
    assert counts["total_received"] == Attempt.objects.count() == 9
    assert counts["received"]["issue_lookup"] == Attempt.objects.filter(call="lookup").count() == 2


# --- issuance: Boğaziçi does not deduplicate -------------------------------------------------------------


@pytest.mark.parametrize("drop", ["reset", "hang"])
def test_commit_then_drop_yields_exactly_one_policy(
    run: Callable[..., Outcome], bogazici: Any, fast_issuance: None, drop: str
) -> None:
    """The policy is created but the answer is lost: TeklifPoliceSorgu finds it, no second Policelestir."""
    quote_no = _quote_no(run)
    bogazici.state.add_faults([{"operation": "issue_policy", "fault": "commit_then_drop", "drop": drop, "seconds": 2}])
    outcome = _issue(run, quote_no)
    assert outcome.ok, outcome.to_json()
    counts = bogazici.state.counts()
    assert counts["policies_by_quote"] == {quote_no: [outcome.result_as(Policy).policy_no]}
    assert counts["received"]["issue_policy"] == 1
    assert counts["received"]["issue_lookup"] == 1
    first = Attempt.objects.get(operation="issue_policy", call="main")
    assert first.ambiguous and first.provider_code == ("CONNECTION_RESET" if drop == "reset" else "READ_TIMEOUT")


def test_bs902_after_the_policy_was_created_yields_exactly_one_policy(
    run: Callable[..., Outcome], bogazici: Any, fast_issuance: None
) -> None:
    """BS-902 may hide a done deed: the lookup finds the policy Boğaziçi created despite the error."""
    quote_no = _quote_no(run)
    bogazici.state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "BS-902", "commit": True}])
    outcome = _issue(run, quote_no)
    assert outcome.ok, outcome.to_json()
    counts = bogazici.state.counts()
    assert counts["policies_by_quote"] == {quote_no: [outcome.result_as(Policy).policy_no]}
    assert counts["received"]["issue_policy"] == 1


def test_bs902_is_looked_up_before_resending(run: Callable[..., Outcome], bogazici: Any, fast_issuance: None) -> None:
    """After BS-902 the lookup comes before the one re-send, and its BS-404 ("never issued") is
    final only once the settling time since the send has passed: it is asked again then."""
    quote_no = _quote_no(run)
    bogazici.state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "BS-902"}])
    outcome = _issue(run, quote_no)
    assert outcome.ok, outcome.to_json()
    counts = bogazici.state.counts()
    assert counts["received"]["issue_lookup"] == 2
    assert counts["received"]["issue_policy"] == 2
    assert counts["policies_by_quote"] == {quote_no: [outcome.result_as(Policy).policy_no]}
    rows = list(Attempt.objects.filter(operation="issue_policy").order_by("started_at", "id"))
    assert [(row.call, row.provider_code, row.ok) for row in rows] == [
        ("main", "BS-902", False),
        ("lookup", "", True),
        ("lookup", "", True),
        ("main", "", True),
    ]
    assert rows[0].ambiguous
    # The re-send left no earlier than the settling time (1 s here) after the first send.
    assert (rows[3].started_at - rows[0].started_at).total_seconds() >= 1.0


@pytest.mark.parametrize(
    "rule",
    [
        {"fault": "html", "http_status": 502},
        {"fault": "error", "code": "BS-900"},
        {"fault": "soap_fault", "code": "soap:Server"},
        {"fault": "garbage"},
    ],
    ids=["html-502", "bs900", "soap-server", "truncated"],
)
def test_failed_issuance_is_ambiguous_and_looked_up(
    run: Callable[..., Outcome], bogazici: Any, fast_issuance: None, rule: dict[str, Any]
) -> None:
    """A 502 page, BS-900, a Server fault or a truncated answer cannot prove nothing was issued: look first."""
    quote_no = _quote_no(run)
    bogazici.state.add_faults([{"operation": "issue_policy", **rule}])
    outcome = _issue(run, quote_no)
    assert outcome.ok, outcome.to_json()
    counts = bogazici.state.counts()
    # Found at once when the failed send had issued it (the truncated answer); otherwise BS-404,
    # asked again once the settling time has passed, and only then the one re-send.
    resent = counts["received"]["issue_policy"] == 2
    assert counts["received"]["issue_lookup"] == (2 if resent else 1)
    assert counts["policies_by_quote"] == {quote_no: [outcome.result_as(Policy).policy_no]}
    assert Attempt.objects.get(operation="issue_policy", call="main", ok=False).ambiguous


def test_issuance_throttle_is_not_ambiguous(run: Callable[..., Outcome], bogazici: Any, fast_issuance: None) -> None:
    """BS-901 on Policelestir means "not processed": re-sent after the wait, without a lookup."""
    quote_no = _quote_no(run)
    bogazici.state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "BS-901", "wait_seconds": None}])
    outcome = _issue(run, quote_no)
    assert outcome.ok, outcome.to_json()
    counts = bogazici.state.counts()
    assert counts["received"].get("issue_lookup", 0) == 0
    assert counts["policies_by_quote"] == {quote_no: [outcome.result_as(Policy).policy_no]}


def test_issuance_of_expired_quote_is_final(run: Callable[..., Outcome], bogazici: Any) -> None:
    """BS-320 on Policelestir is a definite "no": one try, no lookup, no policy."""
    quote_no = _quote_no(run)
    bogazici.state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "BS-320"}])
    outcome = _issue(run, quote_no)
    assert outcome.error is not None
    assert (outcome.error.kind, outcome.attempts) == (ErrorKind.EXPIRED, 1)
    assert not Attempt.objects.get(operation="issue_policy").ambiguous
    counts = bogazici.state.counts()
    assert counts["received"].get("issue_lookup", 0) == 0 and counts["issued_total"] == 0


def test_resumed_issuance_finds_the_earlier_policy(run: Callable[..., Outcome], bogazici: Any) -> None:
    """A resumed issuance asks TeklifPoliceSorgu first and returns the policy already issued."""
    quote_no = _quote_no(run)
    first = _issue(run, quote_no)
    resumed = _issue(run, quote_no, history=IssuanceHistory(maybe_sent=True))
    assert resumed.ok and resumed.result == first.result
    counts = bogazici.state.counts()
    assert counts["received"]["issue_policy"] == 1 and counts["received"]["issue_lookup"] == 1
    assert counts["policies_by_quote"] == {quote_no: [first.result_as(Policy).policy_no]}


def test_failed_lookup_is_retried_and_never_guessed(
    run: Callable[..., Outcome], bogazici: Any, fast_issuance: None
) -> None:
    """When the lookup itself fails, the engine asks again rather than re-sending blind."""
    quote_no = _quote_no(run)
    bogazici.state.add_faults(
        [
            {"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset"},
            {"operation": "issue_lookup", "fault": "error", "code": "BS-900"},
        ]
    )
    outcome = _issue(run, quote_no)
    assert outcome.ok, outcome.to_json()
    counts = bogazici.state.counts()
    assert counts["received"]["issue_lookup"] == 2 and counts["received"]["issue_policy"] == 1
    assert counts["policies_by_quote"] == {quote_no: [outcome.result_as(Policy).policy_no]}
