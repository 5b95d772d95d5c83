"""Çınar Sigorta adapter against the Çınar sandbox over loopback HTTP (no mocks of the insurer)."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from email.utils import parsedate_to_datetime
from typing import Any

import pytest

from integrations.answers.results import Address, Document, Policy, PolicyStatus, Quote
from integrations.answers.taxonomy import ErrorClass, ErrorKind, plain_message
from integrations.attempts.recording import BufferedRecorder
from integrations.calling.calls import insurer_operation_run, new_reference
from integrations.calling.channel import CallContext, Channel
from integrations.insurers.cinar import adapter as cinar
from integrations.models import Attempt, Insurer, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from sandbox import domain
from sandbox.insurers.cinar import Cinar
from tests import samples

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(sandbox: dict):
    """The Çınar sandbox; tokens cached by earlier tests died with the sandbox reset."""
    cinar.clear_token_cache()
    yield sandbox["cinar"]
    cinar.clear_token_cache()


@pytest.fixture
def run(endpoint_for, server):
    def run_(operation: str, data: dict[str, Any], *, reference: str = "", sleep=None, endpoint=None):
        return insurer_operation_run(
            endpoint=endpoint or endpoint_for("cinar"),
            operation=operation,
            data=data,
            reference=reference,
            sleep=sleep,
        )

    return run_


@pytest.fixture
def short_issue_policy(seeded_accounts):
    """Issuance tries quickly: a dropped answer is a read timeout after 1 s, retried within 0.5 s."""
    OperationPolicy.objects.create(
        insurer=Insurer.objects.get(code="cinar"),
        operation="issue_policy",
        attempt_timeout=1.0,
        deadline=20,
        base_delay=0.1,
        max_delay=0.5,
        max_attempts=5,
    )
    clear_policy_cache()
    yield
    clear_policy_cache()


def quote_no(run, operation: str = "trafik_quote", data: dict[str, Any] | None = None) -> str:
    outcome = run(operation, data or samples.TRAFIK)
    assert outcome.ok, outcome.to_json()
    return outcome.result.quote_no


def issue(run, quote: str, *, reference: str | None = None):
    data = {"quote_no": quote, "payment_token": samples.PAYMENT_TOKEN}
    return run("issue_policy", data, reference=reference or new_reference())


def dask_risk(run) -> dict[str, Any]:
    address = run("dask_address", samples.DASK_ADDRESS).result
    return {"uavt_code": address.uavt_code, "building_id": address.building_id, **samples.DASK_RISK}


def cinar_attempts():
    return Attempt.objects.filter(insurer_code="cinar").order_by("started_at", "id")


def assert_calls_match_attempts(server) -> None:
    assert server.state.counts()["total_received"] == cinar_attempts().count()


def ledger_period(server, policy_no: str) -> tuple[date, date]:
    """The period the insurer holds for a policy (what it wrote on the wire as DD.MM.YYYY)."""
    policy = server.state.ledger.policies[policy_no]
    return policy.starts_on, policy.ends_on


# --- happy paths -------------------------------------------------------------------------------


def test_trafik_quote_is_normalised(run, server):
    """A trafik quote comes back with a Decimal premium and an aware UTC validity."""
    outcome = run("trafik_quote", samples.TRAFIK)

    assert outcome.ok, outcome.to_json()
    quote = outcome.result
    assert isinstance(quote, Quote)
    assert quote.quote_no.startswith("CN-")
    assert isinstance(quote.premium, Decimal) and quote.premium > 0
    assert quote.currency == "TRY"
    assert quote.valid_until.utcoffset().total_seconds() == 0 and quote.valid_until > datetime.now(UTC)
    assert outcome.attempts == 1
    assert server.state.counts()["received"] == {"token": 1, "trafik_quote": 1}


def test_kasko_quote_keeps_coverages(run):
    """A kasko quote carries Çınar's `teminatlar` as the coverages detail."""
    outcome = run("kasko_quote", samples.KASKO)

    assert outcome.ok, outcome.to_json()
    assert isinstance(outcome.result.premium, Decimal)
    assert outcome.result.details["coverages"]


# --- quote and issuance terms (CONTRACTS.md, "Policy start", "Installments", "Kasko options") ----


