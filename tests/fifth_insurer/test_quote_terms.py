"""Ege (test): policy start, installments and kasko options, adapter and sandbox together, as a
new insurer maps them (docs/adding-an-insurer.md)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from integrations.answers.taxonomy import plain_message
from integrations.calling.calls import insurer_operation_run, new_reference
from sandbox import domain
from tests import samples

pytestmark = pytest.mark.django_db


def run(endpoint_for, operation, data, **kwargs):
    return insurer_operation_run(endpoint=endpoint_for("ege"), operation=operation, data=data, **kwargs)


def test_kasko_options_are_priced_and_read_back_through_eges_codes(endpoint_for):
    """Ege's IMM, IKAME (with `days`) and MUAF covers are the platform's liability, replacement_car, deductible."""
    plain = run(endpoint_for, "kasko_quote", samples.KASKO)
    options = {"deductible": 5000, "replacement_car_days": 7, "liability_limit": None, "repair_shop": "contracted"}
    chosen = run(endpoint_for, "kasko_quote", {**samples.KASKO, **options})
    assert chosen.ok, chosen.to_json()
    assert chosen.result.premium != plain.result.premium
    assert chosen.result.details["coverages"][5:] == [
        {"code": "liability", "name": "İhtiyari mali mesuliyet (İMM)", "limit": None},
        {"code": "replacement_car", "name": "İkame araç", "limit": None, "days": 7},
        {"code": "deductible", "name": "Muafiyet", "limit": "5000.00"},
    ]


def test_an_unsold_deductible_is_a_field_error_naming_it(endpoint_for):
    outcome = run(endpoint_for, "kasko_quote", {**samples.KASKO, "deductible": 2500})
    assert (outcome.error.provider_code, outcome.error.field) == ("E_INPUT", "deductible")
    assert "muafiyet" in plain_message(outcome.error)


def test_start_and_installments_reach_the_policy(endpoint_for, sandbox):
    starts_on = domain.today_in_turkiye(time.time()) + timedelta(days=2)
    quoted = run(endpoint_for, "dask_address", samples.DASK_ADDRESS)
    data = {**samples.DASK_RISK, **samples.DASK_ADDRESS, "building_id": quoted.result.building_id}
    quote = run(endpoint_for, "dask_quote", {**data, "starts_on": starts_on.isoformat()})
    assert quote.ok, quote.to_json()
    issue = {"quote_no": quote.result.quote_no, "payment_token": samples.PAYMENT_TOKEN, "installments": 9}
    issued = run(endpoint_for, "issue_policy", issue, reference=new_reference())
    assert issued.ok, issued.to_json()
    assert (issued.result.starts_on, issued.result.ends_on) == (starts_on, domain.one_year_after(starts_on))
    assert sandbox["ege"].state.ledger.policies[issued.result.policy_no].installments == 9
    refused = run(endpoint_for, "issue_policy", {**issue, "installments": 7}, reference=new_reference())
    assert (refused.error.provider_code, refused.error.field) == ("E_INPUT", "installments")
