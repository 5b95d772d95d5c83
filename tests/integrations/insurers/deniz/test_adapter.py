"""Deniz Sigorta adapter against the Deniz sandbox: REST/JSON, HTTP Basic, asynchronous issuance."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
from datetime import UTC, date
from decimal import Decimal

import pytest

from integrations.answers.coverages import COVERAGE_NAMES_TR
from integrations.answers.results import Address, Document, Policy, PolicyStatus, Quote
from integrations.answers.taxonomy import ErrorClass, ErrorKind, plain_message
from integrations.attempts.recording import BufferedRecorder
from integrations.calling.calls import insurer_operation_run, new_reference
from integrations.calling.channel import CallContext, Channel
from integrations.calling.engine import IssuanceHistory
from integrations.insurers.deniz.adapter import ERROR_TABLE, DenizAdapter
from integrations.models import Attempt, Insurer, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from sandbox import domain
from sandbox.insurers import deniz as deniz_sandbox
from tests import samples

pytestmark = pytest.mark.django_db


@pytest.fixture
def deniz(sandbox):
    """The Deniz sandbox, revealing issuance outcomes after 0.1 s so polling tests stay quick."""
    server = sandbox["deniz"]
    server.state.configure(issuance_processing_seconds=0.1)
    return server


@pytest.fixture
def run(endpoint_for, deniz):
    """Run one Deniz operation through the engine, as agency ACENTE1 unless told otherwise."""

    def call(operation, data, *, reference="", endpoint=None, **kwargs):
        return insurer_operation_run(
            endpoint=endpoint or endpoint_for("deniz"), operation=operation, data=data, reference=reference, **kwargs
        )

    return call


@pytest.fixture
def short_issuance_policy(seeded_accounts):
    """Issuance tuned for tests: a 1 s attempt timeout, short backoff, 20 s deadline."""

    def apply(**overrides):
        values = {
            "attempt_timeout": 1.0,
            "deadline": 20.0,
            "base_delay": 0.1,
            "max_delay": 0.5,
            "max_attempts": 5,
            **overrides,
        }
        OperationPolicy.objects.update_or_create(
            insurer=Insurer.objects.get(code="deniz"), operation="issue_policy", defaults=values
        )
        clear_policy_cache()

    yield apply
    clear_policy_cache()


def trafik_quote_no(run) -> str:
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok, outcome.to_json()
    return outcome.result.quote_no


def issue_data(quote_no: str) -> dict:
    return {"quote_no": quote_no, "payment_token": samples.PAYMENT_TOKEN}


def calls_made() -> list[str]:
    return list(Attempt.objects.order_by("started_at", "id").values_list("call", flat=True))


# --- happy paths -------------------------------------------------------------------------------


def test_trafik_quote_is_normalised(run):
    """A trafik quote comes back with a Decimal premium in TRY and an aware UTC expiry."""
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok, outcome.to_json()
    quote = outcome.result
    assert isinstance(quote, Quote)
    assert quote.quote_no
    assert isinstance(quote.premium, Decimal) and quote.premium > 0
    assert quote.currency == "TRY"
    assert quote.valid_until.tzinfo is not None and quote.valid_until.utcoffset().total_seconds() == 0
    assert outcome.attempts == 1


def test_kasko_quote_is_normalised(run):
    """A kasko quote is read like a trafik one (premium Decimal, expiry aware UTC)."""
    outcome = run("kasko_quote", samples.KASKO)
    assert outcome.ok, outcome.to_json()
    assert isinstance(outcome.result.premium, Decimal) and outcome.result.premium > 0
    assert outcome.result.valid_until.tzinfo == UTC


# --- quote and issuance terms (CONTRACTS.md, "Policy start", "Installments", "Kasko options") ----


def test_kasko_options_go_under_risk_options_and_the_priced_covers_read_back(run, deniz):
    """Money as amount objects, the shop as CONTRACTED; the covers Deniz priced are read back."""
    plain = run("kasko_quote", samples.KASKO)
    options = {"deductible": 2500, "replacement_car_days": 15, "liability_limit": "1000000"}
    chosen = run("kasko_quote", {**samples.KASKO, **options, "repair_shop": "contracted"})
    assert chosen.ok, chosen.to_json()
    assert chosen.result.premium != plain.result.premium
    assert chosen.result.details["coverages"][5:] == [
        {"code": "liability", "name": "İhtiyari mali mesuliyet (İMM)", "limit": "1000000.00"},
        {"code": "replacement_car", "name": "İkame araç", "limit": None, "days": 15},
        {"code": "deductible", "name": "Muafiyet", "limit": "2500.00"},
    ]
    quote = deniz.state.ledger.quotes[chosen.result.quote_no]
    assert quote.terms.options == {
        "deductible": Decimal(2500),
        "replacement_car_days": 15,
        "liability_limit": Decimal(1000000),
        "repair_shop": "contracted",
    }


@pytest.mark.parametrize(
    ("option", "label"),
    [
        ({"repair_shop": "authorized"}, "servis türü"),  # Deniz works with contracted shops only
        ({"liability_limit": None}, "İMM limiti"),  # and sells no unlimited İMM
        ({"deductible": 0}, "muafiyet"),
    ],
)
def test_an_unsold_option_is_a_field_error_read_from_the_detail(run, option, label):
    """INVALID_REQUEST's detail names `risk.options.<field>`: the agent reads which option."""
    outcome = run("kasko_quote", {**samples.KASKO, **option})
    assert (outcome.error.provider_code, outcome.error.field, outcome.attempts) == ("INVALID_REQUEST", *option, 1)
    assert plain_message(outcome.error) == (
        f"Şirket seçilen {label} seçeneğini satmıyor. Başka bir seçenekle teklifi yeniden çalışın."
    )