def test_kasko_options_are_sent_in_cinars_words_and_the_priced_covers_read_back(run):
    """`muafiyet`, `ikame_gun`, `imm_limit` (null: unlimited), `servis_turu` `yetkili`; IMM,
    IKAME_ARAC (with `gun`) and MUAFIYET come back in the platform's vocabulary."""
    plain = run("kasko_quote", samples.KASKO)
    options = {"deductible": "10000", "replacement_car_days": 7, "liability_limit": None, "repair_shop": "authorized"}
    chosen = run("kasko_quote", {**samples.KASKO, **options})
    assert chosen.ok, chosen.to_json()
    assert chosen.result.premium != plain.result.premium
    assert chosen.result.details["coverages"][5:] == [
        {"code": "liability", "name": "İhtiyari mali mesuliyet (İMM)", "limit": None},
        {"code": "replacement_car", "name": "İkame araç", "limit": None, "days": 7},
        {"code": "deductible", "name": "Muafiyet", "limit": "10000.00"},
    ]


def test_an_unsold_replacement_car_is_a_field_error_naming_it(run):
    """Çınar has no 15-day replacement car: VAL_IKAME_GUN is `replacement_car_days`, in Turkish."""
    outcome = run("kasko_quote", {**samples.KASKO, "replacement_car_days": 15})
    assert (outcome.error.provider_code, outcome.error.field, outcome.attempts) == (
        "VAL_IKAME_GUN",
        "replacement_car_days",
        1,
    )
    assert plain_message(outcome.error) == (
        "Şirket seçilen ikame araç gün sayısı seçeneğini satmıyor. Başka bir seçenekle teklifi yeniden çalışın."
    )


def test_start_goes_day_month_year_and_installments_reach_the_policy(run, server):
    """An ISO start of ours is Çınar's `01.12.2026` (an ISO one it refuses); the count is recorded."""
    starts_on = domain.today_in_turkiye(time.time()) + timedelta(days=30)
    quote = quote_no(run, data={**samples.TRAFIK, "starts_on": starts_on.isoformat()})
    data = {"quote_no": quote, "payment_token": samples.PAYMENT_TOKEN, "installments": 9}
    issued = run("issue_policy", data, reference=new_reference())
    assert issued.ok, issued.to_json()
    assert (issued.result.starts_on, issued.result.ends_on) == (starts_on, domain.one_year_after(starts_on))
    assert server.state.ledger.policies[issued.result.policy_no].installments == 9


def test_a_count_not_offered_is_val_taksit_on_installments(run, server):
    data = {"quote_no": quote_no(run), "payment_token": samples.PAYMENT_TOKEN, "installments": 2}
    refused = run("issue_policy", data, reference=new_reference())
    assert (refused.error.provider_code, refused.error.field) == ("VAL_TAKSIT", "installments")
    assert "taksit sayısı" in plain_message(refused.error)
    assert server.state.counts()["issued_total"] == 0


def test_dask_address_maps_building_id(run):
    """The address check returns Çınar's own building number for the UAVT code."""
    from sandbox import building_id_for

    outcome = run("dask_address", samples.DASK_ADDRESS)

    assert outcome.ok, outcome.to_json()
    assert isinstance(outcome.result, Address)
    assert outcome.result.uavt_code == samples.DASK_ADDRESS["uavt_code"]
    assert outcome.result.building_id == building_id_for("cinar", samples.DASK_ADDRESS["uavt_code"])
    assert outcome.result.address


def test_dask_quote_keeps_sum_insured(run):
    """A DASK quote for a checked address carries the sum insured."""
    outcome = run("dask_quote", dask_risk(run))

    assert outcome.ok, outcome.to_json()
    assert isinstance(outcome.result.premium, Decimal)
    assert outcome.result.details["sum_insured"]
    assert outcome.result.valid_until.tzinfo is not None


def test_issue_policy_sends_reference_and_maps_status(run, server):
    """Issuance answers an ACTIVE policy, the one the insurer holds for that quote."""
    quote = quote_no(run)

    outcome = run(
        "issue_policy", {"quote_no": quote, "payment_token": samples.PAYMENT_TOKEN}, reference=new_reference()
    )

    assert outcome.ok, outcome.to_json()
    policy_no = outcome.result.policy_no
    assert outcome.result == Policy(policy_no, PolicyStatus.ACTIVE, *ledger_period(server, policy_no))
    assert server.state.counts()["policies_by_quote"][quote] == [policy_no]


