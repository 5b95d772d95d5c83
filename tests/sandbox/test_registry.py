"""The sandbox's insurer registry: one list of insurers, held to the platform's adapters."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from integrations.adapters.registry import registered_codes as adapter_codes
from sandbox import DEFAULT_ACCOUNTS, fixed_port_urls, insurer_class, register, registered_codes
from sandbox.hand_wire import wire_module
from sandbox.insurers.anka import Anka
from sandbox.registry import unregister
from tests.fifth_insurer import TEST_ONLY_CODES

REPO_ROOT = Path(__file__).resolve().parents[2]


def shipped_codes() -> list[str]:
    """What a process of its own (`python -m sandbox`, the benchmarks) serves: no test-only insurer."""
    return [code for code in registered_codes() if code not in TEST_ONLY_CODES]


def test_every_adapter_has_a_sandbox_insurer_and_every_sandbox_insurer_an_adapter() -> None:
    """A new insurer needs both halves; tests parametrised over either registry then cover it."""
    assert sorted(registered_codes()) == adapter_codes()


def test_an_insurer_that_does_not_state_its_transient_faults_is_refused_at_import() -> None:
    """The cross-insurer tests inject each insurer's own three transient faults: a new insurer
    without them fails when its module is imported, not as a skipped test later."""

    class Unfaulted(Anka):
        code, prefix, port_offset = "unfaulted", "UF", 97
        transient_faults = ({"fault": "reset"},)

    with pytest.raises(TypeError, match="transient_faults"):
        register(Unfaulted)
    assert all(len(insurer_class(code).transient_faults) == 3 for code in registered_codes())


def test_every_insurer_has_its_hand_written_wire_beside_its_sandbox() -> None:
    """The baselines' wire and the contract tests' clients are found with the sandbox insurer
    (`sandbox/insurers/<code>/wire.py`), the test-only fifth included: no table lists them."""
    from bench.wire import wire_classes
    from tests.sandbox.cancellation_wire import CANCEL_CLIENTS
    from tests.sandbox.sandbox_wire import CLIENTS

    codes = registered_codes()
    assert set(TEST_ONLY_CODES) <= set(codes)
    for found in (wire_classes(), CLIENTS, CANCEL_CLIENTS):
        assert list(found) == codes
        assert all(getattr(cls, "code", None) == code for code, cls in found.items())
    assert all(issubclass(CANCEL_CLIENTS[code], CLIENTS[code]) for code in codes)


def test_an_insurer_without_its_hand_written_wire_is_named() -> None:
    """A new insurer's sandbox without a `wire` module fails by name, not as a KeyError in a test."""

    class Wireless(Anka):
        code, prefix, port_offset = "wireless", "WL", 96

    register(Wireless)
    try:
        with pytest.raises(TypeError, match="'wireless' has no hand-written wire clients"):
            wire_module("wireless")
    finally:
        unregister("wireless")


def test_ports_prefixes_and_accounts_are_stated_per_insurer_and_unique() -> None:
    """Fixed ports never collide, numbers never look like another insurer's, every insurer has sample accounts."""
    classes = [insurer_class(code) for code in registered_codes()]
    assert len({cls.port_offset for cls in classes}) == len(classes)
    assert len({cls.prefix for cls in classes}) == len(classes)
    for cls in classes:
        assert DEFAULT_ACCOUNTS[cls.code], cls.code
        for account in DEFAULT_ACCOUNTS[cls.code]:
            assert set(account["credentials"]) == set(cls.credential_keys)


def test_default_accounts_are_copies() -> None:
    """A test that edits the accounts it was handed cannot change the sandbox's."""
    DEFAULT_ACCOUNTS["anka"][0]["credentials"]["api_key"] = "edited"
    assert DEFAULT_ACCOUNTS["anka"][0]["credentials"]["api_key"] == "anka-key-acente1"


def test_an_insurer_that_takes_another_ones_port_is_refused() -> None:
    class Twin(Anka):
        code = "ikiz"
        prefix = "IK"

    with pytest.raises(ValueError, match="share port_offset"):
        register(Twin)
    assert "ikiz" not in registered_codes()


def test_an_insurer_that_states_no_accounts_is_refused() -> None:
    class Bare(Anka):
        code = "yalin"
        prefix = "YL"
        port_offset = 99
        default_accounts = ({"agency_code": "ACENTE1", "credentials": {"username": "x"}},)

    with pytest.raises(TypeError, match="default account"):
        register(Bare)
    assert "yalin" not in registered_codes()


def test_a_registered_insurer_is_served_and_listed() -> None:
    """Registering is all it takes: start_all, the ports and the accounts see it."""

    class Extra(Anka):
        code = "ek"
        prefix = "EK"
        port_offset = 40

    register(Extra)
    try:
        assert "ek" in registered_codes()
        assert fixed_port_urls("127.0.0.1", 9000)["ek"] == "http://127.0.0.1:9040"
        assert DEFAULT_ACCOUNTS["ek"] == DEFAULT_ACCOUNTS["anka"]
    finally:
        unregister("ek")
    assert "ek" not in registered_codes()


def _sandbox_cli(*args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "sandbox", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=30
    ).stdout


def test_demo_manifest_names_each_insurers_url_and_sample_accounts() -> None:
    """`python -m sandbox --demo-manifest`: what `seed_demo --manifest` reads, from the registry."""
    manifest = json.loads(_sandbox_cli("--demo-manifest", "--base-port", "9300"))
    assert list(manifest["insurers"]) == shipped_codes()
    for code, insurer in manifest["insurers"].items():
        assert insurer["base_url"] == f"http://127.0.0.1:{9300 + insurer_class(code).port_offset}"
        assert insurer["accounts"] == DEFAULT_ACCOUNTS[code]


def test_list_prints_where_each_insurer_listens() -> None:
    lines = _sandbox_cli("--list", "--base-port", "9400").splitlines()
    urls = fixed_port_urls("127.0.0.1", 9400)
    assert lines == [f"{code:<8} {urls[code]}" for code in shipped_codes()]