def test_a_risk_field_refusal_names_the_platform_field_too(run):
    outcome = run("trafik_quote", {**samples.TRAFIK, "plate": "XX"})
    assert (outcome.error.provider_code, outcome.error.field) == ("INVALID_REQUEST", "plate")


def test_start_and_installments_reach_the_policy(run, deniz):
    """`risk.starts_on` on the quote, `installments` beside the quote id: the period and the count."""
    starts_on = domain.today_in_turkiye(time.time())
    quoted = run("trafik_quote", {**samples.TRAFIK, "starts_on": starts_on})
    issued = run("issue_policy", {**issue_data(quoted.result.quote_no), "installments": 3}, reference=new_reference())
    assert issued.ok, issued.to_json()
    assert (issued.result.starts_on, issued.result.ends_on) == (starts_on, domain.one_year_after(starts_on))
    assert deniz.state.ledger.policies[issued.result.policy_no].installments == 3


def test_a_count_not_offered_is_refused_before_any_request_is_made(run, deniz):
    refused = run("issue_policy", {**issue_data(trafik_quote_no(run)), "installments": 4}, reference=new_reference())
    assert (refused.error.provider_code, refused.error.field) == ("INVALID_REQUEST", "installments")
    assert deniz.state.ledger.requests == {} and deniz.state.counts()["issued_total"] == 0


def test_dask_address_maps_line_and_building_ref(run):
    """GET /addresses/{uavt} answers line/building_ref, normalised to address/building_id."""
    outcome = run("dask_address", samples.DASK_ADDRESS)
    assert outcome.ok, outcome.to_json()
    address = outcome.result
    assert isinstance(address, Address)
    assert address.uavt_code == samples.DASK_ADDRESS["uavt_code"]
    assert address.address and address.building_id


def test_dask_quote_uses_the_building_from_the_address_check(run):
    """A DASK quote with the building Deniz named is priced, premium a Decimal."""
    building_id = run("dask_address", samples.DASK_ADDRESS).result.building_id
    outcome = run("dask_quote", {**samples.DASK_ADDRESS, "building_id": building_id, **samples.DASK_RISK})
    assert outcome.ok, outcome.to_json()
    assert isinstance(outcome.result.premium, Decimal) and outcome.result.premium > 0
    assert outcome.result.valid_until.tzinfo == UTC


def test_issue_policy_polls_the_accepted_request_until_issued(run, deniz):
    """202 PROCESSING, then polls of GET /policy-requests/{id} until ISSUED: one ACTIVE policy."""
    quote_no = trafik_quote_no(run)
    outcome = run("issue_policy", issue_data(quote_no), reference=new_reference())
    assert outcome.ok, outcome.to_json()
    assert isinstance(outcome.result, Policy) and outcome.result.status is PolicyStatus.ACTIVE
    counts = deniz.state.counts()
    assert counts["policies_by_quote"] == {quote_no: [outcome.result.policy_no]}
    assert counts["received"]["issue_policy"] == 1
    assert counts["received"]["issue_poll"] >= 1
    assert outcome.attempts == 1
    assert calls_made()[1] == "main" and set(calls_made()[2:]) == {"poll"}


