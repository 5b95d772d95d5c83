"""Deniz Sigorta adapter against the Deniz sandbox: REST/JSON, HTTP Basic, asynchronous issuance."""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC
from decimal import Decimal

import pytest

from integrations.models import Attempt, Insurer, OperationPolicy
from integrations.policies import clear_policy_cache
from integrations.results import Address, Policy, PolicyStatus, Quote
from integrations.services.calls import insurer_operation_run, new_reference
from integrations.taxonomy import ErrorClass, ErrorKind
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
    deniz.state.seed_policies([{"policy_no": "DZ-P-990001", "status": stored}])
    outcome = run("policy_status", {"policy_no": "DZ-P-990001"})
    assert outcome.ok, outcome.to_json()
    assert outcome.result == Policy(policy_no="DZ-P-990001", status=expected)


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
    from integrations.channel import _session

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
    resumed = run("issue_policy", issue_data(quote_no), reference=reference, resume_issuance=True)
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
