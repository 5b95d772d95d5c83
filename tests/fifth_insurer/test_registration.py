"""The test-only insurer is registered like a shipped one, before the tests are collected."""

from __future__ import annotations

from integrations.adapters.registry import adapter_class
from integrations.adapters.registry import registered_codes as adapter_codes
from integrations.models import InsurerAccount
from sandbox import registered_codes as sandbox_codes
from tests.fifth_insurer import TEST_ONLY_CODES
from tests.fifth_insurer.adapter import EgeAdapter
from tests.fifth_insurer.sandbox import Ege
from tests.hardening.test_adapter_fuzz import INSURERS as FUZZED


def test_both_halves_are_registered_and_profiled() -> None:
    assert TEST_ONLY_CODES == {"ege"}
    assert adapter_class("ege") is EgeAdapter
    assert "ege" in adapter_codes() and "ege" in sandbox_codes()
    assert Ege.transient_faults and "ege" in FUZZED  # the fuzz's list was read after registration


def test_the_sandbox_fixture_serves_it_and_the_seed_stores_its_accounts(sandbox, seeded_accounts) -> None:
    assert isinstance(sandbox["ege"].insurer, Ege)
    stored = InsurerAccount.objects.filter(insurer__code="ege").order_by("agency__code")
    assert [account.agency_code for account in stored] == ["ACENTE1", "ACENTE2"]
    assert stored[0].insurer.base_url == sandbox["ege"].base_url