@pytest.mark.parametrize("status", list(PolicyStatus))
def test_policy_status_maps_turkish_states(run, server, status):
    """AKTIF, IPTAL and BITTI read as ACTIVE, CANCELLED and EXPIRED."""
    server.state.seed_policies(
        [{"policy_no": "CN-P-777001", "status": status.value, "starts_on": "2026-03-01", "ends_on": "2027-03-01"}]
    )

    outcome = run("policy_status", {"policy_no": "CN-P-777001"})

    assert outcome.ok, outcome.to_json()
    assert outcome.result == Policy("CN-P-777001", status, date(2026, 3, 1), date(2027, 3, 1))


# --- tokens ------------------------------------------------------------------------------------


def test_token_is_fetched_once_and_reused(run, server):
    """One token serves every call of a client until it nears expiry."""
    run("trafik_quote", samples.TRAFIK)
    run("dask_address", samples.DASK_ADDRESS)

    assert server.state.counts()["received"]["token"] == 1
    assert list(cinar_attempts().values_list("call", flat=True)) == ["token", "main", "main"]


def test_token_is_renewed_before_it_expires(run, server):
    """A token is dropped just before its expiry, so no call goes out with a dead token."""
    server.state.configure(token_ttl_seconds=2)
    assert run("trafik_quote", samples.TRAFIK).ok
    time.sleep(1.85)  # inside Çınar's 2 s, past the margin kept before it

    assert run("trafik_quote", samples.TRAFIK).ok

    assert server.state.counts()["received"] == {"token": 2, "trafik_quote": 2}
    assert not cinar_attempts().filter(provider_code="AUTH_TOKEN_EXPIRED").exists()


def test_token_expired_mid_run_is_renewed_and_resent_once_without_a_retry(run, server):
    """AUTH_TOKEN_EXPIRED: new token, same call again inside one engine attempt."""
    run("trafik_quote", samples.TRAFIK)  # a cached token the insurer will now call expired
    server.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "AUTH_TOKEN_EXPIRED"}])

    outcome = run("trafik_quote", samples.TRAFIK)

    assert outcome.ok, outcome.to_json()
    assert outcome.attempts == 1
    assert server.state.counts()["received"] == {"token": 2, "trafik_quote": 3}
    last_run = list(cinar_attempts().values_list("call", "provider_code", "attempt_no"))[2:]
    assert last_run == [("main", "AUTH_TOKEN_EXPIRED", 1), ("token", "", 1), ("main", "", 1)]
    assert_calls_match_attempts(server)


def test_token_expired_twice_is_a_permanent_auth_failure(run, server):
    """A fresh token refused as expired too is not renewed again: auth, permanent, one attempt."""
    server.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "AUTH_TOKEN_EXPIRED", "times": 5}])

    outcome = run("trafik_quote", samples.TRAFIK)

    assert outcome.error.kind is ErrorKind.AUTH and outcome.error.provider_code == "AUTH_TOKEN_EXPIRED"
    assert outcome.attempts == 1
    assert server.state.counts()["received"] == {"token": 2, "trafik_quote": 2}
    assert_calls_match_attempts(server)


def test_wrong_client_secret_fails_at_the_token_call(run, server, endpoint_for):
    """Bad credentials: the token call's AUTH_INVALID_CLIENT is the operation's failure, sent once."""
    endpoint = replace(endpoint_for("cinar"), credentials={"client_id": "acente1", "client_secret": "wrong"})

    outcome = run("trafik_quote", samples.TRAFIK, endpoint=endpoint)

    assert (outcome.error.error_class, outcome.error.kind) == (ErrorClass.PERMANENT, ErrorKind.AUTH)
    assert outcome.error.provider_code == "AUTH_INVALID_CLIENT"
    assert outcome.attempts == 1
    assert server.state.counts()["received"] == {"token": 1}
    assert list(cinar_attempts().values_list("call", flat=True)) == ["token"]


def test_throttled_token_call_waits_and_the_operation_succeeds(run, server, recording_sleep):
    """A gateway throttle on the token endpoint is honoured like any other throttle."""
    server.state.add_faults([{"operation": "token", "fault": "throttle", "wait_seconds": 1}])

    outcome = run("trafik_quote", samples.TRAFIK, sleep=recording_sleep)

    assert outcome.ok, outcome.to_json()
    assert recording_sleep.waits and recording_sleep.waits[0] >= 0.9
    first = cinar_attempts().first()
    assert (first.call, first.provider_code, first.error_kind) == ("token", "503", "throttled")
    assert first.wait_reason == "signal:Retry-After"
    assert_calls_match_attempts(server)