@pytest.mark.parametrize(
    ("stored", "expected"),
    [("ACTIVE", PolicyStatus.ACTIVE), ("CANCELLED", PolicyStatus.CANCELLED), ("EXPIRED", PolicyStatus.EXPIRED)],
)
def test_policy_status_maps_deniz_states(run, deniz, stored, expected):
    """IN_FORCE, CANCELLED and LAPSED become ACTIVE, CANCELLED and EXPIRED."""
    deniz.state.seed_policies(
        [{"policy_no": "DZ-P-990001", "status": stored, "starts_on": "2025-06-01", "ends_on": "2026-06-01"}]
    )
    outcome = run("policy_status", {"policy_no": "DZ-P-990001"})
    assert outcome.ok, outcome.to_json()
    assert outcome.result == Policy(
        policy_no="DZ-P-990001", status=expected, starts_on=date(2025, 6, 1), ends_on=date(2026, 6, 1)
    )


# --- error table ---------------------------------------------------------------------------------

PERMANENT_CODES = [
    ("INVALID_REQUEST", ErrorKind.VALIDATION),
    ("AGENCY_NOT_AUTHORIZED", ErrorKind.NOT_ALLOWED),
    ("NOT_FOUND", ErrorKind.NOT_FOUND),
    ("UNDERWRITING_DECLINED", ErrorKind.BUSINESS_REJECT),
    ("QUOTE_EXPIRED", ErrorKind.EXPIRED),
]


@pytest.mark.parametrize(("code", "kind"), PERMANENT_CODES)
def test_permanent_code_fails_after_one_attempt(run, deniz, code, kind):
    """Each permanent code of Deniz's table is classified as such and never retried."""
    deniz.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": code, "times": 5}])
    outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.error is not None
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (
        ErrorClass.PERMANENT,
        kind,
        code,
    )
    assert outcome.attempts == 1
    assert deniz.state.counts()["received"]["trafik_quote"] == 1


def test_agency_not_authorized_tells_the_agent_in_turkish(run, deniz):
    """AGENCY_NOT_AUTHORIZED shows the agent "Bu ürün için yetkiniz yok"."""
    deniz.state.add_faults([{"operation": "kasko_quote", "fault": "error", "code": "AGENCY_NOT_AUTHORIZED"}])
    outcome = run("kasko_quote", samples.KASKO)
    assert outcome.error.agent_message() == "Bu ürün için yetkiniz yok"


@pytest.mark.parametrize(("code", "http_status"), [("INTERNAL_ERROR", 500), ("SERVICE_UNAVAILABLE", 503)])
def test_server_errors_are_unavailable_and_retried_to_the_cap(run, deniz, code, http_status):
    """500/503 with any code are retryable `unavailable`: tried max_attempts (3 for trafik) times in all."""
    deniz.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": code, "times": 10}])
    outcome = run("trafik_quote", samples.TRAFIK, sleep=lambda s: None)
    assert (outcome.error.error_class, outcome.error.kind) == (ErrorClass.RETRYABLE, ErrorKind.UNAVAILABLE)
    assert (outcome.error.provider_code, outcome.error.http_status) == (code, http_status)
    assert outcome.attempts == 3


def test_server_error_without_a_code_is_unavailable_by_status(run, deniz):
    """A 502 HTML gateway page carries no code: the status is the code, retried until it clears."""
    deniz.state.add_faults([{"operation": "dask_address", "fault": "html", "http_status": 502}])
    outcome = run("dask_address", samples.DASK_ADDRESS, sleep=lambda s: None)
    assert outcome.ok, outcome.to_json()
    first = Attempt.objects.order_by("started_at").first()
    assert (first.provider_code, first.error_kind, first.error_class) == ("502", "unavailable", "retryable")
    assert outcome.attempts == 2


def test_too_many_requests_is_a_throttle_and_retried(run, deniz):
    """TOO_MANY_REQUESTS is `throttled`: retried, and the retry goes through."""
    deniz.state.add_faults(
        [{"operation": "dask_address", "fault": "error", "code": "TOO_MANY_REQUESTS", "wait_seconds": 0}]
    )
    outcome = run("dask_address", samples.DASK_ADDRESS)
    assert outcome.ok, outcome.to_json()
    first = Attempt.objects.order_by("started_at").first()
    assert (first.provider_code, first.error_kind, first.error_class) == (
        "TOO_MANY_REQUESTS",
        "throttled",
        "retryable",
    )
    assert outcome.attempts == 2


def test_unknown_code_is_unclassified_and_tried_twice(run, deniz):
    """A code Deniz's table does not know is `unknown`: two attempts in all, then given up."""
    deniz.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "ZZ-999", "times": 5}])
    outcome = run("trafik_quote", samples.TRAFIK, sleep=lambda s: None)
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (
        ErrorClass.UNKNOWN,
        ErrorKind.UNCLASSIFIED,
        "ZZ-999",
    )
    assert outcome.attempts == 2


