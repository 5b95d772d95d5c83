"""Deniz sandbox, asynchronous cancellation (202, then poll) and the cursor-paged production list."""

from __future__ import annotations

import time

import pytest
import requests

from sandbox import SandboxServer

from .cancellation_wire import EFFECTIVE_ON, LIST_FROM, LIST_TO, REFUND, DenizCancel, seeded

POLICY = "DZ-P-IPTAL-1"


@pytest.fixture
def deniz(servers: dict[str, SandboxServer], http: requests.Session) -> DenizCancel:
    servers["deniz"].state.configure(issuance_processing_seconds=0.05)
    servers["deniz"].state.seed_policies([seeded(POLICY)])
    return DenizCancel(servers["deniz"], http)


def post(deniz: DenizCancel, ref: str = "ref-1", policy_no: str = POLICY, **changes: str) -> requests.Response:
    fields = {"reason": "CUSTOMER_REQUEST", "effective_on": EFFECTIVE_ON, **changes}
    return deniz.cancel_response(policy_no, fields["reason"], fields["effective_on"], ref=ref)


def test_202_then_processing_then_done(deniz: DenizCancel) -> None:
    """Decided at the 202 (the policy is cancelled at once), revealed by the poll once processed."""
    deniz.server.state.configure(issuance_processing_seconds=0.3)
    response = post(deniz)
    assert response.status_code == 202
    cancellation_id = response.json()["cancellation_id"]
    assert response.json() == {"cancellation_id": cancellation_id, "status": "PROCESSING"}
    assert response.headers["Location"] == f"/cancellations/{cancellation_id}"
    assert deniz.status_word(POLICY) == "CANCELLED"
    assert deniz.request("GET", f"/cancellations/{cancellation_id}").json()["status"] == "PROCESSING"
    assert deniz.poll_cancellation(cancellation_id) == {
        "cancellation_id": cancellation_id,
        "status": "DONE",
        "refund": {"amount": REFUND, "currency": "TRY"},
        "effective_on": EFFECTIVE_ON,
    }


def test_a_used_reference_is_409_with_the_cancellation_before_any_other_check(deniz: DenizCancel) -> None:
    first = post(deniz).json()["cancellation_id"]
    again = post(deniz, policy_no="DZ-P-YOK-1", effective_on="yarın")
    assert again.status_code == 409
    assert (again.json()["code"], again.json()["cancellation_id"]) == ("DUPLICATE_REFERENCE", first)


def test_already_cancelled_is_409_naming_the_cancellation_to_poll(deniz: DenizCancel) -> None:
    first = post(deniz).json()["cancellation_id"]
    again = post(deniz, ref="ref-2")
    assert again.status_code == 409 and again.json()["code"] == "ALREADY_CANCELLED"
    assert again.json()["cancellation_id"] == first and deniz.poll_cancellation(first)["status"] == "DONE"


def test_a_reject_fault_ends_the_poll_rejected_and_the_policy_stands(deniz: DenizCancel) -> None:
    """REJECTED with the rule's reason; the reference stays bound to the rejected cancellation."""
    deniz.server.state.add_faults([{"operation": "cancel_policy", "fault": "reject", "reason": "HASAR_DOSYASI"}])
    cancellation_id = post(deniz).json()["cancellation_id"]
    assert deniz.poll_cancellation(cancellation_id) == {
        "cancellation_id": cancellation_id,
        "status": "REJECTED",
        "reason": "HASAR_DOSYASI",
    }
    assert deniz.status_word(POLICY) == "IN_FORCE"
    assert post(deniz).json()["cancellation_id"] == cancellation_id
    assert deniz.server.state.counts()["cancellations_by_policy"] == {}


