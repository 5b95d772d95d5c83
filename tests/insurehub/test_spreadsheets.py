"""The one way the desk's Excel files are made: frozen, filtered header; fitted, capped widths."""

from __future__ import annotations

import io
from datetime import date
from decimal import Decimal

import openpyxl

from insurehub.spreadsheets import MAX_WIDTH, xlsx_table


def sheet_of(**table):
    return openpyxl.load_workbook(io.BytesIO(xlsx_table(**table))).active


def test_widths_fit_the_widest_cell_and_stop_at_the_cap():
    sheet = sheet_of(
        sheet_title="Deneme",
        header=("Ad", "Not", "Tarih", "Tutar"),
        rows=[("Ayşe Yılmaz", "x" * 500, date(2026, 1, 31), Decimal("1234567.50")), ("Ali", None, None, None)],
    )
    widths = {letter: sheet.column_dimensions[letter].width for letter in "ABCD"}
    assert widths["A"] >= len("Ayşe Yılmaz") and widths["B"] == MAX_WIDTH
    assert widths["C"] >= len("31.01.2026") and widths["D"] >= len("1,234,567.50")
    assert sheet["C2"].number_format == "DD.MM.YYYY" and sheet["D2"].number_format == "#,##0.00"
    assert sheet.freeze_panes == "A2" and sheet.auto_filter.ref == "A1:D3"


def test_an_empty_table_still_has_its_filtered_header():
    sheet = sheet_of(sheet_title="Boş", header=("Poliçe no", "Müşteri"), rows=[])
    assert [cell.value for cell in sheet[1]] == ["Poliçe no", "Müşteri"]
    assert sheet.auto_filter.ref == "A1:B1" and sheet.freeze_panes == "A2"