def test_bad_credentials_are_auth_permanent_after_one_attempt(run, endpoint_for):
    """401 carries no code: read as "401", `auth`, permanent, one attempt."""
    bad = dataclasses.replace(endpoint_for("deniz"), credentials={"username": "acente1", "password": "wrong"})
    outcome = run("trafik_quote", samples.TRAFIK, endpoint=bad)
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (
        ErrorClass.PERMANENT,
        ErrorKind.AUTH,
        "401",
    )
    assert outcome.attempts == 1


# --- throttle signal -----------------------------------------------------------------------------


@pytest.fixture
def reset_headers():
    """The X-RateLimit-Reset values Deniz sent, with when each answer arrived (read off the real session)."""
    from integrations.calling.channel import _session

    seen: list[tuple[float, float]] = []

    def hook(response, *args, **kwargs):
        if response.status_code == 429:
            seen.append((float(response.headers["X-RateLimit-Reset"]), time.time()))

    session = _session()
    session.hooks["response"].append(hook)
    yield seen
    session.hooks["response"].remove(hook)


def test_throttle_waits_until_x_ratelimit_reset(run, deniz, recording_sleep, reset_headers):
    """A 429 is retried no earlier than X-RateLimit-Reset; the wait is logged as the signal's."""
    deniz.state.add_faults([{"operation": "trafik_quote", "fault": "throttle", "wait_seconds": 1}])
    outcome = run("trafik_quote", samples.TRAFIK, sleep=recording_sleep)
    assert outcome.ok, outcome.to_json()
    [(reset_at, received_at)] = reset_headers
    assert recording_sleep.waits[0] >= reset_at - received_at - 0.05
    throttled, retried = Attempt.objects.order_by("started_at")
    assert throttled.provider_code == "TOO_MANY_REQUESTS" and throttled.error_kind == "throttled"
    assert throttled.wait_reason == "signal:X-RateLimit-Reset"
    assert throttled.wait_seconds == pytest.approx(recording_sleep.waits[0], abs=0.001)
    assert retried.ok and retried.started_at.timestamp() >= reset_at


def test_throttled_poll_waits_for_the_reset_and_keeps_polling(run, deniz, reset_headers):
    """A throttled poll does not end the attempt: the next poll comes after X-RateLimit-Reset."""
    quote_no = trafik_quote_no(run)
    deniz.state.add_faults([{"operation": "issue_poll", "fault": "throttle", "wait_seconds": 1}])
    outcome = run("issue_policy", issue_data(quote_no), reference=new_reference())
    assert outcome.ok, outcome.to_json()
    assert outcome.attempts == 1
    [(reset_at, _)] = reset_headers
    polls = list(Attempt.objects.filter(call="poll").order_by("started_at"))
    assert polls[0].provider_code == "TOO_MANY_REQUESTS"
    assert polls[1].started_at.timestamp() >= reset_at
    assert deniz.state.counts()["received"]["issue_policy"] == 1


# --- the insurer's side of the story --------------------------------------------------------------


def test_every_call_received_has_an_attempt_row(run, deniz):
    """Calls Deniz received equal Attempt rows, helper calls (poll, lookup) and failures included."""
    quote_no = trafik_quote_no(run)
    deniz.state.add_faults(
        [
            {"operation": "issue_poll", "fault": "reset"},
            {"operation": "issue_poll", "fault": "error", "code": "SERVICE_UNAVAILABLE"},
        ]
    )
    outcome = run("issue_policy", issue_data(quote_no), reference=new_reference())
    assert outcome.ok, outcome.to_json()
    assert deniz.state.counts()["total_received"] == Attempt.objects.count()


# --- asynchronous issuance ----------------------------------------------------------------------


def test_rejected_request_is_a_permanent_business_refusal(run, deniz):
    """A request that polls to REJECTED fails at once as business_reject, with Deniz's reason."""
    quote_no = trafik_quote_no(run)
    deniz.state.add_faults([{"operation": "issue_policy", "fault": "reject", "reason": "Hasar geçmişi uygun değil"}])
    outcome = run("issue_policy", issue_data(quote_no), reference=new_reference())
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (
        ErrorClass.PERMANENT,
        ErrorKind.BUSINESS_REJECT,
        "REJECTED",
    )
    assert "Hasar geçmişi uygun değil" in outcome.error.agent_message()
    assert outcome.attempts == 1
    assert deniz.state.counts()["issued_total"] == 0


