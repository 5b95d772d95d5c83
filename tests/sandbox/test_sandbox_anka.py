"""Anka sandbox: REST/JSON, status carries the error, Idempotency-Key honoured."""

from __future__ import annotations

import hashlib
import time
from datetime import date, timedelta
from decimal import Decimal

import pytest
import requests

from sandbox import domain

from .sandbox_wire import KASKO, TRAFIK, UAVT, YEAR, AnkaClient, dask


def test_every_operation_answers_as_the_contract_says(anka: AnkaClient) -> None:
    """Quotes, address, issuance and status: shapes, prefixes and decimal-string money."""
    trafik = anka.trafik_quote()
    assert trafik.status_code == 200
    body = trafik.json()
    assert body["quote_no"].startswith("AK-T-") and body["currency"] == "TRY"
    assert body["premium"].count(".") == 1 and len(body["premium"].split(".")[1]) == 2
    assert body["valid_until"].endswith("Z")

    kasko = anka.request("POST", "/v1/quotes/kasko", json=KASKO).json()
    assert kasko["quote_no"].startswith("AK-K-") and "collision" in [c["code"] for c in kasko["coverages"]]

    address = anka.request("GET", f"/v1/dask/addresses/{UAVT}").json()
    assert address["uavt_code"] == UAVT and address["address"]
    dask_quote = anka.request("POST", "/v1/quotes/dask", json={**dask("anka"), "building_id": address["building_id"]})
    assert dask_quote.status_code == 200, dask_quote.text
    assert dask_quote.json()["quote_no"].startswith("AK-D-") and dask_quote.json()["sum_insured"] == "1620000.00"

    issued = anka.issue(body["quote_no"])
    assert issued.status_code == 201
    assert issued.json()["status"] == "ACTIVE" and issued.json()["policy_no"].startswith("AK-P-")
    status = anka.request("GET", f"/v1/policies/{issued.json()['policy_no']}")
    assert status.json() == {
        "policy_no": issued.json()["policy_no"],
        "status": "ACTIVE",
        "starts_on": issued.json()["starts_on"],
        "ends_on": issued.json()["ends_on"],
    }


def test_same_inputs_get_the_same_premium_and_a_new_quote_number(anka: AnkaClient) -> None:
    """Pricing is deterministic; quote numbers are unique."""
    first, second = anka.trafik_quote().json(), anka.trafik_quote().json()
    assert first["premium"] == second["premium"] and first["quote_no"] != second["quote_no"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"plate": "34 ABC 123"}, "plate"),
        ({"plate": None}, "plate"),
        ({"owner_id": "10000000147"}, "owner_id"),
        ({"registration_serial": "A1234567"}, "registration_serial"),
        ({"usage": "ambulance"}, "usage"),
    ],
)
def test_validation_errors_name_the_field(anka: AnkaClient, change: dict, field: str) -> None:
    """400 VALIDATION with `field`."""
    response = anka.trafik_quote({**TRAFIK, **change})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION" and response.json()["error"]["field"] == field


def test_dask_validation_and_building_id_check(anka: AnkaClient) -> None:
    """gross_m2 outside 40..1000 and a building id of another UAVT are both VALIDATION."""
    too_big = anka.request("POST", "/v1/quotes/dask", json=dask("anka", gross_m2=2000))
    assert too_big.status_code == 400 and too_big.json()["error"]["field"] == "gross_m2"
    wrong_building = anka.request("POST", "/v1/quotes/dask", json=dask("anka", building_id="00000000"))
    assert wrong_building.status_code == 400 and wrong_building.json()["error"]["field"] == "building_id"


