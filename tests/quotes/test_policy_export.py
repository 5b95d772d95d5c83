"""Exporting the policy list: the page's filters and search, CSV for Excel, a real workbook, no formulas."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import openpyxl
import pytest
from django.test import Client
from django.urls import reverse

from policies import periods

from .policy_samples import imported_policy, issued_policy

pytestmark = pytest.mark.django_db

EXPORT = reverse("policy_export")


@pytest.fixture
def policies(agents) -> None:
    today = periods.today()
    issued_policy(
        agents["ACENTE1"], "ANK-EXP-1", starts_on=today - timedelta(days=300), ends_on=today + timedelta(days=65)
    )
    imported_policy("ACENTE1", "bogazici", '=HYPERLINK("http://x")', product="kasko", plate="06BYZ42")
    imported_policy("ACENTE1", "cinar", "-CNR-2", product="kasko", owner_id="17291716060")
    imported_policy("ACENTE2", "anka", "ANK-OTHER-AGENCY")


def csv_rows(response) -> list[list[str]]:
    body = b"".join(response.streaming_content)
    assert body.startswith("\ufeff".encode())  # Excel reads UTF-8 only with the mark
    return list(csv.reader(io.StringIO(body.decode("utf-8-sig")), delimiter=";"))


def xlsx_rows(response) -> list[tuple]:
    sheet = openpyxl.load_workbook(io.BytesIO(response.content)).active
    assert sheet is not None
    return list(sheet.iter_rows(values_only=True))


def test_csv_is_streamed_with_a_bom_and_turkish_headers(desk, policies):
    response = desk.get(EXPORT, {"format": "csv"})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="policeler-')
    rows = csv_rows(response)
    assert rows[0][:3] == ["Poliçe no", "Sigorta şirketi", "Ürün"] and "T.C. Kimlik / Vergi No" in rows[0]
    by_number = {row[0]: row for row in rows[1:]}
    assert "ANK-OTHER-AGENCY" not in by_number and len(by_number) == 3
    anka = by_number["ANK-EXP-1"]
    assert anka[4] == "34 ABC 123" and anka[6] == "100******46" and anka[9] == "4312,50"


def test_cells_that_would_be_formulas_are_prefixed(desk, policies):
    """A value starting with = + - @ becomes text with a leading apostrophe, in CSV and in Excel."""
    numbers = [row[0] for row in csv_rows(desk.get(EXPORT, {"format": "csv"}))[1:]]
    assert '\'=HYPERLINK("http://x")' in numbers and "'-CNR-2" in numbers
    cells = [row[0] for row in xlsx_rows(desk.get(EXPORT, {"format": "xlsx"}))[1:]]
    assert '\'=HYPERLINK("http://x")' in cells and "'-CNR-2" in cells
    workbook = openpyxl.load_workbook(io.BytesIO(desk.get(EXPORT, {"format": "xlsx"}).content))
    assert all(cell.data_type != "f" for row in workbook.active.iter_rows() for cell in row)


def test_xlsx_has_typed_dates_and_premiums_and_masked_ids(desk, policies):
    response = desk.get(EXPORT, {"format": "xlsx"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    rows = xlsx_rows(response)
    anka = next(row for row in rows if row[0] == "ANK-EXP-1")
    assert anka[7].date() == periods.today() - timedelta(days=300)
    assert anka[9] == 4312.5 and anka[6] == "100******46"
    assert not any("10000000146" in str(value) for row in rows for value in row)
    assert all("ANK-OTHER-AGENCY" not in row for row in rows)


def test_xlsx_header_is_frozen_filtered_and_columns_fit_what_they_hold(desk, policies):
    """The header stays in view and filters every column; each column is as wide as its widest
    cell, header included (Excel's default is about ten characters, too narrow for most)."""
    from openpyxl.utils import get_column_letter

    from quotes.services.policies import EXPORT_HEADER

    workbook = openpyxl.load_workbook(io.BytesIO(desk.get(EXPORT, {"format": "xlsx"}).content))
    sheet = workbook.active
    rows = list(sheet.iter_rows(values_only=True))
    assert sheet.freeze_panes == "A2"
    assert sheet.auto_filter.ref == f"A1:{get_column_letter(len(EXPORT_HEADER))}{len(rows)}"
    assert all(cell.font.bold for cell in sheet[1])
    for index, title in enumerate(EXPORT_HEADER, start=1):
        width = sheet.column_dimensions[get_column_letter(index)].width
        texts = [str(row[index - 1]) for row in rows[1:] if isinstance(row[index - 1], str)]
        assert width >= max([len(title), *map(len, texts)]) and width <= 60, (title, width)
    assert sheet.column_dimensions["B"].width > 10  # "Sigorta şirketi"


def test_export_follows_the_filters_and_the_search(desk, policies):
    rows = csv_rows(desk.get(EXPORT, {"format": "csv", "donem": "60"}))
    assert [row[0] for row in rows[1:]] == []
    rows = csv_rows(desk.get(EXPORT, {"format": "csv", "urun": "kasko"}))
    assert sorted(row[0] for row in rows[1:]) == ["'-CNR-2", '\'=HYPERLINK("http://x")']
    token = desk.post(reverse("policy_search"), {"q": "17291716060"})["Location"].split("arama=")[1]
    rows = csv_rows(desk.get(EXPORT, {"format": "csv", "arama": token}))
    assert [row[0] for row in rows[1:]] == ["'-CNR-2"]


def test_export_refuses_bad_input_clearly(desk, policies):
    """Unknown format, bad filter or an expired search: 400 naming it, never a whole-portfolio file."""
    response = desk.get(EXPORT, {"format": "pdf"})
    assert response.status_code == 400 and "format" in response.content.decode()
    response = desk.get(EXPORT, {"format": "csv", "donem": "90"})
    assert response.status_code == 400 and "donem" in response.content.decode()
    response = desk.get(EXPORT, {"format": "csv", "arama": "not-a-token"})
    assert response.status_code == 400 and "süresi doldu" in response.content.decode()


XSS = '<script>alert("x")</script>'


@pytest.mark.parametrize(
    ("field", "label"),
    [("urun", "Ürün"), ("sirket", "Sigorta şirketi"), ("durum", "Durum"), ("donem", "Dönem")],
)
def test_a_bad_choice_is_named_in_plain_text_and_never_echoed(desk, policies, field, label):
    """A crafted link's value never comes back: the 400 is text/plain and names only the field."""
    response = desk.get(EXPORT, {"format": "csv", field: XSS})
    body = response.content.decode()
    assert response.status_code == 400 and response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert f"{label} ({field})" in body and "geçerli değerler:" in body
    assert "<" not in body and "alert" not in body and "script" not in body


def test_a_bad_date_says_the_format_it_wants(desk, policies):
    response = desk.get(EXPORT, {"format": "csv", "baslangic_min": "<b>dün</b>", "durum": "yok"})
    body = response.content.decode()
    assert response.status_code == 400 and response["Content-Type"].startswith("text/plain")
    assert "Başlangıç (en erken) (baslangic_min): tarih YYYY-AA-GG biçiminde olmalı" in body
    assert "Durum (durum)" in body and "<" not in body and "dün" not in body


def test_the_policy_list_shows_a_bad_filter_escaped(desk, policies):
    """The list page keeps Django's message on the field, escaped: markup is shown, never run."""
    html = desk.get(reverse("policy_list"), {"urun": XSS}).content.decode()
    assert XSS not in html and "&lt;script&gt;" in html


def test_another_agency_exports_only_its_own(agents, policies):
    client = Client()
    client.force_login(agents["ACENTE2"])
    rows = csv_rows(client.get(EXPORT, {"format": "csv"}))
    assert [row[0] for row in rows[1:]] == ["ANK-OTHER-AGENCY"]
