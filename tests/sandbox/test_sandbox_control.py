"""The /_sandbox/ control endpoints, the Python API and the command line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from sandbox import DEFAULT_ACCOUNTS, SandboxServer, insurer_class, registered_codes, start_all, start_sandbox
from tests.fifth_insurer import TEST_ONLY_CODES

from .sandbox_wire import TRAFIK, AnkaClient, BogaziciClient, DenizClient

REPO_ROOT = Path(__file__).resolve().parents[2]


def control(server: SandboxServer, method: str, path: str, body: Any = None) -> requests.Response:
    return requests.request(method, f"{server.base_url}/_sandbox/{path}", json=body, timeout=5)


def test_seeded_policies_speak_each_insurers_vocabulary(client: Any) -> None:
    """Seed, read, change over HTTP: the wire shows the insurer's own status words."""
    server = client.server
    policy_no = f"{client.server.insurer.prefix}-P-700001"
    assert (
        control(server, "POST", "policies", {"policies": [{"policy_no": policy_no, "status": "ACTIVE"}]}).status_code
        == 200
    )
    assert client.status_word(policy_no) == client.status_words["ACTIVE"]
    for status in ("CANCELLED", "EXPIRED"):
        assert control(server, "POST", f"policies/{policy_no}", {"status": status}).status_code == 200
        assert client.status_word(policy_no) == client.status_words[status]
    assert server.state.counts()["issued_total"] == 0  # seeded, not issued


def test_unknown_policies_are_active_when_known_policies_only_is_off(client: Any) -> None:
    prefix = client.server.insurer.prefix
    assert client.status_word(f"{prefix}-P-123456") is None
    assert (
        control(client.server, "PUT", "config", {"known_policies_only": False}).json()["known_policies_only"] is False
    )
    assert client.status_word(f"{prefix}-P-123456") == client.status_words["ACTIVE"]
    assert client.status_word("XX-P-123456") is None  # another insurer's number is not well-formed here


def test_issued_policies_can_be_cancelled_through_the_control_api(anka: AnkaClient) -> None:
    policy_no = anka.issue(anka.quote_no()).json()["policy_no"]
    control(anka.server, "POST", f"policies/{policy_no}", {"status": "CANCELLED"})
    assert anka.status_word(policy_no) == "CANCELLED"
    assert control(anka.server, "POST", "policies/AK-P-000000", {"status": "CANCELLED"}).status_code == 404
    assert control(anka.server, "POST", f"policies/{policy_no}", {"status": "GONE"}).status_code == 400


def test_seeded_policy_with_a_quote_is_found_by_teklif_police_sorgu(bogazici: BogaziciClient) -> None:
    bogazici.server.state.seed_policies([{"policy_no": "BG-P-900001", "status": "ACTIVE", "quote_no": "BG-T-900001"}])
    assert bogazici.call("TeklifPoliceSorgu", {"quote_no": "BG-T-900001"})["PoliceNo"] == "BG-P-900001"


def test_config_is_partial_validated_and_reset(anka: AnkaClient) -> None:
    server = anka.server
    assert control(server, "GET", "config").json()["quote_ttl_seconds"] == 900
    updated = control(server, "PUT", "config", {"quote_ttl_seconds": 60, "latency_ms": [0, 0]}).json()
    assert updated["quote_ttl_seconds"] == 60 and updated["token_ttl_seconds"] == 300
    for bad in (
        {"quote_ttl": 1},
        {"latency_ms": [5, 1]},
        {"default_burst": 0},
        {"known_policies_only": "no"},
        {"seed": 1.5},
        {"poll_lag_seconds": -1},
        {"poll_lag_seconds": "2"},
    ):
        response = control(server, "PUT", "config", bad)
        assert response.status_code == 400 and response.json()["error"]
    assert control(server, "POST", "reset").json() == {"ok": True}
    assert control(server, "GET", "config").json()["quote_ttl_seconds"] == 900


def test_latency_config_delays_business_calls(deniz: DenizClient) -> None:
    """[min, max] for every call, or per operation with "*" as the fallback."""
    deniz.server.state.configure(latency_ms={"trafik_quote": [150, 150], "*": [0, 0]})
    started = time.monotonic()
    deniz.trafik_quote()
    assert time.monotonic() - started >= 0.15
    started = time.monotonic()
    deniz.request("GET", "/addresses/1234567890")
    assert time.monotonic() - started < 0.15


def test_faults_endpoints_add_list_and_clear(anka: AnkaClient) -> None:
    server = anka.server
    rule = {"operation": "trafik_quote", "fault": "html", "rate": 0.5}
    listed = control(server, "POST", "faults", {"faults": [rule]}).json()["faults"]
    assert (listed[0]["fault"], listed[0]["rate"], listed[0]["times"]) == ("html", 0.5, None)  # rate: unlimited
    assert len(control(server, "POST", "faults", {"faults": [rule]}).json()["faults"]) == 2  # appends
    assert len(control(server, "GET", "faults").json()["faults"]) == 2
    assert control(server, "DELETE", "faults").json() == {"faults": []}
    assert server.state.faults() == []