def test_malformed_json_is_a_validation_error(anka: AnkaClient) -> None:
    response = anka.request(
        "POST", "/v1/quotes/trafik", data=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400 and response.json()["error"]["field"] == "body"


def test_wrong_api_key_is_401_and_still_counted(anka: AnkaClient) -> None:
    """AUTH_INVALID; the call shows up in counts.received."""
    assert anka.trafik_quote(api_key="nope").status_code == 401
    response = anka.trafik_quote(api_key=None)
    assert response.status_code == 401 and response.json()["error"]["code"] == "AUTH_INVALID"
    assert anka.server.state.counts()["received"] == {"trafik_quote": 2}


@pytest.mark.parametrize(
    ("path", "payload", "status", "code"),
    [
        ("/v1/quotes/kasko", {**KASKO, "model_year": YEAR - 25}, 422, "NOT_ELIGIBLE"),
        ("/v1/quotes/dask", dask("anka", damage_status="heavy"), 422, "RISK_DECLINED"),
        ("/v1/quotes/dask", dask("anka", uavt_code="9123456789"), 404, "ADDRESS_NOT_FOUND"),
    ],
)
def test_business_refusals(anka: AnkaClient, path: str, payload: dict, status: int, code: str) -> None:
    response = anka.request("POST", path, json=payload)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)


def test_kasko_refusal_message_is_the_agents_words(anka: AnkaClient) -> None:
    response = anka.request("POST", "/v1/quotes/kasko", json={**KASKO, "model_year": YEAR - 21})
    assert "Araç teminata uygun değil" in response.json()["error"]["message"]


def test_address_not_found_for_uavt_starting_with_9(anka: AnkaClient) -> None:
    response = anka.request("GET", "/v1/dask/addresses/9000000001")
    assert response.status_code == 404 and response.json()["error"]["code"] == "ADDRESS_NOT_FOUND"


def test_issuing_unknown_expired_or_declined(anka: AnkaClient) -> None:
    """Unknown quote 404 NOT_FOUND, expired 409 QUOTE_EXPIRED, declined card 422."""
    assert anka.issue("AK-T-999999").json()["error"]["code"] == "NOT_FOUND"
    declined = anka.issue(anka.quote_no(), card="tok_declined", key="k-declined")
    assert declined.status_code == 422 and declined.json()["error"]["code"] == "RISK_DECLINED"
    anka.server.state.configure(quote_ttl_seconds=0.05)
    quote_no = anka.quote_no()
    time.sleep(0.1)
    expired = anka.issue(quote_no, key="k-expired")
    assert expired.status_code == 409 and expired.json()["error"]["code"] == "QUOTE_EXPIRED"
    assert anka.server.state.counts()["issued_total"] == 0


def test_another_agency_cannot_issue_or_see_the_quote(anka: AnkaClient) -> None:
    """Each agency has its own account: ACENTE2 does not see ACENTE1's records."""
    quote_no = anka.quote_no()
    assert anka.issue(quote_no, api_key="anka-key-acente2").status_code == 404
    policy_no = anka.issue(quote_no).json()["policy_no"]
    assert anka.request("GET", f"/v1/policies/{policy_no}", api_key="anka-key-acente2").status_code == 404


def test_idempotency_key_is_required(anka: AnkaClient) -> None:
    response = anka.request("POST", "/v1/policies", json={"quote_no": anka.quote_no(), "payment_token": "tok_ok"})
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "VALIDATION",
        "message": "Idempotency-Key is required",
        "field": "Idempotency-Key",
    }


def test_idempotency_replay_returns_the_original_policy(anka: AnkaClient) -> None:
    """Same key + same body: the original 201, and only one policy exists."""
    quote_no = anka.quote_no()
    first, again = anka.issue(quote_no, key="same"), anka.issue(quote_no, key="same")
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    counts = anka.server.state.counts()
    assert counts["issued_total"] == 1 and counts["policies_by_quote"] == {quote_no: [first.json()["policy_no"]]}


def test_idempotency_key_with_another_body_is_a_mismatch(anka: AnkaClient) -> None:
    quote_no = anka.quote_no()
    anka.issue(quote_no, key="same")
    mismatch = anka.issue(quote_no, key="same", card="tok_other")
    assert mismatch.status_code == 422 and mismatch.json()["error"]["code"] == "IDEMPOTENCY_MISMATCH"


def test_a_fresh_key_issues_another_policy(anka: AnkaClient) -> None:
    """Only the key protects: a new key on an issued quote is a second policy (the platform must not)."""
    quote_no = anka.quote_no()
    anka.issue(quote_no, key="a")
    anka.issue(quote_no, key="b")
    assert len(anka.server.state.counts()["policies_by_quote"][quote_no]) == 2


