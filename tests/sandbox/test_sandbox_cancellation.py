"""Cancellation and the production list, as every sandbox insurer serves them (CONTRACTS.md, the
last two sections); each insurer's own wire details are in `test_sandbox_<code>_cancellation.py`."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
import requests

from sandbox import SandboxServer

from .cancellation_wire import (
    CANCEL_CLIENTS,
    EFFECTIVE_ON,
    ENDS_ON,
    ISSUED_ON,
    LIST_FROM,
    LIST_TO,
    PREMIUM,
    REFUND,
    STARTS_ON,
    read_list,
    seeded,
    today_in_turkiye,
)


@pytest.fixture(params=list(CANCEL_CLIENTS))
def client(request: pytest.FixtureRequest, servers: dict[str, SandboxServer], http: requests.Session) -> Any:
    """Each insurer's cancellation client in turn."""
    server = servers[request.param]
    server.state.configure(issuance_processing_seconds=0.05)
    return CANCEL_CLIENTS[request.param](server, http)


def seed(client: Any, *policies: dict[str, Any]) -> None:
    client.server.state.seed_policies(list(policies))


def number(client: Any, suffix: str) -> str:
    return f"{client.server.insurer.prefix}-P-{suffix}"


# --- cancellation -------------------------------------------------------------------------------


def test_a_cancellation_refunds_the_unused_days_and_ends_the_policy(client: Any) -> None:
    """premium x days left / days in the period, half-up to kuruş; policy_status then says cancelled."""
    policy_no = number(client, "IPTAL-1")
    seed(client, seeded(policy_no))
    answer = client.cancel(policy_no, "customer_request", EFFECTIVE_ON, ref="iptal-1")
    assert answer.code == "OK", answer.raw
    assert answer.result == {"policy_no": policy_no, "refund": REFUND, "cancelled_on": EFFECTIVE_ON}
    assert client.status_word(policy_no) == client.status_words["CANCELLED"]
    assert client.server.state.counts()["cancellations_by_policy"] == {policy_no: 1}


def test_a_duplicate_refunds_the_whole_premium_from_the_start_date(client: Any) -> None:
    """Whatever effective_on says."""
    policy_no = number(client, "MUKERRER-1")
    seed(client, seeded(policy_no))
    answer = client.cancel(policy_no, "duplicate", EFFECTIVE_ON, ref="iptal-mukerrer")
    assert answer.code == "OK", answer.raw
    assert answer.result == {"policy_no": policy_no, "refund": PREMIUM, "cancelled_on": STARTS_ON}


def test_the_refund_rounds_half_up_to_kurus(client: Any) -> None:
    """1000.00 x 1 / 8 = 125.00; 0.05 x 1 / 2 = 0.025 -> 0.03."""
    first, second = number(client, "YUVARLA-1"), number(client, "YUVARLA-2")
    seed(
        client,
        seeded(first, premium="1000.00", starts_on="2026-06-01", ends_on="2026-06-09"),
        seeded(second, premium="0.05", starts_on="2026-06-01", ends_on="2026-06-03"),
    )
    assert client.cancel(first, "vehicle_sold", "2026-06-08", ref="y-1").result["refund"] == "125.00"
    assert client.cancel(second, "other", "2026-06-02", ref="y-2").result["refund"] == "0.03"


def test_an_issued_policy_is_cancelled_with_the_premium_it_was_quoted(client: Any) -> None:
    """A policy issued through the sandbox has its quote's premium: cancelled on its first day, all of it back."""
    policy_no = client.policy_no()
    policy = client.server.state.ledger.policies[policy_no]
    quote = client.server.state.ledger.quotes[policy.quote_no]
    answer = client.cancel(policy_no, "customer_request", policy.starts_on.isoformat(), ref="iptal-issued")
    assert answer.code == "OK", answer.raw
    assert answer.result["refund"] == str(quote.premium)


def test_already_cancelled_carries_the_first_result(client: Any) -> None:
    """A second cancellation (another reference, another day) is answered with the first one's result."""
    policy_no = number(client, "ZATEN-1")
    seed(client, seeded(policy_no))
    first = client.cancel(policy_no, "customer_request", EFFECTIVE_ON, ref="iptal-a")
    again = client.cancel(policy_no, "vehicle_sold", "2027-01-15", ref="iptal-b")
    assert again.code == client.already, again.raw
    assert again.result == first.result
    assert client.server.state.counts()["cancellations_by_policy"] == {policy_no: 1}