@pytest.mark.parametrize("drop", ["reset", "hang"])
def test_commit_then_drop_looks_up_the_reference_and_issues_once(run, deniz, short_issuance_policy, drop):
    """The request is taken, the answer lost: the retry looks it up by reference and never re-sends."""
    short_issuance_policy()
    quote_no = trafik_quote_no(run)
    deniz.state.add_faults([{"operation": "issue_policy", "fault": "commit_then_drop", "drop": drop, "seconds": 3}])
    outcome = run("issue_policy", issue_data(quote_no), reference=new_reference())
    assert outcome.ok, outcome.to_json()
    counts = deniz.state.counts()
    assert counts["policies_by_quote"] == {quote_no: [outcome.result.policy_no]}
    assert counts["received"]["issue_policy"] == 1
    assert counts["received"]["issue_lookup"] >= 1
    issuance_calls = calls_made()[1:]
    assert issuance_calls[:2] == ["main", "lookup"]
    first = Attempt.objects.get(call="main", operation="issue_policy")
    assert first.ambiguous


def test_repeated_reference_answers_with_the_earlier_request(run, deniz):
    """A second send with the same client_reference gets 409 DUPLICATE_REFERENCE and the same policy."""
    quote_no = trafik_quote_no(run)
    reference = new_reference()
    first = run("issue_policy", issue_data(quote_no), reference=reference)
    again = run("issue_policy", issue_data(quote_no), reference=reference)
    assert first.ok and again.ok, again.to_json()
    assert again.result == first.result
    assert again.attempts == 1
    counts = deniz.state.counts()
    assert counts["received"]["issue_policy"] == 2
    assert counts["policies_by_quote"] == {quote_no: [first.result.policy_no]}


def test_processing_past_the_deadline_is_ambiguous_and_resumed_by_lookup(run, deniz, short_issuance_policy):
    """Still PROCESSING at the deadline: retryable STILL_PROCESSING; a resumed run looks it up, never re-sends."""
    short_issuance_policy(deadline=1.5)
    deniz.state.configure(issuance_processing_seconds=2.5)
    quote_no = trafik_quote_no(run)
    reference = new_reference()
    outcome = run("issue_policy", issue_data(quote_no), reference=reference)
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (
        ErrorClass.RETRYABLE,
        ErrorKind.UNAVAILABLE,
        "STILL_PROCESSING",
    )
    assert outcome.error.ambiguous
    assert Attempt.objects.filter(operation="issue_policy", provider_code="STILL_PROCESSING", ambiguous=True).exists()

    short_issuance_policy(deadline=10.0)
    resumed = run("issue_policy", issue_data(quote_no), reference=reference, history=IssuanceHistory(maybe_sent=True))
    assert resumed.ok, resumed.to_json()
    counts = deniz.state.counts()
    assert counts["received"]["issue_policy"] == 1
    assert counts["policies_by_quote"] == {quote_no: [resumed.result.policy_no]}


def test_duplicate_reference_error_polls_the_request_it_names(run, deniz):
    """409 DUPLICATE_REFERENCE on the send is not a failure: the named request is polled to its policy."""
    quote_no = trafik_quote_no(run)
    deniz.state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "DUPLICATE_REFERENCE"}])
    outcome = run("issue_policy", issue_data(quote_no), reference=new_reference())
    assert outcome.ok, outcome.to_json()
    assert outcome.attempts == 1
    assert Attempt.objects.get(call="main", operation="issue_policy").http_status == 409
    assert deniz.state.counts()["policies_by_quote"] == {quote_no: [outcome.result.policy_no]}


def test_lookup_of_an_unknown_reference_sends_the_request(run, deniz):
    """A reset before Deniz took the request: the lookup finds nothing, so the request is sent again."""
    quote_no = trafik_quote_no(run)
    deniz.state.add_faults([{"operation": "issue_policy", "fault": "reset"}])
    outcome = run("issue_policy", issue_data(quote_no), reference=new_reference(), sleep=lambda s: None)
    assert outcome.ok, outcome.to_json()
    assert calls_made()[1:4] == ["main", "lookup", "main"]
    assert deniz.state.counts()["policies_by_quote"] == {quote_no: [outcome.result.policy_no]}


# --- policy periods ----------------------------------------------------------------------------


def ledger_period(deniz, policy_no: str) -> tuple[date, date]:
    policy = deniz.state.ledger.policies[policy_no]
    return policy.starts_on, policy.ends_on


def test_issued_policy_carries_its_period(run, deniz):
    """The ISSUED poll's period.from/to become the Policy's starts_on/ends_on."""
    outcome = run("issue_policy", issue_data(trafik_quote_no(run)), reference=new_reference())
    assert outcome.ok, outcome.to_json()
    policy = outcome.result
    assert (policy.starts_on, policy.ends_on) == ledger_period(deniz, policy.policy_no)
    assert policy.to_json()["starts_on"] == policy.starts_on.isoformat()