def test_concurrent_threads_share_one_token_fetch(server, endpoint_for):
    """Workers run calls in threads: the first calls of one client wait for a single token fetch."""
    endpoint = endpoint_for("cinar")
    results: list[Any] = []

    def quote() -> None:
        channel = Channel(
            base_url=endpoint.base_url,
            context=CallContext(insurer_code="cinar", operation="trafik_quote"),
            recorder=BufferedRecorder(),
            error_table=cinar.ERROR_TABLE,
        )
        results.append(
            cinar.CinarAdapter(channel=channel, credentials=endpoint.credentials).trafik_quote(samples.TRAFIK)
        )

    threads = [threading.Thread(target=quote) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)

    assert len(results) == 8
    assert server.state.counts()["received"] == {"token": 1, "trafik_quote": 8}


# --- error table -------------------------------------------------------------------------------

ERROR_CASES = [
    # code, class, kind, attempts (trafik: 3 tries at most; unknown codes: 2)
    ("VAL_PLAKA", ErrorClass.PERMANENT, ErrorKind.VALIDATION, 1),
    ("VAL_KIMLIK", ErrorClass.PERMANENT, ErrorKind.VALIDATION, 1),
    ("AUTH_INVALID_CLIENT", ErrorClass.PERMANENT, ErrorKind.AUTH, 1),
    ("BIZ_NOT_ELIGIBLE", ErrorClass.PERMANENT, ErrorKind.BUSINESS_REJECT, 1),
    ("BIZ_RISK_DECLINED", ErrorClass.PERMANENT, ErrorKind.BUSINESS_REJECT, 1),
    ("BIZ_QUOTE_EXPIRED", ErrorClass.PERMANENT, ErrorKind.EXPIRED, 1),
    ("SYS_BUSY", ErrorClass.RETRYABLE, ErrorKind.UNAVAILABLE, 3),
    ("SYS_MAINTENANCE", ErrorClass.RETRYABLE, ErrorKind.UNAVAILABLE, 3),
    ("ZZ-999", ErrorClass.UNKNOWN, ErrorKind.UNCLASSIFIED, 2),
]


@pytest.mark.parametrize(("code", "error_class", "kind", "attempts"), ERROR_CASES)
def test_error_code_is_classified(run, server, code, error_class, kind, attempts):
    """Every errorCode of Çınar's table maps to its class and kind, and is tried as its class allows."""
    server.state.add_faults(
        [{"operation": "trafik_quote", "fault": "error", "code": code, "times": 10, "wait_seconds": 0.2}]
    )

    outcome = run("trafik_quote", samples.TRAFIK)

    assert outcome.error is not None
    assert (outcome.error.error_class, outcome.error.kind, outcome.error.provider_code) == (error_class, kind, code)
    assert outcome.attempts == attempts
    assert server.state.counts()["received"]["trafik_quote"] == attempts
    assert_calls_match_attempts(server)


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("BIZ_NOT_ELIGIBLE", "Araç teminata uygun değil"),
        ("BIZ_RISK_DECLINED", "Risk kabul edilmedi"),
        ("BIZ_QUOTE_EXPIRED", "Teklifin süresi dolmuş"),
    ],
)
def test_business_refusal_shows_turkish_message(run, server, code, message):
    """An agent reads a business refusal in Turkish."""
    server.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": code, "reason": "raw text"}])

    outcome = run("trafik_quote", samples.TRAFIK)

    assert outcome.error.agent_message() == message


def test_real_validation_error_is_permanent(run):
    """A plate Çınar rejects itself (VAL_PLAKA) is a validation failure, sent once."""
    outcome = run("trafik_quote", {**samples.TRAFIK, "plate": "99XYZ1"})

    assert outcome.error.kind is ErrorKind.VALIDATION
    assert outcome.error.provider_code == "VAL_PLAKA"
    assert outcome.attempts == 1


def test_maintenance_waits_retry_after_seconds(run, server, recording_sleep):
    """SYS_MAINTENANCE: the wait chosen is at least data.retry_after_seconds, logged as the signal."""
    server.state.add_faults(
        [{"operation": "trafik_quote", "fault": "error", "code": "SYS_MAINTENANCE", "wait_seconds": 1}]
    )

    outcome = run("trafik_quote", samples.TRAFIK, sleep=recording_sleep)

    assert outcome.ok, outcome.to_json()
    assert outcome.attempts == 2
    assert recording_sleep.waits[0] >= 1.0
    failed = cinar_attempts().get(ok=False)
    assert (failed.provider_code, failed.wait_reason) == ("SYS_MAINTENANCE", "signal:retry_after_seconds")
    assert failed.wait_seconds >= 1.0
    assert_calls_match_attempts(server)