def test_a_policy_cancelled_outside_the_service_answers_already_cancelled(client: Any) -> None:
    """Cancelled through the control API (the insurer's portal): "already cancelled", with a
    result by the same rule, and not counted as a cancellation of the web service."""
    policy_no = number(client, "PORTAL-IPTAL")
    seed(client, seeded(policy_no))
    client.server.state.set_policy_status(policy_no, "CANCELLED")
    answer = client.cancel(policy_no, "customer_request", EFFECTIVE_ON, ref="iptal-portal")
    assert answer.code == client.already, answer.raw
    assert answer.result["policy_no"] == policy_no and Decimal(answer.result["refund"]) <= Decimal(PREMIUM)
    assert STARTS_ON <= answer.result["cancelled_on"] <= ENDS_ON
    assert client.server.state.counts()["cancellations_by_policy"] == {}


@pytest.mark.parametrize(
    ("seed_changes", "effective_on", "reason", "expected"),
    [
        ({}, "2026-05-31", "customer_request", "invalid"),  # before the period
        ({}, "2027-06-02", "customer_request", "invalid"),  # after it
        ({}, "2026-13-01", "customer_request", "invalid"),  # no such day
        ({}, "", "customer_request", "invalid"),
        ({}, EFFECTIVE_ON, "bored", "invalid"),
        ({"status": "EXPIRED"}, EFFECTIVE_ON, "customer_request", "not_allowed"),
        ({"product": "dask", "open_claim": True}, EFFECTIVE_ON, "customer_request", "not_allowed"),
    ],
)
def test_refusals(client: Any, seed_changes: dict, effective_on: str, reason: str, expected: str) -> None:
    """A date outside the period or malformed, an unknown reason: validation; an expired policy or
    a DASK policy with an open claim: the insurer will not cancel it (Deniz: a REJECTED poll)."""
    policy_no = number(client, "RED-1")
    seed(client, seeded(policy_no, **seed_changes))
    answer = client.cancel(policy_no, reason, effective_on, ref="iptal-red")
    if expected == "invalid":
        wanted = client.invalid_reason if reason == "bored" else client.invalid
    else:
        wanted = client.claim_refusal if seed_changes.get("open_claim") else client.not_allowed
    assert answer.code == wanted, answer.raw
    assert client.status_word(policy_no) != client.status_words["CANCELLED"]
    assert client.server.state.counts()["cancellations_by_policy"] == {}


def test_a_dask_policy_without_an_open_claim_is_cancelled(client: Any) -> None:
    policy_no = number(client, "DASK-1")
    seed(client, seeded(policy_no, product="dask"))
    assert client.cancel(policy_no, "customer_request", EFFECTIVE_ON, ref="iptal-dask").code == "OK"


def test_unknown_and_other_agencies_policies_are_not_found(client: Any) -> None:
    """A policy the insurer does not have, or another agency's, is each insurer's not-found."""
    theirs = number(client, "ACENTE2-1")
    seed(client, seeded(theirs, agency="ACENTE2"))
    assert client.cancel(number(client, "YOK-1"), "other", EFFECTIVE_ON, ref="iptal-yok").code == client.not_found
    assert client.cancel(theirs, "other", EFFECTIVE_ON, ref="iptal-el").code == client.not_found
    assert client.server.state.counts()["cancellations_by_policy"] == {}


def test_a_repeat_of_the_reference_is_answered_with_the_first_result(client: Any) -> None:
    """The same reference again: Anka's replay, Çınar's duplicate, Deniz's 409 with the
    cancellation, Boğaziçi's BS-330 (no deduplication, but the policy is cancelled already)."""
    policy_no = number(client, "TEKRAR-1")
    seed(client, seeded(policy_no))
    first = client.cancel(policy_no, "customer_request", EFFECTIVE_ON, ref="iptal-tekrar")
    again = client.cancel(policy_no, "customer_request", EFFECTIVE_ON, ref="iptal-tekrar")
    assert again.code == client.repeat, again.raw
    assert again.result == first.result
    assert client.server.state.counts()["cancellations_by_policy"] == {policy_no: 1}