def test_throttle_is_429_with_retry_after_in_whole_seconds(anka: AnkaClient) -> None:
    """Over the account's rate: 429 RATE_LIMITED, Retry-After = ceil(time to next token) >= 1."""
    anka.server.state.add_accounts(
        [{"agency_code": "ACENTE1", "credentials": {"api_key": "anka-key-acente1"}, "rate_per_second": 0.5, "burst": 2}]
    )
    statuses = [anka.trafik_quote().status_code for _ in range(3)]
    throttled = anka.trafik_quote()
    assert statuses == [200, 200, 429] and throttled.status_code == 429
    assert throttled.json()["error"]["code"] == "RATE_LIMITED"
    assert throttled.headers["Retry-After"] == "2"
    assert anka.trafik_quote(api_key="anka-key-acente2").status_code == 200  # the other agency has its own bucket
    counts = anka.server.state.counts()
    assert counts["throttled"] == {"trafik_quote": 2} and counts["total_received"] == 5


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("VALIDATION", 400),
        ("AUTH_INVALID", 401),
        ("PRODUCT_NOT_ALLOWED", 403),
        ("NOT_FOUND", 404),
        ("ADDRESS_NOT_FOUND", 404),
        ("QUOTE_EXPIRED", 409),
        ("NOT_ELIGIBLE", 422),
        ("RISK_DECLINED", 422),
        ("IDEMPOTENCY_MISMATCH", 422),
        ("INTERNAL_ERROR", 500),
        ("BAD_GATEWAY", 502),
        ("SERVICE_UNAVAILABLE", 503),
        ("GATEWAY_TIMEOUT", 504),
        ("ZZ-999", 422),
    ],
)
def test_error_fault_renders_each_code(anka: AnkaClient, code: str, status: int) -> None:
    """Every code of the table with its HTTP status and the error body shape."""
    anka.server.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": code}])
    response = anka.trafik_quote()
    assert response.status_code == status
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == code and response.json()["error"]["message"]
    assert "Retry-After" not in response.headers
    assert anka.trafik_quote().status_code == 200  # times defaults to 1


def test_error_fault_rate_limited_is_the_throttle_signal(anka: AnkaClient) -> None:
    anka.server.state.add_faults(
        [{"operation": "trafik_quote", "fault": "error", "code": "RATE_LIMITED", "wait_seconds": 7}]
    )
    response = anka.trafik_quote()
    assert response.status_code == 429 and response.headers["Retry-After"] == "7"
    assert anka.server.state.counts()["throttled"] == {"trafik_quote": 1}


def test_503_carries_retry_after_when_wait_seconds_given(anka: AnkaClient) -> None:
    anka.server.state.add_faults(
        [
            {"operation": "*", "fault": "error", "code": "SERVICE_UNAVAILABLE", "wait_seconds": 3},
            {"operation": "*", "fault": "error", "code": "MAINTENANCE", "http_status": 503, "wait_seconds": 2.2},
        ]
    )
    first, second = anka.trafik_quote(), anka.trafik_quote()
    assert (first.status_code, first.headers["Retry-After"]) == (503, "3")
    assert (second.status_code, second.headers["Retry-After"], second.json()["error"]["code"]) == (
        503,
        "3",
        "MAINTENANCE",
    )


def test_unknown_route_is_404(anka: AnkaClient) -> None:
    response = anka.request("GET", "/v2/nothing")
    assert response.status_code == 404 and response.json()["error"]["code"] == "NOT_FOUND"


# --- policy periods, coverages, installments, documents (CONTRACTS.md, last section) -------------


def test_issued_policy_runs_a_year_from_tomorrow_in_turkiye(anka: AnkaClient) -> None:
    """The 201 and the status both carry the period, as ISO dates; a replay carries the same."""
    quote_no = anka.quote_no()
    issued = anka.issue(quote_no, key="period").json()
    tomorrow = domain.today_in_turkiye(time.time()) + timedelta(days=1)
    assert date.fromisoformat(issued["starts_on"]) == tomorrow
    assert date.fromisoformat(issued["ends_on"]) == domain.one_year_after(tomorrow)
    assert anka.issue(quote_no, key="period").json() == issued
    status = anka.request("GET", f"/v1/policies/{issued['policy_no']}").json()
    assert (status["starts_on"], status["ends_on"]) == (issued["starts_on"], issued["ends_on"])


