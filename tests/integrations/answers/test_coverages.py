"""The coverage vocabulary and the one reader of insurers' entry lists."""

from __future__ import annotations

import logging

from integrations.answers.coverages import coverage_entry, installment_entry, read_entries


def test_an_unreadable_entry_is_skipped_and_logged_the_rest_kept(caplog):
    log = logging.getLogger("integrations.adapters.test")
    with caplog.at_level(logging.WARNING):
        entries = read_entries(
            ["CARPISMA", {"bad": 1}, "theft", 42], lambda item: coverage_entry(item), log=log, what="c"
        )
    assert [entry["code"] for entry in entries] == ["collision", "theft"]
    assert [record.getMessage()[:14] for record in caplog.records] == ["c #2 skipped, ", "c #4 skipped, "]


def test_a_list_that_is_not_a_list_is_left_out_whole(caplog):
    log = logging.getLogger("integrations.adapters.test")
    with caplog.at_level(logging.WARNING):
        assert read_entries("CARPISMA", coverage_entry, log=log, what="c") == []
        assert read_entries({"count": 3}, coverage_entry, log=log, what="c") == []
    assert read_entries(None, coverage_entry, log=log, what="c") == []
    assert len(caplog.records) == 2


def test_limits_and_totals_are_decimal_strings_or_clear_errors():
    assert coverage_entry("CAM", "x", None) == {"code": "glass", "name": "Cam kırılması", "limit": None}
    assert coverage_entry("collision", limit="1500")["limit"] == "1500.00"
    assert installment_entry(3, "1030") == {"count": 3, "total": "1030.00"}
    for bad in ("abc", "NaN", "-1"):
        try:
            coverage_entry("collision", limit=bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} accepted as a limit")


def test_the_kasko_options_have_platform_codes_and_a_replacement_car_keeps_its_days():
    assert coverage_entry("IMM", "x", None) == {
        "code": "liability",
        "name": "İhtiyari mali mesuliyet (İMM)",
        "limit": None,
    }
    assert coverage_entry("MUAFIYET", limit="2500")["code"] == "deductible"
    assert coverage_entry("IKAME_ARAC", days="7") == {
        "code": "replacement_car",
        "name": "İkame araç",
        "limit": None,
        "days": 7,
    }
    assert "days" not in coverage_entry("replacement_car")
    for bad in ("yedi", -1, 400, True, 7.5):
        try:
            coverage_entry("replacement_car", days=bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} accepted as days")