def test_commit_then_drop_cancels_and_loses_the_answer(client: Any) -> None:
    """The cancellation is done and counted; the client sees a reset; asking again under the same
    reference gives the first result."""
    policy_no = number(client, "DUSUR-1")
    seed(client, seeded(policy_no))
    client.server.state.add_faults([{"operation": "cancel_policy", "fault": "commit_then_drop"}])
    with pytest.raises(requests.exceptions.ConnectionError):
        client.cancel(policy_no, "customer_request", EFFECTIVE_ON, ref="iptal-dusur")
    assert client.status_word(policy_no) == client.status_words["CANCELLED"]
    again = client.cancel(policy_no, "customer_request", EFFECTIVE_ON, ref="iptal-dusur")
    assert again.code == client.repeat and again.result["refund"] == REFUND
    counts = client.server.state.counts()
    assert counts["cancellations_by_policy"] == {policy_no: 1}
    assert counts["faults"] == {"cancel_policy": 1} and counts["received"]["cancel_policy"] == 2


def test_an_error_fault_with_commit_cancels_first(client: Any) -> None:
    """`commit: true` applies to cancel_policy as to issuance: the insurer's error, the deed done."""
    policy_no = number(client, "HATA-1")
    seed(client, seeded(policy_no))
    client.server.state.add_faults(
        [{"operation": "cancel_policy", "fault": "error", "code": client.internal_error, "commit": True}]
    )
    assert client.cancel(policy_no, "customer_request", EFFECTIVE_ON, ref="iptal-hata").code == client.internal_error
    assert client.server.state.counts()["cancellations_by_policy"] == {policy_no: 1}


# --- the production list ------------------------------------------------------------------------


def test_the_list_pages_newest_first_and_holds_only_the_agencys_own_policies(client: Any) -> None:
    """250 of ACENTE1's policies in May: three pages (100, 100, 50), newest issue first, none twice;
    ACENTE2's and June's are left out."""
    mine = [
        seeded(number(client, f"URETIM-{i:03d}"), issued_on=f"2026-05-{1 + i % 31:02d}", premium=f"{1000 + i}.50")
        for i in range(250)
    ]
    theirs = seeded(number(client, "URETIM-EL"), agency="ACENTE2")
    june = seeded(number(client, "URETIM-HAZIRAN"), issued_on="2026-06-01")
    seed(client, *mine, theirs, june)
    pages = [client.list_page(LIST_FROM, LIST_TO)]
    while pages[-1].following is not None:
        pages.append(client.list_page(LIST_FROM, LIST_TO, pages[-1].following))
    assert [len(page.items) for page in pages] == [100, 100, 50]
    listed = [item for page in pages for item in page.items]
    # Newest issue first; on one day, the policy seeded later was issued later.
    expected = sorted(mine, key=lambda p: (p["issued_on"], p["policy_no"]), reverse=True)
    assert [item["policy_no"] for item in listed] == [p["policy_no"] for p in expected]
    assert listed[0] == {
        "policy_no": expected[0]["policy_no"],
        "quote_no": "",
        "product": "trafik",
        "status": "ACTIVE",
        "starts_on": STARTS_ON,
        "ends_on": ENDS_ON,
        "premium": expected[0]["premium"],
    }


def test_the_list_shows_products_statuses_and_the_quote_of_an_issued_policy(client: Any) -> None:
    """An issued policy (today, with its quote) is listed by its issue date; a cancelled one as cancelled."""
    policy_no = client.policy_no()
    policy = client.server.state.ledger.policies[policy_no]
    seed(client, seeded(number(client, "KASKO-1"), product="kasko", status="CANCELLED", issued_on=today_in_turkiye()))
    items, pages = read_list(client, today_in_turkiye(), today_in_turkiye())
    assert pages == 1
    by_number = {item["policy_no"]: item for item in items}
    assert by_number[policy_no]["quote_no"] == policy.quote_no and by_number[policy_no]["product"] == "trafik"
    assert by_number[policy_no]["premium"] == str(client.server.state.ledger.quotes[policy.quote_no].premium)
    assert by_number[policy_no]["starts_on"] == policy.starts_on.isoformat()
    assert by_number[number(client, "KASKO-1")]["status"] == "CANCELLED"
    assert by_number[number(client, "KASKO-1")]["product"] == "kasko"


def test_an_empty_range_has_no_pages(client: Any) -> None:
    page = client.list_page("2020-01-01", "2020-01-31")
    assert (page.code, page.items, page.following) == ("OK", [], None)


@pytest.mark.parametrize(
    ("issued_from", "issued_to"),
    [
        ("2026-05-01", "2026-06-02"),  # 32 days after
        ("2026-05-31", "2026-05-01"),  # reversed
    ],
)
def test_a_range_over_31_days_or_reversed_is_refused(client: Any, issued_from: str, issued_to: str) -> None:
    assert client.list_page(issued_from, issued_to).code == client.range_invalid


