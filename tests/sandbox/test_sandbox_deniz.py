"""Deniz sandbox: REST/JSON behind HTTP Basic, asynchronous issuance, 429 + X-RateLimit-Reset."""

from __future__ import annotations

import hashlib
import math
import time
from datetime import date
from decimal import Decimal

import pytest
import requests

from sandbox import domain
from sandbox.insurers.deniz import Deniz

from .sandbox_wire import KASKO, TRAFIK, UAVT, YEAR, DenizClient, dask


def test_every_operation_answers_as_the_contract_says(deniz: DenizClient) -> None:
    """Three quote products on one URL, the address, 202 issuance, polling, lookup and status."""
    trafik = deniz.trafik_quote()
    assert trafik.status_code == 200
    body = trafik.json()
    assert body["quote_id"].startswith("DZ-T-") and body["expires_at"].endswith("Z")
    assert body["gross_premium"]["currency"] == "TRY" and len(body["gross_premium"]["amount"].split(".")[1]) == 2
    assert deniz.quote("KASKO", KASKO).json()["quote_id"].startswith("DZ-K-")
    address = deniz.request("GET", f"/addresses/{UAVT}").json()
    assert address["uavt_code"] == UAVT and address["line"] and address["building_ref"]
    dask_quote = deniz.quote("DASK", {**dask("deniz"), "building_id": address["building_ref"]})
    assert dask_quote.status_code == 200 and dask_quote.json()["quote_id"].startswith("DZ-D-"), dask_quote.text

    accepted = deniz.issue(body["quote_id"], ref="ref-a")
    assert accepted.status_code == 202
    request_id = accepted.json()["request_id"]
    assert accepted.json() == {"request_id": request_id, "status": "PROCESSING"}
    assert deniz.request("GET", f"/policy-requests/{request_id}").json() == {
        "request_id": request_id,
        "status": "PROCESSING",
    }
    issued = deniz.wait_for(request_id)
    assert issued["status"] == "ISSUED" and issued["policy_no"].startswith("DZ-P-")
    found = deniz.request("GET", "/policy-requests", params={"client_reference": "ref-a"}).json()
    assert found == {"items": [issued]}
    status = deniz.request("GET", f"/policies/{issued['policy_no']}").json()
    assert status == {"policy_no": issued["policy_no"], "state": "IN_FORCE", "period": issued["period"]}


def test_the_policy_is_counted_once_whatever_the_polling(deniz: DenizClient) -> None:
    accepted = deniz.issue(deniz.quote_no()).json()
    for _ in range(3):
        deniz.wait_for(accepted["request_id"])
    assert deniz.server.state.counts()["issued_total"] == 1


def test_processing_lasts_issuance_processing_seconds(deniz: DenizClient) -> None:
    deniz.server.state.configure(issuance_processing_seconds=0.3)
    request_id = deniz.issue(deniz.quote_no()).json()["request_id"]
    time.sleep(0.15)
    assert deniz.request("GET", f"/policy-requests/{request_id}").json()["status"] == "PROCESSING"
    time.sleep(0.2)
    assert deniz.request("GET", f"/policy-requests/{request_id}").json()["status"] == "ISSUED"


def test_repeated_client_reference_is_409_with_the_earlier_request(deniz: DenizClient) -> None:
    quote_no = deniz.quote_no()
    first = deniz.issue(quote_no, ref="same").json()
    again = deniz.issue(quote_no, ref="same")
    assert again.status_code == 409
    assert again.json()["code"] == "DUPLICATE_REFERENCE" and again.json()["request_id"] == first["request_id"]
    assert deniz.server.state.counts()["issued_total"] == 1


def test_lookup_of_an_unused_reference_is_empty(deniz: DenizClient) -> None:
    assert deniz.request("GET", "/policy-requests", params={"client_reference": "nothing"}).json() == {"items": []}
    missing = deniz.request("GET", "/policy-requests")
    assert missing.status_code == 400 and missing.json()["code"] == "INVALID_REQUEST"


def test_declined_card_turns_rejected_with_a_reason(deniz: DenizClient) -> None:
    request_id = deniz.issue(deniz.quote_no(), card="tok_declined").json()["request_id"]
    result = deniz.wait_for(request_id)
    assert result["status"] == "REJECTED" and result["reason"] and "policy_no" not in result
    assert deniz.server.state.counts()["issued_total"] == 0