def test_counts_tell_the_insurers_side(anka: AnkaClient) -> None:
    """received (all), throttled, faults, per agency, policies per quote and cancellations per policy."""
    anka.trafik_quote(api_key="wrong")
    quote_no = anka.quote_no()
    anka.issue(quote_no)
    anka.quote_no(api_key="anka-key-acente2")
    anka.server.state.add_faults([{"operation": "trafik_quote", "fault": "throttle"}])
    anka.trafik_quote()
    counts = control(anka.server, "GET", "counts").json()
    policy_no = counts["policies_by_quote"][quote_no][0]
    assert counts == {
        "received": {"trafik_quote": 4, "issue_policy": 1},
        "throttled": {"trafik_quote": 1},
        "faults": {"trafik_quote": 1},
        "received_by_account": {"ACENTE1": 3, "ACENTE2": 1},
        "total_received": 5,
        "total_throttled": 1,
        "total_faults": 1,
        "policies_by_quote": {quote_no: [policy_no]},
        "issued_total": 1,
        "cancellations_by_policy": {},
    }


def test_accounts_can_be_added_with_their_own_rate(client: Any) -> None:
    """A new agency's credentials work at once; its bucket is its own."""
    code = client.code
    template = DEFAULT_ACCOUNTS[code][0]["credentials"]
    credentials = {key: f"{value}-new" for key, value in template.items()}
    body = {"accounts": [{"credentials": credentials, "agency_code": "ACENTE3", "rate_per_second": 0.2, "burst": 2}]}
    assert control(client.server, "POST", "accounts", body).status_code == 200
    responses = client.calls_as(credentials, 3)  # the third over its burst of 2
    counts = client.server.state.counts()
    assert counts["received_by_account"]["ACENTE3"] == 3 and counts["total_throttled"] == 1
    assert responses[0].status_code == 200


def test_bad_accounts_are_refused(anka: AnkaClient) -> None:
    for bad in ([{"credentials": {}, "agency_code": "X"}], [{"credentials": {"api_key": "k"}}], "nope"):
        assert control(anka.server, "POST", "accounts", {"accounts": bad}).status_code == 400


def test_unknown_control_endpoint_is_404(anka: AnkaClient) -> None:
    assert control(anka.server, "GET", "nothing").status_code == 404
    assert requests.post(f"{anka.server.base_url}/_sandbox/reset", data=b"[1,", timeout=5).status_code == 400


def test_start_sandbox_serves_on_a_free_port_and_stops_for_good() -> None:
    """stop() also closes kept-alive connections: a session cannot keep talking to it."""
    server = start_sandbox("cinar", config={"quote_ttl_seconds": 5})
    try:
        assert server.code == "cinar" and server.base_url == f"http://127.0.0.1:{server.port}"
        server.state.configure(quote_ttl_seconds=50)
        server.state.reset()
        assert server.state.get_config()["quote_ttl_seconds"] == 5  # the start config is the baseline
        with requests.Session() as session:
            assert session.get(server.base_url + "/_sandbox/counts", timeout=5).status_code == 200
            server.stop()
            with pytest.raises(requests.exceptions.ConnectionError):
                session.get(server.base_url + "/_sandbox/counts", timeout=5)
    finally:
        server.stop()


def test_unknown_insurer_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown insurer"):
        start_sandbox("zeytin")


def test_start_all_realistic_latencies_and_per_insurer_config() -> None:
    servers = start_all(realistic=True, config={"deniz": {"quote_ttl_seconds": 30}})
    try:
        assert list(servers) == registered_codes()
        deniz = servers["deniz"].state.get_config()
        assert deniz["latency_ms"] == {
            "trafik_quote": [1000, 4000],
            "kasko_quote": [1000, 4000],
            "dask_quote": [1000, 4000],
            "*": [200, 800],
        }
        assert deniz["quote_ttl_seconds"] == 30
        assert servers["anka"].state.get_config()["latency_ms"] == [50, 400]
        assert servers["anka"].state.get_config()["quote_ttl_seconds"] == 900
    finally:
        for server in servers.values():
            server.stop()


def _free_port_block(size: int = 4) -> int:
    """A base port with `size` free ports after it (best effort: someone may still take one)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + size >= 65535:
            continue
        sockets = []
        try:
            for port in range(base, base + size):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError("no block of free ports")


def test_command_line_runs_every_insurer_until_sigterm() -> None:
    """python -m sandbox --base-port N: each insurer on N + its port_offset, one log line per request."""
    # The subprocess serves the shipped insurers, not the test session's test-only one.
    shipped = [code for code in registered_codes() if code not in TEST_ONLY_CODES]
    offsets = {code: insurer_class(code).port_offset for code in shipped}
    base = _free_port_block(max(offsets.values()) + 1)
    process = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--base-port", str(base)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        lines: list[str] = []
        while process.stdout and not any("ready" in line for line in lines):
            line = process.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        for code, offset in offsets.items():
            assert any(f"{code:<8} http://127.0.0.1:{base + offset}" in line for line in lines), code
        anka = requests.post(
            f"http://127.0.0.1:{base}/v1/quotes/trafik",
            json=TRAFIK,
            headers={"X-Api-Key": "anka-key-acente1"},
            timeout=5,
        )
        assert anka.status_code == 200
        logged = process.stdout.readline() if process.stdout else ""
        assert "anka" in logged and "/v1/quotes/trafik" in logged and "200" in logged
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