def test_a_range_of_31_days_after_its_start_is_served(client: Any) -> None:
    seed(client, seeded(number(client, "SINIR-1"), issued_on="2026-06-01"))
    items, _ = read_list(client, "2026-05-01", "2026-06-01")
    assert [item["policy_no"] for item in items] == [number(client, "SINIR-1")]


def test_list_faults_apply_to_the_named_page(client: Any) -> None:
    """Fault rules name policy_list; `after` lets the first pages through."""
    seed(client, *[seeded(number(client, f"SAYFA-{i:03d}")) for i in range(150)])
    client.server.state.add_faults([{"operation": "policy_list", "fault": "reset", "after": 1}])
    first = client.list_page(LIST_FROM, LIST_TO)
    assert first.code == "OK" and len(first.items) == 100
    with pytest.raises(requests.exceptions.ConnectionError):
        client.list_page(LIST_FROM, LIST_TO, first.following)
    second = client.list_page(LIST_FROM, LIST_TO, first.following)
    assert len(second.items) == 50 and second.following is None
    assert client.server.state.counts()["received"]["policy_list"] == 3


def test_seeded_policies_are_checked(servers: dict[str, SandboxServer]) -> None:
    """Bad seeds are a 400 over HTTP and change nothing."""
    server = servers["anka"]
    for bad in (
        {"product": "yat"},
        {"premium": 12.5},
        {"premium": "on iki"},
        {"agency": ""},
        {"issued_on": "31.05.2026"},
        {"open_claim": "yes"},
        {"colour": "red"},
    ):
        body = {"policies": [seeded("AK-P-KOTU-1", **bad)]}
        response = requests.post(server.base_url + "/_sandbox/policies", json=body, timeout=5)
        assert response.status_code == 400 and response.json()["error"], bad
    assert "AK-P-KOTU-1" not in server.state.ledger.policies
    response = requests.post(
        server.base_url + "/_sandbox/policies", json={"policies": [seeded("AK-P-IYI-1")]}, timeout=5
    )
    assert response.status_code == 200
    policy = server.state.ledger.policies["AK-P-IYI-1"]
    assert (policy.agency, policy.product, policy.premium, policy.issued_at is not None) == (
        "ACENTE1",
        "trafik",
        Decimal(PREMIUM),
        True,
    )
    assert ISSUED_ON == "2026-05-31"  # the seeds' issue day, inside LIST_FROM..LIST_TO


# --- fault rules on the new operations ------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("anka", {"operation": "cancel_policy", "fault": "commit_then_drop", "drop": "hang", "seconds": 1}),
        ("anka", {"operation": "cancel_policy", "fault": "error", "code": "INTERNAL_ERROR", "commit": True}),
        ("deniz", {"operation": "cancel_policy", "fault": "reject", "reason": "OPEN_CLAIM"}),
        ("deniz", {"operation": "cancel_poll", "fault": "reset", "match": {"cancellation_id": "DZ-C-1"}}),
        ("cinar", {"operation": "policy_list", "fault": "throttle", "after": 1}),
    ],
)
def test_rules_on_the_new_operations_are_taken(servers: dict[str, SandboxServer], code: str, rule: dict) -> None:
    assert servers[code].state.add_faults([rule])[0]["operation"] == rule["operation"]


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("anka", {"operation": "policy_list", "fault": "commit_then_drop"}),
        ("anka", {"operation": "policy_list", "fault": "error", "code": "INTERNAL_ERROR", "commit": True}),
        ("anka", {"operation": "cancel_policy", "fault": "reject"}),  # Deniz's kind only
        ("deniz", {"operation": "policy_list", "fault": "reject"}),
    ],
)
def test_money_only_rules_are_refused_elsewhere(servers: dict[str, SandboxServer], code: str, rule: dict) -> None:
    response = requests.post(servers[code].base_url + "/_sandbox/faults", json={"faults": [rule]}, timeout=5)
    assert response.status_code == 400 and response.json()["error"]


def test_star_rules_reach_the_new_operations(client: Any) -> None:
    """ "*" is any business operation: cancel_policy and policy_list too."""
    client.server.state.add_faults([{"operation": "*", "fault": "html", "http_status": 502, "times": 2}])
    seed(client, seeded(number(client, "YILDIZ-1")))
    assert client.list_response(LIST_FROM, LIST_TO).status_code == 502
    response = client.cancel_response(number(client, "YILDIZ-1"), "other", EFFECTIVE_ON, ref="iptal-yildiz")
    assert response.status_code == 502
    assert client.server.state.counts()["faults"] == {"policy_list": 1, "cancel_policy": 1}
