"""The adapters' shared reading of quote and issuance terms into their wire forms (base.py)."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from integrations.adapters.base import chosen_terms, wire_amount, wire_count, wire_date, wire_terms
from integrations.answers.taxonomy import FIELD_LABELS_TR
from integrations.operations import KASKO_OPTION_FIELDS


def test_only_the_terms_the_data_carries_are_chosen_and_null_only_where_it_is_a_choice():
    data = {"starts_on": "", "installments": None, "deductible": 0, "liability_limit": None, "repair_shop": "x"}
    assert chosen_terms(data, ("starts_on", "installments", *KASKO_OPTION_FIELDS)) == {
        "deductible": 0,
        "liability_limit": None,  # unlimited İMM
        "repair_shop": "x",
    }


def test_wire_forms_of_dates_amounts_and_counts():
    assert wire_date(date(2026, 12, 1)) == wire_date("2026-12-01") == "2026-12-01"
    assert wire_date(date(2026, 12, 1), "%d.%m.%Y") == wire_date("2026-12-01", "%d.%m.%Y") == "01.12.2026"
    assert wire_date("yarın") == "yarın"  # sent as given, for the insurer to refuse
    assert isinstance(wire_date(datetime(2026, 12, 1, 9)), str)  # never a value JSON cannot carry
    assert wire_amount(5000) == wire_amount("5000") == wire_amount(Decimal("5000")) == "5000.00"
    assert wire_amount(None) is None and wire_amount("çok") == "çok" and wire_amount(True) is True
    assert wire_count("3") == 3 and wire_count(7) == 7 and wire_count("üç") == "üç"
    assert wire_terms(
        {"starts_on": date(2026, 12, 1), "installments": "6", "deductible": 2500},
        ["starts_on", "installments", "deductible"],
    ) == {
        "starts_on": "2026-12-01",
        "installments": 6,
        "deductible": "2500.00",
    }


def test_every_term_has_a_turkish_label_for_the_agent():
    for field in ("starts_on", "installments", *KASKO_OPTION_FIELDS):
        assert FIELD_LABELS_TR[field]
