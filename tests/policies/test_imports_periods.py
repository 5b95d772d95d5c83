"""The portfolio CSV import carries the policy period (starts_on / ends_on) when the file has it."""

from __future__ import annotations

from datetime import date

import pytest

from policies.models import Policy
from policies.services.imports import policies_import

pytestmark = pytest.mark.django_db

HEADER = "agency_code,insurer,policy_no,product,plate,owner_id,status,starts_on,ends_on\n"


def run(text: str, **kwargs):
    return policies_import(lines=text.splitlines(keepends=True), **kwargs)


def test_dates_in_every_form_insurers_use_are_imported(seeded_accounts):
    report = run(
        HEADER
        + "ACENTE1,anka,ANKA-P-1,trafik,34 abc 123,10000000146,ACTIVE,2026-12-01,2027-12-01\n"
        + "ACENTE1,anka,ANKA-P-2,trafik,,10000000146,ACTIVE,01.12.2026,01.12.2027\n"
        + "ACENTE1,anka,ANKA-P-3,trafik,,10000000146,ACTIVE,01/12/2026,01/12/2027\n"
        + "ACENTE1,anka,ANKA-P-4,trafik,,10000000146,ACTIVE,2026-12-01T00:00:00+03:00,\n"
    )
    assert report.errors == [] and report.imported == 4
    periods = dict(Policy.objects.values_list("policy_no", "ends_on"))
    assert periods == {
        "ANKA-P-1": date(2027, 12, 1),
        "ANKA-P-2": date(2027, 12, 1),
        "ANKA-P-3": date(2027, 12, 1),
        "ANKA-P-4": None,  # an empty cell is "not known"
    }
    assert set(Policy.objects.values_list("starts_on", flat=True)) == {date(2026, 12, 1)}


def test_bad_dates_are_reported_by_line_and_field(seeded_accounts):
    report = run(
        HEADER
        + "ACENTE1,anka,ANKA-B-1,trafik,,10000000146,ACTIVE,31.02.2026,\n"
        + "ACENTE1,anka,ANKA-B-2,trafik,,10000000146,ACTIVE,2027-12-01,2026-12-01\n"
        + "ACENTE1,anka,ANKA-B-3,trafik,,10000000146,ACTIVE,,yarın\n"
        + "ACENTE1,anka,ANKA-B-4,trafik,,10000000146,ACTIVE,2026-12-01,2027-12-01\n"
    )
    assert [str(error) for error in report.errors] == [
        "line 2: starts_on: geçersiz tarih; GG.AA.YYYY veya YYYY-AA-GG olmalıdır",
        "line 3: ends_on: bitiş tarihi başlangıçtan önce olamaz",
        "line 4: ends_on: geçersiz tarih; GG.AA.YYYY veya YYYY-AA-GG olmalıdır",
    ]
    assert list(Policy.objects.values_list("policy_no", flat=True)) == ["ANKA-B-4"]


def test_a_file_without_the_period_columns_still_imports(seeded_accounts):
    """Older portfolio files have no dates: the columns are optional, the period stays unknown."""
    report = run(
        "agency_code;insurer;policy_no;product;plate;owner_id;status\n"
        "ACENTE2;deniz;DNZ-OLD-1;kasko;35 ABC 42;17291716060;ACTIVE\n"
    )
    assert report.errors == [] and report.imported == 1
    policy = Policy.objects.get()
    assert policy.starts_on is None and policy.ends_on is None
