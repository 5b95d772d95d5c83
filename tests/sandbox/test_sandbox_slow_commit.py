"""Slow issuances (issue 10): the insurer commits after the client gave up, and a dedup key
holds from the moment its request is received, so a re-send during the wait is a repeat.

The scenario: the issuance takes longer at the insurer than the client's read timeout; the
client looks the quote up at once (not issued yet), sends again, and the first one commits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import requests

from .sandbox_wire import AnkaClient, BogaziciClient, CinarClient, DenizClient

SLOW_SECONDS = 2.0  # the issuance's time at the insurer
READ_TIMEOUT = 0.5  # the client's patience, shorter on purpose


def slow_issue(client: Any) -> None:
    """The way to script "commit after N seconds": a latency fault on issue_policy."""
    client.server.state.add_faults([{"operation": "issue_policy", "fault": "latency", "seconds": SLOW_SECONDS}])


def policies_by_quote(client: Any) -> dict[str, list[str]]:
    return client.server.state.counts()["policies_by_quote"]


def wait_until(condition: Callable[[], bool], timeout: float = SLOW_SECONDS + 2) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def issue_times_out(client: Any, quote_no: str, **kw: Any) -> None:
    with pytest.raises(requests.exceptions.ReadTimeout):
        client.issue(quote_no, timeout=READ_TIMEOUT, **kw)


# --- commit after N seconds, client or no client ------------------------------------------------


def test_slow_issue_commits_after_the_client_gave_up(client: Any) -> None:
    """Latency on issue_policy: read timeout, nothing issued during the sleep, exactly one policy after."""
    quote_no = client.quote_no()
    slow_issue(client)
    issue_times_out(client, quote_no)
    assert policies_by_quote(client) == {}  # still sleeping at the insurer
    wait_until(lambda: bool(policies_by_quote(client)))
    (policy_no,) = policies_by_quote(client)[quote_no]
    assert client.status_word(policy_no) == client.status_words["ACTIVE"]
    assert client.server.state.counts()["received"]["issue_policy"] == 1


def test_bogazici_lookup_during_the_sleep_is_bs404_then_finds_the_policy(bogazici: BogaziciClient) -> None:
    """TeklifPoliceSorgu says "never issued" while the first Policelestir is still running."""
    quote_no = bogazici.quote_no()
    slow_issue(bogazici)
    issue_times_out(bogazici, quote_no)
    assert bogazici.call("TeklifPoliceSorgu", {"quote_no": quote_no})["HataKodu"] == "BS-404"
    wait_until(lambda: bool(policies_by_quote(bogazici)))
    found = bogazici.call("TeklifPoliceSorgu", {"quote_no": quote_no})
    assert found["Basarili"] == "true" and [found["PoliceNo"]] == policies_by_quote(bogazici)[quote_no]


def test_deniz_lookup_during_the_sleep_is_empty_then_shows_the_request(deniz: DenizClient) -> None:
    """GET ?client_reference= shows nothing while the POST is still running at Deniz."""
    quote_no = deniz.quote_no()
    slow_issue(deniz)
    issue_times_out(deniz, quote_no, ref="ref-slow")
    lookup = deniz.request("GET", "/policy-requests", params={"client_reference": "ref-slow"})
    assert lookup.status_code == 200 and lookup.json() == {"items": []}
    wait_until(lambda: bool(policies_by_quote(deniz)))
    (item,) = deniz.request("GET", "/policy-requests", params={"client_reference": "ref-slow"}).json()["items"]
    assert deniz.wait_for(item["request_id"])["policy_no"] == policies_by_quote(deniz)[quote_no][0]


def test_configured_latency_is_a_slow_commit_too(anka: AnkaClient) -> None:
    """latency_ms on issue_policy sleeps before the business logic as well: same outcome."""
    quote_no = anka.quote_no()
    anka.server.state.configure(latency_ms={"issue_policy": [1000, 1000]})
    issue_times_out(anka, quote_no)
    assert policies_by_quote(anka) == {}
    wait_until(lambda: bool(policies_by_quote(anka)))
    assert len(policies_by_quote(anka)[quote_no]) == 1


# --- a re-send during the sleep -----------------------------------------------------------------


def test_anka_resend_during_the_sleep_waits_and_replays(anka: AnkaClient) -> None:
    """Same Idempotency-Key while the first runs: waits for it, then the original 201, replayed."""
    quote_no = anka.quote_no()
    slow_issue(anka)
    issue_times_out(anka, quote_no, key="idem-slow")
    started = time.monotonic()
    again = anka.issue(quote_no, key="idem-slow")
    waited = time.monotonic() - started
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert policies_by_quote(anka) == {quote_no: [again.json()["policy_no"]]}
    assert SLOW_SECONDS - READ_TIMEOUT - 0.3 < waited < SLOW_SECONDS  # bounded by the first's remaining time


def test_cinar_resend_during_the_sleep_is_a_duplicate_naming_the_policy(cinar: CinarClient) -> None:
    """Same request_ref while the first runs: waits, then BIZ_DUPLICATE_REQUEST with data.police_no."""
    quote_no = cinar.quote_no()
    slow_issue(cinar)
    issue_times_out(cinar, quote_no, ref="ref-slow")
    body = cinar.issue(quote_no, ref="ref-slow").json()
    assert body["success"] is False and body["errorCode"] == "BIZ_DUPLICATE_REQUEST"
    assert policies_by_quote(cinar) == {quote_no: [body["data"]["police_no"]]}


def test_deniz_resend_during_the_sleep_is_409_naming_the_request(deniz: DenizClient) -> None:
    """Same client_reference while the first runs: waits, then 409 DUPLICATE_REFERENCE + request_id."""
    quote_no = deniz.quote_no()
    slow_issue(deniz)
    issue_times_out(deniz, quote_no, ref="ref-slow")
    again = deniz.issue(quote_no, ref="ref-slow")
    assert again.status_code == 409 and again.json()["code"] == "DUPLICATE_REFERENCE"
    (policy_no,) = policies_by_quote(deniz)[quote_no]
    assert deniz.wait_for(again.json()["request_id"])["policy_no"] == policy_no


def test_bogazici_resend_during_the_sleep_makes_a_second_policy(bogazici: BogaziciClient) -> None:
    """No key at Boğaziçi: the contract's hazard, reproduced (lookup BS-404, re-send, both commit)."""
    quote_no = bogazici.quote_no()
    slow_issue(bogazici)
    issue_times_out(bogazici, quote_no)
    assert bogazici.call("TeklifPoliceSorgu", {"quote_no": quote_no})["HataKodu"] == "BS-404"
    second = bogazici.result(bogazici.issue(quote_no))
    assert second["Basarili"] == "true"
    wait_until(lambda: len(policies_by_quote(bogazici).get(quote_no, [])) == 2)
    assert policies_by_quote(bogazici)[quote_no][0] == second["PoliceNo"]  # the re-send committed first