# --- gateway -----------------------------------------------------------------------------------


def test_gateway_503_throttle_waits_until_the_retry_after_date(run, server, recording_sleep, monkeypatch):
    """503 + Retry-After as an HTTP-date: the wait is at least the date's distance, and the retry goes after it."""
    seen: list[tuple[str, float]] = []
    real_hint = cinar.hint_from_retry_after

    def spy(value, **kwargs):
        hint = real_hint(value, **kwargs)
        seen.append((value, hint.seconds))
        return hint

    monkeypatch.setattr(cinar, "hint_from_retry_after", spy)
    server.state.add_faults([{"operation": "trafik_quote", "fault": "throttle", "wait_seconds": 1}])

    outcome = run("trafik_quote", samples.TRAFIK, sleep=recording_sleep)

    assert outcome.ok, outcome.to_json()
    assert outcome.attempts == 2
    ((header, distance),) = seen
    retry_at = parsedate_to_datetime(header)
    assert distance >= 0.5
    assert recording_sleep.waits[0] >= distance
    throttled, retried = cinar_attempts().filter(call="main")
    assert (throttled.provider_code, throttled.error_kind, throttled.http_status) == ("503", "throttled", 503)
    assert throttled.wait_reason == "signal:Retry-After"
    assert throttled.wait_seconds >= distance
    assert retried.started_at >= retry_at
    assert server.state.counts()["throttled"] == {"trafik_quote": 1}
    assert_calls_match_attempts(server)


def test_gateway_503_without_retry_after_is_unavailable(run, server):
    """A 503 page with no Retry-After is the backend being down, not a throttle."""
    server.state.add_faults([{"operation": "trafik_quote", "fault": "html", "http_status": 503, "times": 10}])

    outcome = run("trafik_quote", samples.TRAFIK)

    assert (outcome.error.kind, outcome.error.provider_code) == (ErrorKind.UNAVAILABLE, "503")
    assert outcome.attempts == 3
    assert set(cinar_attempts().filter(ok=False).values_list("wait_reason", flat=True)) <= {"backoff:full-jitter", ""}


@pytest.mark.parametrize("status", [502, 504])
def test_gateway_html_page_is_unavailable_and_retried(run, server, status):
    """502/504 with an HTML body: unavailable, retried, then successful."""
    server.state.add_faults([{"operation": "trafik_quote", "fault": "html", "http_status": status}])

    outcome = run("trafik_quote", samples.TRAFIK)

    assert outcome.ok, outcome.to_json()
    assert outcome.attempts == 2
    failed = cinar_attempts().get(ok=False)
    assert (failed.provider_code, failed.error_kind, failed.http_status) == (str(status), "unavailable", status)
    assert_calls_match_attempts(server)


def test_truncated_body_is_unclassified(run, server):
    """A cut-off JSON answer is an unknown failure, retried under the low cap."""
    server.state.add_faults([{"operation": "trafik_quote", "fault": "garbage", "times": 10}])

    outcome = run("trafik_quote", samples.TRAFIK)

    assert (outcome.error.kind, outcome.error.provider_code) == (ErrorKind.UNCLASSIFIED, "MALFORMED_BODY")
    assert outcome.attempts == 2


def test_calls_received_equal_attempts_recorded_across_faults(run, server):
    """Token calls, renewals, gateway pages and retries: every call the insurer saw has one row."""
    server.state.add_faults(
        [
            {"operation": "token", "fault": "html", "http_status": 502},
            {"operation": "trafik_quote", "fault": "error", "code": "AUTH_TOKEN_EXPIRED"},
            {"operation": "trafik_quote", "fault": "error", "code": "SYS_BUSY"},
            {"operation": "kasko_quote", "fault": "reset"},
        ]
    )

    assert run("trafik_quote", samples.TRAFIK).ok
    assert run("kasko_quote", samples.KASKO).ok
    assert run("dask_address", samples.DASK_ADDRESS).ok

    assert server.state.counts()["received"]["token"] == 3
    assert_calls_match_attempts(server)


# --- issuance ----------------------------------------------------------------------------------