def test_reject_fault_turns_the_request_rejected(deniz: DenizClient) -> None:
    deniz.server.state.add_faults([{"operation": "issue_policy", "fault": "reject", "reason": "Hasar geçmişi"}])
    accepted = deniz.issue(deniz.quote_no())
    assert accepted.status_code == 202
    assert deniz.wait_for(accepted.json()["request_id"]) == {
        "request_id": accepted.json()["request_id"],
        "status": "REJECTED",
        "reason": "Hasar geçmişi",
    }
    assert deniz.server.state.counts()["faults"] == {"issue_policy": 1}


def test_bad_credentials_are_401_and_counted(deniz: DenizClient) -> None:
    for auth in (("acente1", "wrong"), None):
        response = deniz.trafik_quote(auth=auth)
        assert response.status_code == 401 and response.json()["code"] == "UNAUTHORIZED"
        assert response.headers["WWW-Authenticate"].startswith("Basic")
    assert deniz.server.state.counts()["received"] == {"trafik_quote": 2}


@pytest.mark.parametrize(
    ("body", "names"),
    [
        (DenizClient.quote_body("TRAFIK", {**TRAFIK, "plate": "34-ABC-123"}), "risk.plate"),
        (DenizClient.quote_body("TRAFIK", {**TRAFIK, "owner_id": "11111111111"}), "insured.owner_id"),
        (DenizClient.quote_body("DASK", dask("deniz", floor_count=0)), "risk.floor_count"),
        ({"product": "HAYAT", "insured": {}, "risk": {}}, "product"),
        ({"product": "TRAFIK", "risk": {}}, "insured"),
    ],
)
def test_invalid_request_names_the_field(deniz: DenizClient, body: dict, names: str) -> None:
    response = deniz.request("POST", "/quotes", json=body)
    assert response.status_code == 400 and response.json()["code"] == "INVALID_REQUEST"
    assert names in response.json()["detail"]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        (
            "POST",
            "/quotes",
            DenizClient.quote_body("KASKO", {**KASKO, "model_year": YEAR - 21}),
            422,
            "UNDERWRITING_DECLINED",
        ),
        (
            "POST",
            "/quotes",
            DenizClient.quote_body("DASK", dask("deniz", damage_status="heavy")),
            422,
            "UNDERWRITING_DECLINED",
        ),
        ("GET", "/addresses/9876543210", None, 404, "NOT_FOUND"),
        ("GET", "/policies/DZ-P-424242", None, 404, "NOT_FOUND"),
        ("GET", "/policy-requests/DZ-R-424242", None, 404, "NOT_FOUND"),
        (
            "POST",
            "/policy-requests",
            {"quote_id": "DZ-T-424242", "payment_token": "t", "client_reference": "r"},
            404,
            "NOT_FOUND",
        ),
    ],
)
def test_refusals(deniz: DenizClient, method: str, path: str, body: dict | None, status: int, code: str) -> None:
    response = deniz.request(method, path, json=body)
    assert (response.status_code, response.json()["code"]) == (status, code)


def test_expired_quote_is_422_quote_expired(deniz: DenizClient) -> None:
    deniz.server.state.configure(quote_ttl_seconds=0.05)
    quote_no = deniz.quote_no()
    time.sleep(0.1)
    response = deniz.issue(quote_no)
    assert (response.status_code, response.json()["code"]) == (422, "QUOTE_EXPIRED")


def test_throttle_is_429_with_x_ratelimit_reset_and_no_retry_after(deniz: DenizClient) -> None:
    deniz.server.state.configure(default_rate_per_second=0.5, default_burst=1)
    assert deniz.trafik_quote().status_code == 200
    before = time.time()
    throttled = deniz.trafik_quote()
    assert throttled.status_code == 429 and throttled.json()["code"] == "TOO_MANY_REQUESTS"
    assert "Retry-After" not in throttled.headers
    reset_at = int(throttled.headers["X-RateLimit-Reset"])
    assert math.floor(before) + 1 <= reset_at <= math.ceil(before + 2) + 1


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("INVALID_REQUEST", 400),
        ("UNAUTHORIZED", 401),
        ("AGENCY_NOT_AUTHORIZED", 403),
        ("NOT_FOUND", 404),
        ("UNDERWRITING_DECLINED", 422),
        ("QUOTE_EXPIRED", 422),
        ("INTERNAL_ERROR", 500),
        ("SERVICE_UNAVAILABLE", 503),
        ("SOMETHING_NEW", 422),
    ],
)
def test_error_fault_renders_each_code(deniz: DenizClient, code: str, status: int) -> None:
    deniz.server.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": code}])
    response = deniz.trafik_quote()
    assert response.status_code == status and response.json()["code"] == code and response.json()["detail"]


