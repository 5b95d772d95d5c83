"""The shared input rules and prices, checked without HTTP."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum.tr import tckimlik, vkn

from sandbox import domain, registered_codes

from .sandbox_wire import KASKO, TRAFIK, dask


def test_known_identity_numbers_are_valid() -> None:
    """The glossary's examples pass; a changed check digit fails."""
    assert domain.tckn_is_valid("10000000146")
    assert domain.tckn_is_valid("17291716060")
    assert domain.vkn_is_valid("4540536920")
    assert not domain.tckn_is_valid("10000000147")
    assert not domain.tckn_is_valid("01000000146")
    assert not domain.vkn_is_valid("4540536921")
    assert domain.identity_is_valid("4540536920") and not domain.identity_is_valid("123")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789", min_size=11, max_size=11))
def test_tckn_check_agrees_with_python_stdnum(number: str) -> None:
    """Our own TCKN checksum gives the same verdict as stdnum.tr.tckimlik."""
    assert domain.tckn_is_valid(number) == tckimlik.is_valid(number)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789", min_size=9, max_size=9))
def test_vkn_check_agrees_with_python_stdnum(prefix: str) -> None:
    """Our own VKN check digit gives the same verdict as stdnum.tr.vkn, for every last digit."""
    for last in "0123456789":
        assert domain.vkn_is_valid(prefix + last) == vkn.is_valid(prefix + last)


def test_plate_rule_follows_the_platform_pattern() -> None:
    """Province 01-81, 1-3 letters, 2-4 digits, upper case, no spaces."""
    good = ["34ABC123", "06A1234", "81ZZ99", "01AB1234"]
    bad = ["00ABC123", "82ABC123", "34 ABC 123", "34abc123", "34ABCD12", "34ABC1", "34ABC12345"]
    assert all(domain.FIELD_RULES["plate"](p) for p in good)
    assert not any(domain.FIELD_RULES["plate"](p) for p in bad)


def test_premiums_are_stable_per_insurer_and_differ_between_insurers() -> None:
    """Same inputs, same insurer: same premium; every insurer quotes its own price."""
    codes = registered_codes()
    for operation, fields in (("trafik_quote", TRAFIK), ("kasko_quote", KASKO), ("dask_quote", dask("anka"))):
        prices = [domain.price(code, operation, fields)[0] for code in codes]
        assert prices == [domain.price(code, operation, fields)[0] for code in codes]
        assert len(set(prices)) == len(codes)
        assert all(p > 0 and p == p.quantize(domain.Decimal("0.01")) for p in prices)


def test_dask_sum_insured_follows_area_and_construction() -> None:
    """Sum insured = gross m2 x the construction type's unit cost."""
    _, sum_insured = domain.price("anka", "dask_quote", dask("anka", gross_m2=100))
    assert sum_insured == domain.Decimal("1350000.00")


def test_building_id_is_per_insurer_and_recomputable() -> None:
    """An insurer always returns the same building id for a UAVT code; insurers differ."""
    assert domain.building_id_for("anka", "1234567890") == domain.building_id_for("anka", "1234567890")
    assert domain.building_id_for("anka", "1234567890") != domain.building_id_for("cinar", "1234567890")
