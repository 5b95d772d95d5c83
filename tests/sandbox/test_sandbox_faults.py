"""Fault injection, the same for every insurer: transport faults, throttle signals, rule semantics."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from typing import Any

import pytest
import requests

from sandbox.core import ConfigError

from .sandbox_wire import OTHER_TCKN, TRAFIK, AnkaClient, BogaziciClient, CinarClient, DenizClient


def add(client: Any, **rule: Any) -> None:
    client.server.state.add_faults([rule])


def test_reset_is_a_connection_error_and_still_counted(client: Any) -> None:
    """TCP RST, no bytes: requests raises ConnectionError; the next call on the session works."""
    add(client, operation="trafik_quote", fault="reset")
    with pytest.raises(requests.exceptions.ConnectionError):
        client.trafik_quote()
    counts = client.server.state.counts()
    assert counts["received"]["trafik_quote"] == 1 and counts["faults"] == {"trafik_quote": 1}
    assert client.succeeded(client.trafik_quote())


def test_hang_is_a_read_timeout(client: Any) -> None:
    add(client, operation="trafik_quote", fault="hang", seconds=0.5)
    with pytest.raises(requests.exceptions.ReadTimeout):
        client.trafik_quote(timeout=0.15)
    assert client.succeeded(client.trafik_quote())


@pytest.mark.parametrize("status", [None, 503, 504])
def test_html_is_the_gateways_error_page(client: Any, status: int | None) -> None:
    add(client, operation="*", fault="html", **({"http_status": status} if status else {}))
    response = client.trafik_quote()
    assert response.status_code == (status or 502)
    assert response.headers["Content-Type"].startswith("text/html") and b"<html>" in response.content


def test_empty_body(client: Any) -> None:
    add(client, operation="trafik_quote", fault="empty")
    response = client.trafik_quote()
    assert response.status_code == 200 and response.content == b""
    assert response.headers["Content-Type"] == client.content_type


def test_garbage_is_a_truncated_body_with_the_right_content_type(client: Any) -> None:
    add(client, operation="trafik_quote", fault="garbage")
    response = client.trafik_quote()
    assert response.status_code == 200 and response.content
    assert response.headers["Content-Type"] == client.content_type
    with pytest.raises((ValueError, ET.ParseError)):
        client.parse(response.content)


def test_wrong_content_type_labels_a_real_answer_text_html(client: Any) -> None:
    add(client, operation="trafik_quote", fault="wrong_content_type")
    response = client.trafik_quote()
    assert response.headers["Content-Type"].startswith("text/html")
    assert client.succeeded(response)


def test_latency_delays_a_normal_answer(client: Any) -> None:
    add(client, operation="trafik_quote", fault="latency", seconds=0.2)
    started = time.monotonic()
    response = client.trafik_quote()
    assert time.monotonic() - started >= 0.2 and client.succeeded(response)


def test_throttle_fault_is_the_insurers_own_signal(client: Any) -> None:
    add(client, operation="trafik_quote", fault="throttle", wait_seconds=2)
    assert client.is_throttle_signal(client.trafik_quote())
    counts = client.server.state.counts()
    assert counts["throttled"] == {"trafik_quote": 1} and counts["faults"] == {"trafik_quote": 1}


def test_bucket_throttle_is_the_insurers_own_signal(client: Any) -> None:
    client.server.state.configure(default_rate_per_second=1.0, default_burst=3)
    responses = [client.trafik_quote() for _ in range(4)]  # cinar spends one token on its token call
    assert client.is_throttle_signal(responses[-1])
    assert client.server.state.counts()["total_throttled"] >= 1


def test_commit_then_drop_issues_the_policy_then_resets(client: Any) -> None:
    """The client sees a connection error; the insurer has the policy."""
    quote_no = client.quote_no()
    add(client, operation="issue_policy", fault="commit_then_drop")
    with pytest.raises(requests.exceptions.ConnectionError):
        client.issue(quote_no)
    counts = client.server.state.counts()
    assert counts["issued_total"] == 1 and list(counts["policies_by_quote"]) == [quote_no]


def test_commit_then_drop_with_hang_is_a_read_timeout(client: Any) -> None:
    quote_no = client.quote_no()
    add(client, operation="issue_policy", fault="commit_then_drop", drop="hang", seconds=0.5)
    with pytest.raises(requests.exceptions.ReadTimeout):
        client.issue(quote_no, timeout=0.15)
    assert client.server.state.counts()["issued_total"] == 1


def test_anka_retry_after_commit_then_drop_replays_the_policy(anka: AnkaClient) -> None:
    """Retrying with the same Idempotency-Key is safe: the same policy, still one."""
    quote_no = anka.quote_no()
    add(anka, operation="issue_policy", fault="commit_then_drop")
    with pytest.raises(requests.exceptions.ConnectionError):
        anka.issue(quote_no, key="k")
    retry = anka.issue(quote_no, key="k")
    assert retry.status_code == 201
    assert anka.server.state.counts()["policies_by_quote"] == {quote_no: [retry.json()["policy_no"]]}


def test_bogazici_dropped_issuance_is_visible_to_teklif_police_sorgu(bogazici: BogaziciClient) -> None:
    quote_no = bogazici.quote_no()
    add(bogazici, operation="issue_policy", fault="commit_then_drop")
    with pytest.raises(requests.exceptions.ConnectionError):
        bogazici.issue(quote_no)
    assert bogazici.call("TeklifPoliceSorgu", {"quote_no": quote_no})["Basarili"] == "true"


def test_cinar_retry_after_commit_then_drop_is_a_duplicate(cinar: CinarClient) -> None:
    quote_no = cinar.quote_no()
    add(cinar, operation="issue_policy", fault="commit_then_drop")
    with pytest.raises(requests.exceptions.ConnectionError):
        cinar.issue(quote_no, ref="r")
    again = cinar.issue(quote_no, ref="r").json()
    assert again["errorCode"] == "BIZ_DUPLICATE_REQUEST" and again["data"]["police_no"]


def test_deniz_dropped_request_is_found_by_client_reference(deniz: DenizClient) -> None:
    quote_no = deniz.quote_no()
    add(deniz, operation="issue_policy", fault="commit_then_drop")
    with pytest.raises(requests.exceptions.ConnectionError):
        deniz.issue(quote_no, ref="r")
    items = deniz.request("GET", "/policy-requests", params={"client_reference": "r"}).json()["items"]
    assert len(items) == 1 and deniz.wait_for(items[0]["request_id"])["status"] == "ISSUED"


# --- rule semantics (one insurer is enough: the rule engine is shared) --------------------------


def test_times_applies_to_the_next_n_calls(anka: AnkaClient) -> None:
    add(anka, operation="trafik_quote", fault="error", code="NOT_ELIGIBLE", times=2)
    assert [anka.trafik_quote().status_code for _ in range(3)] == [422, 422, 200]


def test_after_lets_the_first_calls_through(anka: AnkaClient) -> None:
    add(anka, operation="trafik_quote", fault="error", code="RISK_DECLINED", after=2)
    assert [anka.trafik_quote().status_code for _ in range(4)] == [200, 200, 422, 200]


def test_match_limits_the_rule_to_one_input(anka: AnkaClient) -> None:
    add(anka, operation="*", fault="error", code="RISK_DECLINED", times=5, match={"plate": "06AB1234"})
    assert anka.trafik_quote().status_code == 200
    assert anka.trafik_quote({**TRAFIK, "plate": "06AB1234"}).status_code == 422
    add(anka, operation="*", fault="error", code="NOT_FOUND", match={"owner_id": OTHER_TCKN})
    assert anka.trafik_quote({**TRAFIK, "owner_id": OTHER_TCKN}).status_code == 404


def test_rate_is_drawn_from_the_seeded_rng(anka: AnkaClient) -> None:
    """Same seed, same calls, same faulted calls; rate rules are unlimited by default."""

    def pattern() -> list[int]:
        anka.server.state.reset()
        anka.server.state.configure(seed=7)
        add(anka, operation="trafik_quote", fault="error", code="INTERNAL_ERROR", rate=0.5)
        return [anka.trafik_quote().status_code for _ in range(20)]

    first = pattern()
    assert first == pattern()
    assert 3 <= first.count(500) <= 17


def test_star_matches_business_calls_not_helpers(cinar: CinarClient) -> None:
    add(cinar, operation="*", fault="error", code="SYS_BUSY", times=10)
    assert cinar.token_response().json()["access_token"]
    assert cinar.trafik_quote().json()["errorCode"] == "SYS_BUSY"


def test_rules_report_what_they_saw_and_applied(anka: AnkaClient) -> None:
    add(anka, operation="trafik_quote", fault="error", code="NOT_FOUND", after=1)
    anka.trafik_quote()
    anka.trafik_quote()
    (rule,) = anka.server.state.faults()
    assert (rule["seen"], rule["applied"], rule["times"]) == (2, 1, 1)


def test_auth_failures_are_not_faulted(anka: AnkaClient) -> None:
    add(anka, operation="trafik_quote", fault="reset")
    assert anka.trafik_quote(api_key="wrong").status_code == 401
    with pytest.raises(requests.exceptions.ConnectionError):
        anka.trafik_quote()


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("anka", {"operation": "trafik_quote", "fault": "soap_fault"}),
        ("anka", {"operation": "issue_policy", "fault": "reject"}),
        ("deniz", {"operation": "trafik_quote", "fault": "reject"}),
        ("anka", {"operation": "trafik_quote", "fault": "commit_then_drop"}),
        ("anka", {"operation": "token", "fault": "reset"}),
        ("anka", {"operation": "trafik_quote", "fault": "error"}),
        ("anka", {"operation": "trafik_quote", "fault": "reset", "tims": 2}),
        ("anka", {"operation": "trafik_quote", "fault": "reset", "rate": 2}),
        ("anka", {"operation": "trafik_quote", "fault": "reset", "match": {"colour": "red"}}),
        ("anka", {"operation": "trafik_quote", "fault": "commit_then_drop", "drop": "explode"}),
    ],
)
def test_bad_rules_are_refused(servers: dict, code: str, rule: dict) -> None:
    """A typo in a rule fails loudly, from Python and over HTTP."""
    with pytest.raises(ConfigError):
        servers[code].state.add_faults([rule])
    response = requests.post(servers[code].base_url + "/_sandbox/faults", json={"faults": [rule]}, timeout=5)
    assert response.status_code == 400 and response.json()["error"]
    assert servers[code].state.faults() == []