def test_too_many_requests_fault_sets_the_reset_time(deniz: DenizClient) -> None:
    deniz.server.state.add_faults(
        [{"operation": "*", "fault": "error", "code": "TOO_MANY_REQUESTS", "wait_seconds": 10}]
    )
    before = time.time()
    response = deniz.trafik_quote()
    assert response.status_code == 429 and "Retry-After" not in response.headers
    assert before + 10 <= int(response.headers["X-RateLimit-Reset"]) <= before + 12


def test_duplicate_reference_fault_points_at_a_request_that_exists(deniz: DenizClient) -> None:
    deniz.server.state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "DUPLICATE_REFERENCE"}])
    response = deniz.issue(deniz.quote_no(), ref="r-dup")
    assert response.status_code == 409
    found = deniz.request("GET", "/policy-requests", params={"client_reference": "r-dup"}).json()["items"]
    assert [item["request_id"] for item in found] == [response.json()["request_id"]]


# --- polls lag the POST (another cluster serves them) ---------------------------------------------


def test_poll_lag_hides_a_fresh_request_from_polls_and_lookups(deniz: DenizClient) -> None:
    """poll_lag_seconds: 404 NOT_FOUND polls and empty lookups after the 202; the request still stands."""
    deniz.server.state.configure(poll_lag_seconds=0.4)
    quote_no = deniz.quote_no()
    request_id = deniz.issue(quote_no, ref="ref-lag").json()["request_id"]
    poll = deniz.request("GET", f"/policy-requests/{request_id}")
    assert poll.status_code == 404 and poll.json()["code"] == "NOT_FOUND"
    lookup = deniz.request("GET", "/policy-requests", params={"client_reference": "ref-lag"})
    assert lookup.status_code == 200 and lookup.json() == {"items": []}
    again = deniz.issue(quote_no, ref="ref-lag")  # the POST cluster knows it at once
    assert again.status_code == 409 and again.json()["request_id"] == request_id
    time.sleep(0.45)
    issued = deniz.wait_for(request_id)
    assert issued["status"] == "ISSUED"
    assert deniz.request("GET", "/policy-requests", params={"client_reference": "ref-lag"}).json() == {
        "items": [issued]
    }
    assert deniz.server.state.counts()["policies_by_quote"] == {quote_no: [issued["policy_no"]]}


@pytest.mark.parametrize("operation", ["issue_poll", "issue_lookup"])
@pytest.mark.parametrize(
    "rule, status",
    [
        ({"fault": "error", "code": "NOT_FOUND", "times": 2}, 404),
        ({"fault": "error", "code": "SERVICE_UNAVAILABLE", "times": 2}, 503),
        ({"fault": "reset", "times": 2}, None),
    ],
)
def test_poll_and_lookup_faults_answer_like_a_lagging_cluster(
    deniz: DenizClient, operation: str, rule: dict, status: int | None
) -> None:
    """Fault rules on the poll and the lookup: the contract's 404 / 503 / reset, then the request."""
    request_id = deniz.issue(deniz.quote_no(), ref="ref-f").json()["request_id"]
    deniz.server.state.add_faults([{"operation": operation, **rule}])
    path, params = (
        (f"/policy-requests/{request_id}", None)
        if operation == "issue_poll"
        else ("/policy-requests", {"client_reference": "ref-f"})
    )
    for _ in range(2):
        if status is None:
            with pytest.raises(requests.exceptions.ConnectionError):
                deniz.request("GET", path, params=params)
        else:
            answer = deniz.request("GET", path, params=params)
            assert answer.status_code == status and answer.json()["code"] == rule["code"]
    time.sleep(0.1)
    answer = deniz.request("GET", path, params=params).json()
    assert (answer if operation == "issue_poll" else answer["items"][0])["status"] == "ISSUED"
    assert deniz.server.state.counts()["issued_total"] == 1


