"""Deniz sandbox: REST/JSON behind HTTP Basic, asynchronous issuance, 429 + X-RateLimit-Reset."""

from __future__ import annotations

import math
import time

import pytest
import requests

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
    assert status == {"policy_no": issued["policy_no"], "state": "IN_FORCE"}


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