def test_seeded_policy_status_carries_its_period(anka: AnkaClient) -> None:
    """A policy that existed before the run answers with the period it was seeded with."""
    anka.server.state.ledger.seed_policy(
        "AK-P-SEED-000001", "EXPIRED", starts_on=date(2024, 3, 1), ends_on=date(2025, 3, 1)
    )
    status = anka.request("GET", "/v1/policies/AK-P-SEED-000001").json()
    assert status == {
        "policy_no": "AK-P-SEED-000001",
        "status": "EXPIRED",
        "starts_on": "2024-03-01",
        "ends_on": "2025-03-01",
    }


def test_trafik_quote_lists_the_legal_limits_and_installments(anka: AnkaClient) -> None:
    """Coverages are {code, name, limit} objects with Turkish names; installments cost a little more."""
    body = anka.trafik_quote().json()
    assert body["coverages"] == [
        {"code": "bodily_injury", "name": "Sakatlanma ve ölüm (kişi başı)", "limit": "2700000.00"},
        {"code": "medical", "name": "Tedavi masrafları (kişi başı)", "limit": "2700000.00"},
        {"code": "property_damage", "name": "Maddi hasar (araç başı)", "limit": "300000.00"},
    ]
    plans = {plan["count"]: plan["total"] for plan in body["installments"]}
    assert sorted(plans) == [1, 3, 6, 9] and plans[1] == body["premium"]
    assert all(isinstance(total, str) for total in plans.values())
    assert float(plans[9]) > float(plans[3]) > float(plans[1])


def test_kasko_covers_have_limits_glass_is_unlimited(anka: AnkaClient) -> None:
    kasko = anka.request("POST", "/v1/quotes/kasko", json=KASKO).json()
    covers = {c["code"]: c for c in kasko["coverages"]}
    assert list(covers) == ["collision", "theft", "fire", "flood", "glass"]
    assert covers["glass"]["limit"] is None and covers["theft"]["name"] == "Hırsızlık"
    vehicle_value = (Decimal(kasko["premium"]) / Decimal("0.028")).quantize(Decimal("0.01"))
    assert covers["collision"]["limit"] == covers["theft"]["limit"] == str(vehicle_value)
    assert [plan["count"] for plan in kasko["installments"]] == [1, 3, 6, 9]


def test_dask_quote_lists_the_earthquake_cover_at_the_sum_insured(anka: AnkaClient) -> None:
    address = anka.request("GET", f"/v1/dask/addresses/{UAVT}").json()
    body = anka.request("POST", "/v1/quotes/dask", json={**dask("anka"), "building_id": address["building_id"]}).json()
    assert body["sum_insured"] == "1620000.00"
    assert body["coverages"] == [
        {"code": "earthquake", "name": "Deprem ve deprem kaynaklı yangın", "limit": "1620000.00"}
    ]


def test_legacy_coverages_fault_sends_bare_codes(anka: AnkaClient) -> None:
    """An older Anka release: the same covers as bare code strings."""
    anka.server.state.add_faults([{"operation": "kasko_quote", "fault": "legacy_coverages"}])
    kasko = anka.request("POST", "/v1/quotes/kasko", json=KASKO)
    assert kasko.status_code == 200
    assert kasko.json()["coverages"] == ["collision", "theft", "fire", "flood", "glass"]


def test_broken_coverages_fault_appends_unreadable_entries(anka: AnkaClient) -> None:
    anka.server.state.add_faults([{"operation": "trafik_quote", "fault": "broken_coverages"}])
    coverages = anka.trafik_quote().json()["coverages"]
    assert [c["code"] for c in coverages[:3]] == ["bodily_injury", "medical", "property_damage"]
    assert (
        42 in coverages
        and None in coverages
        and {"code": "", "name": "Kodsuz teminat", "limit": "1000.00"} in coverages
    )


def test_document_is_the_policys_pdf(anka: AnkaClient) -> None:
    """200 application/pdf, the same bytes on every fetch; counted as policy_document."""
    policy_no = anka.policy_no()
    policy = anka.server.state.ledger.policies[policy_no]
    first, again = anka.document(policy_no), anka.document(policy_no)
    assert first.status_code == 200 and first.headers["Content-Type"] == "application/pdf"
    assert first.content.startswith(b"%PDF-") and first.content == again.content
    expected = domain.policy_pdf("Anka Sigorta", policy_no, policy.starts_on, policy.ends_on)
    assert hashlib.sha256(first.content).hexdigest() == hashlib.sha256(expected).hexdigest()
    assert anka.server.state.counts()["received"]["policy_document"] == 2