def test_reissue_with_same_request_ref_returns_the_first_policy(run, server):
    """Re-sending with a used request_ref is answered BIZ_DUPLICATE_REQUEST: a success, no new policy."""
    quote = quote_no(run)
    data = {"quote_no": quote, "payment_token": samples.PAYMENT_TOKEN}
    reference = new_reference()
    first = run("issue_policy", data, reference=reference)

    again = run("issue_policy", data, reference=reference)

    assert again.ok, again.to_json()
    assert (
        again.result
        == first.result
        == Policy(first.result.policy_no, PolicyStatus.ACTIVE, *ledger_period(server, first.result.policy_no))
    )
    assert server.state.counts()["policies_by_quote"][quote] == [first.result.policy_no]
    assert cinar_attempts().filter(operation="issue_policy", ok=True).count() == 2


def test_duplicate_request_answer_is_the_issued_policy(run, server):
    """A BIZ_DUPLICATE_REQUEST answer on the first send still names the policy and is not raised."""
    quote = quote_no(run)
    server.state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "BIZ_DUPLICATE_REQUEST"}])

    outcome = run(
        "issue_policy", {"quote_no": quote, "payment_token": samples.PAYMENT_TOKEN}, reference=new_reference()
    )

    assert outcome.ok, outcome.to_json()
    assert outcome.attempts == 1
    assert server.state.counts()["policies_by_quote"][quote] == [outcome.result.policy_no]
    assert (outcome.result.starts_on, outcome.result.ends_on) == ledger_period(server, outcome.result.policy_no)


@pytest.mark.parametrize("drop", ["reset", "hang"])
def test_commit_then_drop_yields_exactly_one_policy(run, server, short_issue_policy, drop):
    """The answer to a committed issuance is lost: the re-send with the same request_ref finds it, no double."""
    quote = quote_no(run)
    server.state.add_faults([{"operation": "issue_policy", "fault": "commit_then_drop", "drop": drop, "seconds": 2}])

    outcome = run(
        "issue_policy", {"quote_no": quote, "payment_token": samples.PAYMENT_TOKEN}, reference=new_reference()
    )

    assert outcome.ok, outcome.to_json()
    assert outcome.attempts == 2
    counts = server.state.counts()
    assert counts["policies_by_quote"][quote] == [outcome.result.policy_no]
    assert counts["issued_total"] == 1
    lost = cinar_attempts().filter(operation="issue_policy", ok=False).get()
    assert lost.ambiguous
    assert lost.provider_code == ("CONNECTION_RESET" if drop == "reset" else "READ_TIMEOUT")
    assert_calls_match_attempts(server)


def test_issuance_refusal_creates_no_policy(run, server):
    """A declined card is a business refusal: one attempt, no policy."""
    quote = quote_no(run)

    outcome = run("issue_policy", {"quote_no": quote, "payment_token": "tok_declined"}, reference=new_reference())

    assert (outcome.error.kind, outcome.error.provider_code) == (ErrorKind.BUSINESS_REJECT, "BIZ_RISK_DECLINED")
    assert outcome.attempts == 1
    assert server.state.counts()["issued_total"] == 0


def test_token_answer_without_success_flag_is_read():
    """The contract's token answer is the bare `{access_token, expires_in}` object; the sandbox adds `success`."""
    from requests.structures import CaseInsensitiveDict

    from integrations.calling.channel import Reply

    reply = Reply(
        200, CaseInsensitiveDict({"Content-Type": "application/json"}), b'{"access_token": "t", "expires_in": 300}'
    )

    assert cinar._read_token(reply) == ("t", 300.0)


# --- policy periods ----------------------------------------------------------------------------


def test_policy_period_day_month_year_is_iso_on_the_result(run, server):
    """Çınar's "01.12.2026" reaches the platform as a date, ISO in the result's JSON."""
    policy_no = issue(run, quote_no(run)).result.policy_no
    starts_on, ends_on = ledger_period(server, policy_no)

    outcome = run("policy_status", {"policy_no": policy_no})

    assert outcome.ok, outcome.to_json()
    assert (outcome.result.starts_on, outcome.result.ends_on) == (starts_on, ends_on)
    assert outcome.result.to_json()["starts_on"] == starts_on.isoformat()
    assert outcome.result.to_json()["ends_on"] == ends_on.isoformat()
    assert ends_on.year == starts_on.year + 1


# --- coverages and installments -----------------------------------------------------------------