def test_another_key_during_the_sleep_is_not_held_up(anka: AnkaClient) -> None:
    """Only the same key waits: a new key is served at once, and is a new policy."""
    quote_no = anka.quote_no()
    slow_issue(anka)
    issue_times_out(anka, quote_no, key="idem-a")
    started = time.monotonic()
    other = anka.issue(quote_no, key="idem-b")
    assert other.status_code == 201 and "Idempotent-Replayed" not in other.headers
    assert time.monotonic() - started < 0.5
    wait_until(lambda: len(policies_by_quote(anka).get(quote_no, [])) == 2)


def start_a_slow_refusal(client: Any, quote_no: str) -> dict[str, str]:
    """A slow first request that will end in a refusal; returns the key argument it used."""
    if client.code == "anka":
        issue_times_out(client, quote_no, key="k-slow", card="tok_declined")
        return {"key": "k-slow"}
    if client.code == "cinar":
        issue_times_out(client, quote_no, ref="k-slow", card="tok_declined")
        return {"ref": "k-slow"}
    # Deniz binds a reference to any accepted request, even one that turns REJECTED: its
    # refusal is a request not accepted, such as one for an unknown quote.
    issue_times_out(client, "DZ-T-UNKNOWN-1", ref="k-slow")
    return {"ref": "k-slow"}


@pytest.mark.parametrize("code", ["anka", "cinar", "deniz"])
def test_a_refused_first_request_releases_the_key_for_the_waiting_one(
    code: str, servers: dict, http: requests.Session
) -> None:
    """Only a success binds: the request waiting on a refused one is served afresh."""
    client_classes: dict[str, type[AnkaClient | CinarClient | DenizClient]] = {
        "anka": AnkaClient,
        "cinar": CinarClient,
        "deniz": DenizClient,
    }
    client = client_classes[code](servers[code], http)
    quote_no = client.quote_no()
    slow_issue(client)
    key = start_a_slow_refusal(client, quote_no)
    started = time.monotonic()
    again = client.issue(quote_no, **key)
    assert time.monotonic() - started > SLOW_SECONDS - READ_TIMEOUT - 0.3  # it did wait for the first
    if code == "anka":
        assert again.status_code == 201 and "Idempotent-Replayed" not in again.headers
    elif code == "cinar":
        assert again.json()["success"] is True
    else:
        assert again.status_code == 202
    assert len(policies_by_quote(client)[quote_no]) == 1