# --- policy periods (CONTRACTS.md, last section) --------------------------------------------------


def test_issued_poll_lookup_and_status_carry_the_policy_period(deniz: DenizClient) -> None:
    """ISSUED polls, lookup items and GET /policies/{no} say when the policy runs: a year from tomorrow."""
    request_id = deniz.issue(deniz.quote_no(), ref="ref-period").json()["request_id"]
    issued = deniz.wait_for(request_id)
    starts_on, ends_on = domain.policy_period(time.time())
    expected = {"from": starts_on.isoformat(), "to": ends_on.isoformat()}
    assert issued["period"] == expected
    item = deniz.request("GET", "/policy-requests", params={"client_reference": "ref-period"}).json()["items"][0]
    assert item["period"] == expected
    assert deniz.request("GET", f"/policies/{issued['policy_no']}").json()["period"] == expected


def test_processing_and_rejected_requests_have_no_period(deniz: DenizClient) -> None:
    deniz.server.state.configure(issuance_processing_seconds=0.3)
    processing = deniz.issue(deniz.quote_no(), ref="ref-p").json()
    assert "period" not in deniz.request("GET", f"/policy-requests/{processing['request_id']}").json()
    rejected = deniz.issue(deniz.quote_no(), ref="ref-r", card="tok_declined").json()
    assert "period" not in deniz.wait_for(rejected["request_id"])


def test_seeded_policy_status_carries_its_seeded_period(deniz: DenizClient) -> None:
    deniz.server.state.seed_policies(
        [{"policy_no": "DZ-P-770001", "status": "EXPIRED", "starts_on": "2025-03-01", "ends_on": "2026-03-01"}]
    )
    assert deniz.request("GET", "/policies/DZ-P-770001").json() == {
        "policy_no": "DZ-P-770001",
        "state": "LAPSED",
        "period": {"from": "2025-03-01", "to": "2026-03-01"},
    }


# --- coverages and installments -------------------------------------------------------------------


def _insurer(deniz: DenizClient) -> Deniz:
    """The Deniz insurer behind the client's sandbox (the server holds it as any insurer)."""
    insurer = deniz.server.insurer
    assert isinstance(insurer, Deniz)
    return insurer


def _sum(value: dict | None) -> Decimal | None:
    return None if value is None else _amount(value)


def _amount(value: dict) -> Decimal:
    assert value["currency"] == "TRY" and len(value["amount"].split(".")[1]) == 2, value
    return Decimal(value["amount"])


def test_trafik_quote_lists_the_legal_limits(deniz: DenizClient) -> None:
    coverages = deniz.trafik_quote().json()["coverages"]
    assert {c["code"]: _sum(c["sum_insured"]) for c in coverages} == domain.TRAFIK_LIMITS
    assert all(c["label"] for c in coverages)


def test_kasko_quote_lists_its_covers_glass_unlimited(deniz: DenizClient) -> None:
    body = deniz.quote("KASKO", KASKO).json()
    by_code = {c["code"]: c for c in body["coverages"]}
    assert list(by_code) == list(domain.KASKO_COVERS)
    assert by_code["glass"]["sum_insured"] is None
    vehicle_value = (Decimal(body["gross_premium"]["amount"]) / Decimal("0.028")).quantize(Decimal("0.01"))
    assert _sum(by_code["collision"]["sum_insured"]) == vehicle_value


def test_dask_quote_lists_the_earthquake_cover_with_the_sum_insured(deniz: DenizClient) -> None:
    body = deniz.quote("DASK", dask("deniz")).json()
    [cover] = body["coverages"]
    assert cover["code"] == "earthquake" and cover["label"]
    assert _sum(cover["sum_insured"]) == Decimal(13500 * 120)


def test_quote_offers_installments_with_their_totals(deniz: DenizClient) -> None:
    body = deniz.trafik_quote().json()
    premium = Decimal(body["gross_premium"]["amount"])
    plans = {plan["count"]: _amount(plan["total"]) for plan in body["installments"]}
    assert plans == dict(domain.installments(premium))
    assert plans[1] == premium and plans[9] > plans[3] > premium