def test_trafik_quote_coverages_are_the_legal_limits(run):
    """SAKATLANMA_OLUM, TEDAVI, MADDI_HASAR: the platform's codes, names and decimal limits."""
    outcome = run("trafik_quote", samples.TRAFIK)

    assert outcome.ok, outcome.to_json()
    assert outcome.result.details["coverages"] == [
        {"code": "bodily_injury", "name": "Kişi başı sakatlanma ve ölüm", "limit": "2700000.00"},
        {"code": "medical", "name": "Kişi başı tedavi masrafları", "limit": "2700000.00"},
        {"code": "property_damage", "name": "Araç başı maddi hasar", "limit": "300000.00"},
    ]


def test_kasko_quote_coverages_keep_limits_and_unlimited_glass(run):
    """Kasko covers map onto the platform vocabulary; CAM's null limit stays None (unlimited)."""
    outcome = run("kasko_quote", samples.KASKO)

    assert outcome.ok, outcome.to_json()
    coverages = outcome.result.details["coverages"]
    assert [c["code"] for c in coverages] == ["collision", "theft", "fire", "natural_disaster", "glass"]
    assert coverages[-1]["limit"] is None
    assert all(Decimal(c["limit"]) > 0 for c in coverages[:-1])
    assert coverages[0]["name"] == "Çarpışma"


def test_dask_quote_earthquake_cover_is_the_sum_insured(run):
    outcome = run("dask_quote", dask_risk(run))

    assert outcome.ok, outcome.to_json()
    (cover,) = outcome.result.details["coverages"]
    assert cover["code"] == "earthquake"
    assert cover["limit"] == outcome.result.details["sum_insured"]


def test_bare_coverage_codes_of_older_answers_are_read(run, server):
    """`"teminatlar": ["CARPISMA", ...]`: the same covers, without limits."""
    server.state.add_faults([{"operation": "kasko_quote", "fault": "coverages_bare"}])

    outcome = run("kasko_quote", samples.KASKO)

    assert outcome.ok, outcome.to_json()
    coverages = outcome.result.details["coverages"]
    assert [c["code"] for c in coverages] == ["collision", "theft", "fire", "natural_disaster", "glass"]
    assert {c["limit"] for c in coverages} == {None}
    assert all(c["name"] for c in coverages)


def test_malformed_coverage_entries_are_skipped_not_the_quote(run, server, caplog):
    """Entries without a code or with a limit that is no amount are dropped with a warning."""
    good = run("kasko_quote", samples.KASKO).result.details["coverages"]
    server.state.add_faults([{"operation": "kasko_quote", "fault": "coverage_malformed"}])

    with caplog.at_level(logging.WARNING, logger="integrations.insurers.cinar.adapter"):
        outcome = run("kasko_quote", samples.KASKO)

    assert outcome.ok, outcome.to_json()
    assert outcome.result.details["coverages"] == good
    assert sum("teminatlar" in record.getMessage() for record in caplog.records) == 4


def test_installments_are_read(run):
    """`taksitler` becomes `installments`: count and the whole premium paid in that many parts."""
    outcome = run("trafik_quote", samples.TRAFIK)

    assert outcome.ok, outcome.to_json()
    installments = outcome.result.details["installments"]
    assert installments[0] == {"count": 1, "total": str(outcome.result.premium)}
    assert [plan["count"] for plan in installments] == [1, 3, 6, 9]
    assert all(Decimal(plan["total"]) >= outcome.result.premium for plan in installments)


def test_malformed_installments_are_skipped_not_the_quote(run, server, caplog):
    good = run("trafik_quote", samples.TRAFIK).result.details["installments"]
    server.state.add_faults([{"operation": "trafik_quote", "fault": "installment_malformed"}])

    with caplog.at_level(logging.WARNING, logger="integrations.insurers.cinar.adapter"):
        outcome = run("trafik_quote", samples.TRAFIK)

    assert outcome.ok, outcome.to_json()
    assert outcome.result.details["installments"] == good
    assert sum("taksitler" in record.getMessage() for record in caplog.records) == 4


# --- policy documents --------------------------------------------------------------------------


def issued_policy_no(run) -> str:
    outcome = issue(run, quote_no(run))
    assert outcome.ok, outcome.to_json()
    return outcome.result.policy_no


def expected_pdf_sha256(server, policy_no: str) -> str:
    return hashlib.sha256(
        domain.policy_pdf(Cinar.document_name, policy_no, *ledger_period(server, policy_no))
    ).hexdigest()