def test_policy_status_of_an_issued_policy_carries_its_period(run, deniz):
    issued = run("issue_policy", issue_data(trafik_quote_no(run)), reference=new_reference()).result
    outcome = run("policy_status", {"policy_no": issued.policy_no})
    assert outcome.ok, outcome.to_json()
    assert (outcome.result.starts_on, outcome.result.ends_on) == ledger_period(deniz, issued.policy_no)


@pytest.fixture
def adapter(deniz, endpoint_for):
    """A bare Deniz adapter (no engine), for the calls the engine only makes in corners."""
    context = CallContext(insurer_code="deniz", operation="issue_policy")
    channel = Channel(base_url=deniz.base_url, context=context, recorder=BufferedRecorder(), error_table=ERROR_TABLE)
    return DenizAdapter(channel=channel, credentials=endpoint_for("deniz").credentials)


def test_found_issued_policy_carries_its_period(run, deniz, adapter):
    """find_issued_policy reads the period of the lookup's ISSUED item."""
    reference = new_reference()
    issued = run("issue_policy", issue_data(trafik_quote_no(run)), reference=reference).result
    found = adapter.find_issued_policy({}, reference=reference)
    assert found == issued
    assert (found.starts_on, found.ends_on) == ledger_period(deniz, issued.policy_no)
    assert deniz.state.counts()["received"]["issue_lookup"] == 1


def test_lookup_after_a_lost_answer_reads_the_period(run, deniz, short_issuance_policy):
    """Commit, then drop: the lookup path's policy has its period too."""
    short_issuance_policy()
    quote_no = trafik_quote_no(run)
    deniz.state.add_faults([{"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset"}])
    outcome = run("issue_policy", issue_data(quote_no), reference=new_reference())
    assert outcome.ok, outcome.to_json()
    assert (outcome.result.starts_on, outcome.result.ends_on) == ledger_period(deniz, outcome.result.policy_no)


def test_unreadable_period_leaves_the_policy_standing(deniz, adapter, monkeypatch):
    """A period in no form we read is None, never a failed call (a failed issuance could be re-sent)."""
    deniz.state.seed_policies([{"policy_no": "DZ-P-990002", "status": "ACTIVE"}])
    monkeypatch.setattr(deniz_sandbox, "period", lambda policy: {"from": "yarın", "to": None})
    policy = adapter.policy_status({"policy_no": "DZ-P-990002"})
    assert policy == Policy(policy_no="DZ-P-990002", status=PolicyStatus.ACTIVE)


# --- coverages and installments -------------------------------------------------------------------


def test_trafik_quote_keeps_the_legal_limits_as_coverages(run):
    details = run("trafik_quote", samples.TRAFIK).result.details
    assert details["coverages"] == [
        {"code": code, "name": COVERAGE_NAMES_TR[code], "limit": str(limit.quantize(Decimal("0.01")))}
        for code, limit in domain.TRAFIK_LIMITS.items()
    ]


def test_kasko_quote_coverages_unlimited_glass_is_none(run):
    coverages = {c["code"]: c for c in run("kasko_quote", samples.KASKO).result.details["coverages"]}
    assert list(coverages) == list(domain.KASKO_COVERS)
    assert coverages["glass"]["limit"] is None and coverages["collision"]["name"] == "Çarpışma"
    assert Decimal(coverages["theft"]["limit"]) > 0


def test_dask_quote_keeps_the_earthquake_cover_and_the_sum_insured(run):
    building_id = run("dask_address", samples.DASK_ADDRESS).result.building_id
    quote = run("dask_quote", {**samples.DASK_ADDRESS, "building_id": building_id, **samples.DASK_RISK}).result
    [cover] = quote.details["coverages"]
    assert cover["code"] == "earthquake" and cover["name"] == COVERAGE_NAMES_TR["earthquake"]
    assert Decimal(cover["limit"]) > 0 and quote.details["sum_insured"] == cover["limit"]


def test_quote_keeps_the_installment_plans(run):
    quote = run("trafik_quote", samples.TRAFIK).result
    plans = quote.details["installments"]
    assert plans == [{"count": count, "total": str(total)} for count, total in domain.installments(quote.premium)]
    assert plans[0] == {"count": 1, "total": str(quote.premium)}