def test_document_not_ready_is_409_with_retry_after_then_ready(anka: AnkaClient) -> None:
    """While the PDF is being produced: 409 DOCUMENT_NOT_READY, Retry-After = ceil(time left) >= 1."""
    anka.server.state.configure(document_delay_seconds=1.5)
    policy_no = anka.policy_no()
    waiting = anka.document(policy_no)
    assert waiting.status_code == 409 and waiting.json()["error"]["code"] == "DOCUMENT_NOT_READY"
    assert waiting.headers["Retry-After"] == "2"
    time.sleep(1.6)
    assert anka.document(policy_no).status_code == 200


def test_document_of_unknown_or_foreign_policy_is_404(anka: AnkaClient) -> None:
    assert anka.document("AK-P-NOPE-000001").json()["error"]["code"] == "NOT_FOUND"
    policy_no = anka.policy_no()
    foreign = anka.document(policy_no, api_key="anka-key-acente2")
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "NOT_FOUND"


def test_document_route_is_authenticated_and_rate_limited(anka: AnkaClient) -> None:
    policy_no = anka.policy_no()
    assert anka.document(policy_no, api_key="nope").status_code == 401
    anka.server.state.add_accounts(
        [{"agency_code": "ACENTE1", "credentials": {"api_key": "anka-key-acente1"}, "rate_per_second": 0.5, "burst": 1}]
    )
    assert anka.document(policy_no).status_code == 200
    throttled = anka.document(policy_no)
    assert throttled.status_code == 429 and throttled.headers["Retry-After"] == "2"
    assert anka.server.state.counts()["throttled"] == {"policy_document": 1}


@pytest.mark.parametrize(
    ("rule", "wait"),
    [
        ({"fault": "error", "code": "DOCUMENT_NOT_READY"}, "1"),
        ({"fault": "error", "code": "DOCUMENT_NOT_READY", "wait_seconds": 4.2}, "5"),
        ({"fault": "error", "code": "DOCUMENT_NOT_READY", "wait_seconds": None}, None),
    ],
)
def test_document_not_ready_fault(anka: AnkaClient, rule: dict, wait: str | None) -> None:
    """The fault renders Anka's not-ready answer; `wait_seconds: null` leaves Retry-After out."""
    policy_no = anka.policy_no()
    anka.server.state.add_faults([{"operation": "policy_document", **rule}])
    response = anka.document(policy_no)
    assert response.status_code == 409 and response.json()["error"]["code"] == "DOCUMENT_NOT_READY"
    assert response.headers.get("Retry-After") == wait
    assert anka.document(policy_no).status_code == 200


@pytest.mark.parametrize(
    ("rule", "status", "content_type"),
    [
        ({"fault": "error", "code": "NOT_FOUND"}, 404, "application/json"),
        ({"fault": "error", "code": "SERVICE_UNAVAILABLE"}, 503, "application/json"),
        ({"fault": "html", "http_status": 502}, 502, "text/html; charset=utf-8"),
        ({"fault": "garbage"}, 200, "application/json"),
        ({"fault": "wrong_content_type"}, 200, "text/html; charset=utf-8"),
        ({"fault": "latency", "seconds": 0.2}, 200, "application/pdf"),
    ],
)
def test_document_route_takes_faults(anka: AnkaClient, rule: dict, status: int, content_type: str) -> None:
    policy_no = anka.policy_no()
    anka.server.state.add_faults([{"operation": "policy_document", **rule}])
    response = anka.document(policy_no)
    assert (response.status_code, response.headers["Content-Type"]) == (status, content_type)
    assert anka.server.state.counts()["faults"] == {"policy_document": 1}


def test_document_reset_fault_drops_the_connection(anka: AnkaClient) -> None:
    policy_no = anka.policy_no()
    anka.server.state.add_faults([{"operation": "policy_document", "fault": "reset"}])
    with pytest.raises(requests.exceptions.ConnectionError):
        anka.document(policy_no)