# --- policy documents -----------------------------------------------------------------------------


def test_document_redirects_to_a_link_that_needs_no_credentials(deniz: DenizClient) -> None:
    """303 Location: /documents/{token}; the link answers the policy's PDF without any Authorization."""
    policy_no = deniz.policy_no()
    answer = deniz.document(policy_no)
    assert answer.status_code == 303 and answer.content == b""
    location = answer.headers["Location"]
    assert location.startswith("/documents/") and len(location) > len("/documents/") + 16
    pdf = deniz.download(location)
    assert pdf.status_code == 200 and pdf.headers["Content-Type"] == "application/pdf"
    policy = deniz.server.state.ledger.policies[policy_no]
    expected = domain.policy_pdf(Deniz.document_name, policy_no, policy.starts_on, policy.ends_on)
    assert hashlib.sha256(pdf.content).hexdigest() == hashlib.sha256(expected).hexdigest()
    assert deniz.download(location).content == pdf.content  # valid for its 60 s, not single-use
    counts = deniz.server.state.counts()
    assert counts["received"]["policy_document"] == 1 and counts["received"]["document_download"] == 2
    assert (policy_no, False) in _insurer(deniz).document_downloads


def test_each_document_call_gets_its_own_link(deniz: DenizClient) -> None:
    policy_no = deniz.policy_no()
    first, second = (deniz.document(policy_no).headers["Location"] for _ in range(2))
    assert first != second


def test_document_not_ready_is_202_generating_with_retry_after(deniz: DenizClient) -> None:
    """Before the PDF is made: 202 {"status": "GENERATING"}, Retry-After in whole seconds, never 0."""
    deniz.server.state.configure(document_delay_seconds=2.5)
    policy_no = deniz.policy_no()
    answer = deniz.document(policy_no)
    assert answer.status_code == 202 and answer.json() == {"status": "GENERATING"}
    assert "Location" not in answer.headers
    assert 1 <= int(answer.headers["Retry-After"]) <= 3
    deniz.server.state.configure(document_delay_seconds=0.2)
    other = deniz.policy_no()
    assert deniz.document(other).headers["Retry-After"] == "1"
    time.sleep(0.25)
    assert deniz.document(other).status_code == 303


@pytest.mark.parametrize("policy_no", ["DZ-P-424242", "no-such-policy"])
def test_document_of_an_unknown_policy_is_404_not_found(deniz: DenizClient, policy_no: str) -> None:
    answer = deniz.document(policy_no)
    assert (answer.status_code, answer.json()["code"]) == (404, "NOT_FOUND")


def test_another_agencys_policy_has_no_document(deniz: DenizClient) -> None:
    policy_no = deniz.policy_no()
    answer = deniz.document(policy_no, auth=("acente2", "deniz-pass-2"))
    assert (answer.status_code, answer.json()["code"]) == (404, "NOT_FOUND")


def test_document_call_needs_credentials(deniz: DenizClient) -> None:
    answer = deniz.document(deniz.policy_no(), auth=None)
    assert (answer.status_code, answer.json()["code"]) == (401, "UNAUTHORIZED")


