"""Anka sandbox, cancellation and the production list: Idempotency-Key, 409 with the first result."""

from __future__ import annotations

import pytest
import requests

from sandbox import SandboxServer

from .cancellation_wire import EFFECTIVE_ON, LIST_FROM, LIST_TO, REFUND, AnkaCancel, seeded

POLICY = "AK-P-IPTAL-1"


@pytest.fixture
def anka(servers: dict[str, SandboxServer], http: requests.Session) -> AnkaCancel:
    servers["anka"].state.seed_policies([seeded(POLICY)])
    return AnkaCancel(servers["anka"], http)


def cancel(anka: AnkaCancel, key: str = "k-1", **changes: str) -> requests.Response:
    fields = {"reason": "customer_request", "effective_on": EFFECTIVE_ON, **changes}
    return anka.cancel_response(POLICY, fields["reason"], fields["effective_on"], ref=key)


def test_success_is_the_contracts_body(anka: AnkaCancel) -> None:
    response = cancel(anka)
    assert response.status_code == 200
    assert response.json() == {
        "policy_no": POLICY,
        "status": "CANCELLED",
        "refund": REFUND,
        "cancelled_on": EFFECTIVE_ON,
    }


def test_the_idempotency_key_is_required(anka: AnkaCancel) -> None:
    response = cancel(anka, key="")
    assert response.status_code == 400 and response.json()["error"]["field"] == "Idempotency-Key"
    assert anka.status_word(POLICY) == "ACTIVE"


def test_a_repeated_key_replays_the_first_answer_before_any_other_check(anka: AnkaCancel) -> None:
    """Same key, same body: the first 200 again (+ Idempotent-Replayed), even once the policy has
    expired since; same key, another body: 422 IDEMPOTENCY_MISMATCH."""
    first = cancel(anka)
    anka.server.state.set_policy_status(POLICY, "EXPIRED")
    replay = cancel(anka)
    assert (replay.status_code, replay.headers.get("Idempotent-Replayed")) == (200, "true")
    assert replay.json() == first.json()
    mismatch = cancel(anka, effective_on="2027-01-01")
    assert (mismatch.status_code, mismatch.json()["error"]["code"]) == (422, "IDEMPOTENCY_MISMATCH")
    assert anka.server.state.counts()["cancellations_by_policy"] == {POLICY: 1}


def test_already_cancelled_is_409_with_the_cancellation(anka: AnkaCancel) -> None:
    first = cancel(anka).json()
    again = cancel(anka, key="k-2", reason="vehicle_sold")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "ALREADY_CANCELLED" and again.json()["cancellation"] == first


def test_only_a_success_binds_the_key(anka: AnkaCancel) -> None:
    """A refused cancellation leaves the key free: the same key, once the reason is right, cancels."""
    refused = cancel(anka, reason="bored")
    assert (refused.status_code, refused.json()["error"]["field"]) == (400, "reason")
    assert cancel(anka).status_code == 200


@pytest.mark.parametrize(
    ("changes", "status", "code", "field"),
    [
        ({"effective_on": "2027-06-02"}, 400, "VALIDATION", "effective_on"),
        ({"effective_on": "01.12.2026"}, 400, "VALIDATION", "effective_on"),
        ({"reason": "sold"}, 400, "VALIDATION", "reason"),
    ],
)
def test_validation_names_the_field(anka: AnkaCancel, changes: dict, status: int, code: str, field: str) -> None:
    response = cancel(anka, **changes)
    assert (response.status_code, response.json()["error"]["code"], response.json()["error"].get("field")) == (
        status,
        code,
        field,
    )


def test_an_expired_policy_is_422_cancel_not_allowed(anka: AnkaCancel) -> None:
    anka.server.state.set_policy_status(POLICY, "EXPIRED")
    response = cancel(anka)
    assert (response.status_code, response.json()["error"]["code"]) == (422, "CANCEL_NOT_ALLOWED")


def test_an_already_cancelled_fault_cancels_first_and_carries_the_result(anka: AnkaCancel) -> None:
    anka.server.state.add_faults([{"operation": "cancel_policy", "fault": "error", "code": "ALREADY_CANCELLED"}])
    response = cancel(anka)
    assert response.status_code == 409 and response.json()["cancellation"]["refund"] == REFUND
    assert anka.server.state.counts()["cancellations_by_policy"] == {POLICY: 1}


def test_the_list_answers_page_and_pages(anka: AnkaCancel) -> None:
    """1-based; no `page` is the first; a page past the last is empty; page 0 is refused."""
    body = anka.list_response(LIST_FROM, LIST_TO).json()
    assert (body["page"], body["pages"], [item["policy_no"] for item in body["items"]]) == (1, 1, [POLICY])
    no_page = anka.request("GET", "/v1/policies", params={"issued_from": LIST_FROM, "issued_to": LIST_TO}).json()
    assert no_page == body
    assert anka.list_response(LIST_FROM, LIST_TO, 2).json() == {"items": [], "page": 2, "pages": 1}
    zero = anka.list_response(LIST_FROM, LIST_TO, 0)
    assert zero.status_code == 400 and zero.json()["error"]["field"] == "page"
    malformed = anka.list_response("2026-5-1", LIST_TO)
    assert malformed.status_code == 400 and malformed.json()["error"]["field"] == "issued_from"
    missing = anka.request("GET", "/v1/policies", params={"issued_from": LIST_FROM})
    assert missing.status_code == 400 and missing.json()["error"]["field"] == "issued_to"


def test_the_list_is_the_agencys_own(anka: AnkaCancel) -> None:
    other = anka.list_response(LIST_FROM, LIST_TO, api_key="anka-key-acente2").json()
    assert other == {"items": [], "page": 1, "pages": 0}