def test_unreadable_coverage_and_installment_entries_are_skipped_not_the_quote(run, deniz, caplog):
    """Entries without a code, with a word for a limit, in EUR, or not objects: skipped and logged."""
    deniz.state.add_faults([{"operation": "trafik_quote", "fault": "broken_coverages"}])
    with caplog.at_level(logging.WARNING, logger="integrations.insurers.deniz.adapter"):
        outcome = run("trafik_quote", samples.TRAFIK)
    assert outcome.ok, outcome.to_json()
    assert [c["code"] for c in outcome.result.details["coverages"]] == list(domain.TRAFIK_LIMITS)
    assert [p["count"] for p in outcome.result.details["installments"]] == [1, 3, 6, 9]
    skipped = [r for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 9  # five coverage entries, four installment entries


# --- policy documents ------------------------------------------------------------------------------


@pytest.fixture
def sent_headers():
    """(path, carried Authorization?) for every request the channel's session sent to Deniz."""
    from urllib.parse import urlsplit

    from integrations.calling.channel import _session

    seen: list[tuple[str, bool]] = []

    def hook(response, *args, **kwargs):
        seen.append((urlsplit(response.request.url).path, "Authorization" in response.request.headers))

    session = _session()
    session.hooks["response"].append(hook)
    yield seen
    session.hooks["response"].remove(hook)


@pytest.fixture
def document_policy(seeded_accounts):
    """The policy in force for Deniz documents, with overrides (e.g. a single try)."""

    def apply(**overrides):
        values = {"attempt_timeout": 2.0, "deadline": 15.0, "base_delay": 0.1, "max_delay": 0.5, "max_attempts": 4}
        OperationPolicy.objects.update_or_create(
            insurer=Insurer.objects.get(code="deniz"), operation="policy_document", defaults={**values, **overrides}
        )
        clear_policy_cache()

    yield apply
    clear_policy_cache()


def issued_policy_no(run) -> str:
    outcome = run("issue_policy", issue_data(trafik_quote_no(run)), reference=new_reference())
    assert outcome.ok, outcome.to_json()
    return outcome.result.policy_no


def expected_pdf(deniz, policy_no: str) -> bytes:
    starts_on, ends_on = ledger_period(deniz, policy_no)
    return domain.policy_pdf("Deniz Sigorta", policy_no, starts_on, ends_on)


def test_document_follows_the_redirect_without_credentials(run, deniz, sent_headers):
    """303 to /documents/{token}, fetched with no Authorization: the sandbox's PDF, byte for byte."""
    policy_no = issued_policy_no(run)
    outcome = run("policy_document", {"policy_no": policy_no})
    assert outcome.ok, outcome.to_json()
    document = outcome.result
    assert isinstance(document, Document) and document.policy_no == policy_no
    assert document.sha256 == hashlib.sha256(expected_pdf(deniz, policy_no)).hexdigest()
    assert outcome.to_json()["result"]["sha256"] == document.sha256
    assert outcome.attempts == 1
    rows = list(Attempt.objects.filter(operation="policy_document").order_by("started_at", "id"))
    assert [(r.call, r.ok, r.http_status) for r in rows] == [("main", True, 303), ("download", True, 200)]
    # No credentials went to the link: as the sandbox saw it, and as our session sent it.
    assert deniz.insurer.document_downloads[-1] == (policy_no, False)
    document_paths = [(path, auth) for path, auth in sent_headers if "/document" in path]
    assert document_paths[0] == (f"/policies/{policy_no}/document", True)
    assert document_paths[1][0].startswith("/documents/") and document_paths[1][1] is False
    counts = deniz.state.counts()
    assert counts["received"]["policy_document"] == 1 and counts["received"]["document_download"] == 1


def test_document_not_ready_waits_for_retry_after_and_succeeds(run, deniz, document_policy, recording_sleep):
    """202 GENERATING is a wait Deniz asks for: logged as not_ready, slept per Retry-After, never a failed try."""
    document_policy(max_attempts=1)  # a NOT_READY counted as a failure would end the run here
    deniz.state.configure(document_delay_seconds=1.2)
    policy_no = issued_policy_no(run)
    outcome = run("policy_document", {"policy_no": policy_no}, sleep=recording_sleep)
    assert outcome.ok, outcome.to_json()
    assert outcome.result.sha256 == hashlib.sha256(expected_pdf(deniz, policy_no)).hexdigest()
    first, *rest = Attempt.objects.filter(operation="policy_document").order_by("started_at", "id")
    assert (first.call, first.http_status, first.provider_code) == ("main", 202, "GENERATING")
    assert (first.error_kind, first.error_class, first.ambiguous) == ("not_ready", "retryable", False)
    assert first.wait_reason == "signal:Retry-After"
    assert recording_sleep.waits[0] == pytest.approx(first.wait_seconds, abs=0.001)
    assert recording_sleep.waits[0] >= 1.0  # Retry-After: ceil(seconds left), at least 1
    assert [(r.call, r.ok) for r in rest] == [("main", True), ("download", True)]
    assert outcome.attempts == 2


def test_document_of_an_unknown_policy_is_permanent_not_found(run, deniz):
    outcome = run("policy_document", {"policy_no": "DZ-P-404404"})
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (
        ErrorClass.PERMANENT,
        ErrorKind.NOT_FOUND,
        "NOT_FOUND",
    )
    assert outcome.attempts == 1
    assert deniz.state.counts()["received"] == {"policy_document": 1}


def test_absolute_location_on_our_own_base_url_is_followed(run, deniz):
    """Location may be an absolute URL: on the insurer's own origin it is fetched like a path."""
    policy_no = issued_policy_no(run)
    deniz.state.add_faults([{"operation": "policy_document", "fault": "absolute_location"}])
    outcome = run("policy_document", {"policy_no": policy_no})
    assert outcome.ok, outcome.to_json()
    assert deniz.state.counts()["faults"] == {"policy_document": 1}
    assert deniz.state.counts()["received"]["document_download"] == 1


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "//evil.example",
        "https://{host}",
        "http://127.0.0.2:{port}",
        "http://{host}@evil.example",
        "http://127.0.0.1:{other_port}",
    ],
)
def test_location_off_our_base_url_is_not_followed(run, deniz, origin):
    """A link on another host, scheme or port is refused (never fetched, credentials or not): unknown, logged."""
    host = deniz.base_url.removeprefix("http://")
    port = int(host.rsplit(":", 1)[1])
    origin = origin.format(host=host, port=port, other_port=port + 1 if port < 65535 else port - 1)
    policy_no = issued_policy_no(run)
    deniz.state.add_faults([{"operation": "policy_document", "fault": "absolute_location", "reason": origin}])
    outcome = run("policy_document", {"policy_no": policy_no}, sleep=lambda s: None)
    assert outcome.ok, outcome.to_json()  # the retry gets an honest link
    refused = Attempt.objects.get(operation="policy_document", call="main", ok=False)
    assert (refused.provider_code, refused.error_class, refused.http_status) == ("FOREIGN_REDIRECT", "unknown", 303)
    assert deniz.state.counts()["received"]["document_download"] == 1  # only the honest link's
    # Nothing was sent to the foreign link: the one download is the honest link's, here.
    assert list(Attempt.objects.filter(call="download").values_list("ok", flat=True)) == [True]