def test_document_link_expires(deniz: DenizClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link is valid for document_link_seconds (60 s by default); after that, and for a made-up token, 404."""
    assert Deniz.document_name == "Deniz Sigorta" and _insurer(deniz).document_link_seconds == 60.0
    monkeypatch.setattr(deniz.server.insurer, "document_link_seconds", 0.2)
    location = deniz.document(deniz.policy_no()).headers["Location"]
    assert deniz.download(location).status_code == 200
    time.sleep(0.25)
    expired = deniz.download(location)
    assert (expired.status_code, expired.json()["code"]) == (404, "NOT_FOUND")
    made_up = deniz.download("/documents/not-a-token")
    assert (made_up.status_code, made_up.json()["code"]) == (404, "NOT_FOUND")
    assert deniz.server.state.counts()["received"]["document_download"] == 3


def test_download_with_credentials_is_served_and_noted(deniz: DenizClient) -> None:
    """The link ignores an Authorization header; the sandbox notes it so tests can catch a leaking client."""
    policy_no = deniz.policy_no()
    location = deniz.document(policy_no).headers["Location"]
    assert deniz.download(location, auth=("acente1", "deniz-pass-1")).status_code == 200
    assert (policy_no, True) in _insurer(deniz).document_downloads


@pytest.mark.parametrize(
    ("operation", "rule", "status"),
    [
        ("policy_document", {"fault": "error", "code": "SERVICE_UNAVAILABLE"}, 503),
        ("policy_document", {"fault": "html", "http_status": 502}, 502),
        ("document_download", {"fault": "error", "code": "INTERNAL_ERROR"}, 500),
        ("document_download", {"fault": "garbage"}, 200),
    ],
)
def test_document_routes_take_faults(deniz: DenizClient, operation: str, rule: dict, status: int) -> None:
    policy_no = deniz.policy_no()
    location = deniz.document(policy_no).headers["Location"]
    deniz.server.state.add_faults([{"operation": operation, **rule}])
    answer = deniz.document(policy_no) if operation == "policy_document" else deniz.download(location)
    assert answer.status_code == status
    assert not answer.content.startswith(b"%PDF-")
    assert deniz.server.state.counts()["faults"] == {operation: 1}


def test_document_link_matches_fault_rules_by_policy_no(deniz: DenizClient) -> None:
    first, second = deniz.policy_no(), deniz.policy_no()
    deniz.server.state.add_faults(
        [{"operation": "document_download", "fault": "reset", "match": {"policy_no": second}, "times": None}]
    )
    assert deniz.download(deniz.document(first).headers["Location"]).status_code == 200
    with pytest.raises(requests.exceptions.ConnectionError):
        deniz.download(deniz.document(second).headers["Location"])


def test_document_call_and_download_share_the_accounts_rate(deniz: DenizClient) -> None:
    """Both are the account's calls: an empty bucket throttles the download too (429 + X-RateLimit-Reset)."""
    policy_no = deniz.policy_no()
    deniz.server.state.configure(default_rate_per_second=0.5, default_burst=1)
    deniz.server.state.add_accounts(
        [{"agency_code": "ACENTE1", "credentials": {"username": "acente1", "password": "deniz-pass-1"}}]
    )  # a fresh, full bucket of one token
    location = deniz.document(policy_no).headers["Location"]
    throttled = deniz.download(location)
    assert throttled.status_code == 429 and throttled.json()["code"] == "TOO_MANY_REQUESTS"
    assert "Retry-After" not in throttled.headers and int(throttled.headers["X-RateLimit-Reset"]) > time.time()
    assert deniz.server.state.counts()["throttled"] == {"document_download": 1}


def test_seeded_policy_has_a_document_with_its_period(deniz: DenizClient) -> None:
    deniz.server.state.seed_policies(
        [{"policy_no": "DZ-P-770002", "status": "ACTIVE", "starts_on": "2026-01-15", "ends_on": "2027-01-15"}]
    )
    pdf = deniz.download(deniz.document("DZ-P-770002").headers["Location"]).content
    assert pdf == domain.policy_pdf(Deniz.document_name, "DZ-P-770002", date(2026, 1, 15), date(2027, 1, 15))


def test_absolute_location_fault_names_the_link_as_an_absolute_url(deniz: DenizClient) -> None:
    policy_no = deniz.policy_no()
    deniz.server.state.add_faults(
        [
            {"operation": "policy_document", "fault": "absolute_location"},
            {"operation": "policy_document", "fault": "absolute_location", "reason": "http://evil.example"},
        ]
    )
    own = deniz.document(policy_no).headers["Location"]
    assert own.startswith(deniz.url + "/documents/")
    assert deniz.http.get(own, timeout=5).status_code == 200
    assert deniz.document(policy_no).headers["Location"].startswith("http://evil.example/documents/")


def test_broken_coverages_fault_appends_unreadable_entries(deniz: DenizClient) -> None:
    deniz.server.state.add_faults([{"operation": "trafik_quote", "fault": "broken_coverages"}])
    body = deniz.trafik_quote().json()
    assert body["coverages"][:3] == deniz.trafik_quote().json()["coverages"][:3]
    assert None in body["coverages"] and 42 in body["coverages"]
    assert "12" in body["installments"]