def test_an_expired_policy_is_refused_at_once_an_open_claim_in_the_background(deniz: DenizCancel) -> None:
    deniz.server.state.seed_policies(
        [seeded("DZ-P-BITTI-1", status="EXPIRED"), seeded("DZ-P-HASAR-1", product="dask", open_claim=True)]
    )
    expired = post(deniz, policy_no="DZ-P-BITTI-1")
    assert (expired.status_code, expired.json()["code"]) == (422, "CANCEL_NOT_ALLOWED")
    claim = post(deniz, ref="ref-2", policy_no="DZ-P-HASAR-1")
    assert claim.status_code == 202
    assert deniz.poll_cancellation(claim.json()["cancellation_id"])["reason"] == "OPEN_CLAIM"


@pytest.mark.parametrize(
    ("changes", "detail"),
    [({"reason": "customer_request"}, "reason"), ({"effective_on": "01.12.2026"}, "effective_on")],
)
def test_invalid_request_names_the_field(deniz: DenizCancel, changes: dict, detail: str) -> None:
    response = post(deniz, **changes)
    assert (response.status_code, response.json()["code"]) == (400, "INVALID_REQUEST")
    assert detail in response.json()["detail"]
    missing = deniz.request("POST", f"/policies/{POLICY}/cancellations", json={"reason": "OTHER"})
    assert missing.status_code == 400 and "client_reference" in missing.json()["detail"]


def test_polls_lag_and_are_the_agencys_own(deniz: DenizCancel) -> None:
    deniz.server.state.configure(poll_lag_seconds=0.3)
    cancellation_id = post(deniz).json()["cancellation_id"]
    assert deniz.request("GET", f"/cancellations/{cancellation_id}").status_code == 404
    time.sleep(0.35)
    assert deniz.request("GET", f"/cancellations/{cancellation_id}").json()["status"] == "DONE"
    other = deniz.request("GET", f"/cancellations/{cancellation_id}", auth=("acente2", "deniz-pass-2"))
    assert other.status_code == 404


def test_poll_faults_can_aim_at_one_cancellation(deniz: DenizCancel) -> None:
    cancellation_id = post(deniz).json()["cancellation_id"]
    deniz.server.state.add_faults(
        [
            {
                "operation": "cancel_poll",
                "fault": "error",
                "code": "SERVICE_UNAVAILABLE",
                "match": {"cancellation_id": cancellation_id},
            }
        ]
    )
    assert deniz.request("GET", f"/cancellations/{cancellation_id}").status_code == 503
    assert deniz.request("GET", f"/cancellations/{cancellation_id}").status_code == 200


def test_a_duplicate_reference_fault_cancels_first_and_names_the_cancellation(deniz: DenizCancel) -> None:
    deniz.server.state.add_faults([{"operation": "cancel_policy", "fault": "error", "code": "DUPLICATE_REFERENCE"}])
    response = post(deniz)
    assert response.status_code == 409
    assert deniz.poll_cancellation(response.json()["cancellation_id"])["status"] == "DONE"


def test_the_list_pages_by_cursor_and_refuses_another_ranges(deniz: DenizCancel) -> None:
    deniz.server.state.seed_policies([seeded(f"DZ-P-LISTE-{i:03d}") for i in range(120)])
    first = deniz.list_response(LIST_FROM, LIST_TO).json()
    assert len(first["items"]) == 100 and first["next_cursor"]
    last = deniz.list_response(LIST_FROM, LIST_TO, first["next_cursor"]).json()
    assert len(last["items"]) == 21 and last["next_cursor"] is None
    assert not {item["policy_no"] for item in first["items"]} & {item["policy_no"] for item in last["items"]}
    for cursor, range_to in ((first["next_cursor"], "2026-05-30"), ("bu-bir-imlec-degil", LIST_TO)):
        refused = deniz.list_response(LIST_FROM, range_to, cursor)
        assert (refused.status_code, refused.json()["code"]) == (400, "INVALID_REQUEST")
        assert "cursor" in refused.json()["detail"]
    empty = deniz.list_response("2020-01-01", "2020-01-31").json()
    assert empty == {"items": [], "next_cursor": None}