def test_expired_link_is_retried_with_a_new_one(run, deniz, monkeypatch):
    """A link that expired before we fetched it (404) is retryable: the next attempt asks for a new one."""
    policy_no = issued_policy_no(run)
    monkeypatch.setattr(deniz.insurer, "document_link_seconds", 0.2)
    deniz.state.add_faults([{"operation": "document_download", "fault": "latency", "seconds": 0.4}])
    outcome = run("policy_document", {"policy_no": policy_no}, sleep=lambda s: None)
    assert outcome.ok, outcome.to_json()
    rows = list(Attempt.objects.filter(operation="policy_document").order_by("started_at", "id"))
    assert [(r.call, r.provider_code or "ok") for r in rows] == [
        ("main", "ok"),
        ("download", "DOCUMENT_LINK_EXPIRED"),
        ("main", "ok"),
        ("download", "ok"),
    ]
    assert rows[1].error_kind == "unavailable" and rows[1].http_status == 404
    assert deniz.state.counts()["received"]["policy_document"] == 2


@pytest.mark.parametrize("fault", ["garbage", "empty"])
def test_download_that_is_not_a_pdf_is_malformed_unknown(run, deniz, fault):
    policy_no = issued_policy_no(run)
    deniz.state.add_faults([{"operation": "document_download", "fault": fault, "times": None}])
    outcome = run("policy_document", {"policy_no": policy_no}, sleep=lambda s: None)
    assert (outcome.error.error_class, outcome.error.provider_code) == (ErrorClass.UNKNOWN, "MALFORMED_RESPONSE")
    assert outcome.attempts == 2  # the unknown cap


def test_throttled_document_call_waits_for_the_reset(run, deniz, recording_sleep):
    """The document call is rate limited like the others: 429 + X-RateLimit-Reset, then the document."""
    policy_no = issued_policy_no(run)
    deniz.state.add_faults([{"operation": "policy_document", "fault": "throttle", "wait_seconds": 1}])
    outcome = run("policy_document", {"policy_no": policy_no}, sleep=recording_sleep)
    assert outcome.ok, outcome.to_json()
    throttled = Attempt.objects.filter(operation="policy_document").order_by("started_at", "id").first()
    assert (throttled.error_kind, throttled.wait_reason) == ("throttled", "signal:X-RateLimit-Reset")