def test_policy_document_is_the_insurers_pdf(run, server):
    """police-pdf's base64 decodes to the very PDF the insurer printed (same SHA-256)."""
    policy_no = issued_policy_no(run)

    outcome = run("policy_document", {"policy_no": policy_no})

    assert outcome.ok, outcome.to_json()
    document = outcome.result
    assert isinstance(document, Document)
    assert (document.policy_no, document.content_type) == (policy_no, "application/pdf")
    assert document.sha256 == expected_pdf_sha256(server, policy_no)
    assert outcome.attempts == 1
    assert server.state.counts()["received"]["policy_document"] == 1
    assert_calls_match_attempts(server)


def test_document_not_ready_waits_retry_after_seconds_then_succeeds(run, server, recording_sleep):
    """DOC_NOT_READY: the engine waits at least data.retry_after_seconds; a wait, not a failure."""
    server.state.configure(document_delay_seconds=1.2)  # Çınar says 2 (whole seconds, rounded up)
    policy_no = issued_policy_no(run)

    outcome = run("policy_document", {"policy_no": policy_no}, sleep=recording_sleep)

    assert outcome.ok, outcome.to_json()
    assert outcome.result.sha256 == expected_pdf_sha256(server, policy_no)
    assert recording_sleep.waits and recording_sleep.waits[0] >= 2.0
    waited, fetched = cinar_attempts().filter(operation="policy_document")
    assert (waited.ok, waited.provider_code, waited.error_kind) == (False, "DOC_NOT_READY", "not_ready")
    assert (waited.wait_reason, waited.wait_seconds >= 2.0) == ("signal:retry_after_seconds", True)
    assert fetched.ok
    assert_calls_match_attempts(server)


def test_document_not_ready_does_not_use_up_the_tries(run, server):
    """More "not ready yet" answers than the operation has tries: still a success in the end."""
    policy_no = issued_policy_no(run)
    server.state.add_faults(
        [
            {
                "operation": "policy_document",
                "fault": "error",
                "code": "DOC_NOT_READY",
                "times": 5,
                "wait_seconds": 0.1,
            }
        ]
    )

    outcome = run("policy_document", {"policy_no": policy_no})

    assert outcome.ok, outcome.to_json()
    assert outcome.error is None
    assert server.state.counts()["received"]["policy_document"] == 6
    not_ready = cinar_attempts().filter(operation="policy_document", ok=False)
    assert set(not_ready.values_list("error_kind", flat=True)) == {"not_ready"}
    assert not_ready.count() == 5


def test_document_of_an_unknown_policy_is_permanent_not_found(run, server):
    """BIZ_POLICY_NOT_FOUND: not_found, permanent, asked once."""
    outcome = run("policy_document", {"policy_no": "CN-P-999999"})

    assert (outcome.error.error_class, outcome.error.kind) == (ErrorClass.PERMANENT, ErrorKind.NOT_FOUND)
    assert outcome.error.provider_code == "BIZ_POLICY_NOT_FOUND"
    assert outcome.attempts == 1
    assert server.state.counts()["received"]["policy_document"] == 1


@pytest.mark.parametrize("fault", ["document_not_base64", "document_not_pdf"])
def test_unreadable_document_is_unknown(run, server, fault):
    """pdf_base64 that is not base64, or not a PDF once decoded: an unreadable answer, unknown."""
    policy_no = issued_policy_no(run)
    server.state.add_faults([{"operation": "policy_document", "fault": fault, "times": 10}])

    outcome = run("policy_document", {"policy_no": policy_no})

    assert (outcome.error.error_class, outcome.error.kind) == (ErrorClass.UNKNOWN, ErrorKind.UNCLASSIFIED)
    assert outcome.error.provider_code == "MALFORMED_RESPONSE"
    assert outcome.attempts == 2
    assert_calls_match_attempts(server)


def test_document_call_renews_an_expired_token_once(run, server):
    """AUTH_TOKEN_EXPIRED on police-pdf: new token, same call, one engine attempt."""
    policy_no = issued_policy_no(run)
    server.state.add_faults([{"operation": "policy_document", "fault": "error", "code": "AUTH_TOKEN_EXPIRED"}])

    outcome = run("policy_document", {"policy_no": policy_no})

    assert outcome.ok, outcome.to_json()
    assert outcome.attempts == 1
    assert server.state.counts()["received"]["token"] == 2
