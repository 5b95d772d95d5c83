"""Value lists for the vehicle tests: files in TSB's layout, written the ways agencies save them."""

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import date

import pytest

from vehicles.models import KaskoValueList
from vehicles.services import SAMPLE_FILE, SAMPLE_MONTH, kasko_value_list_import

HEADER = ["MARKA KODU", "TİP KODU", "MARKA ADI", "TİP ADI", "2026", "2025", "2024"]
ROWS = [
    ["012", "345", "FIAT", "EGEA 1.4 FIRE URBAN", "1.290.000", "1.187.000", ""],
    ["012", "346", "FIAT", "EGEA CROSS 1.4 FIRE STREET", "1420000", "1292000,50", "1176000"],
    ["062", "011", "TOGG", "T10X V1 RWD STANDART MENZİL", "1790000", "1650000", "1520000"],
    ["038", "201", "RENAULT", "CLIO 1.0 TCE TOUCH", "1310000", "1205000", "1109000"],
]


def csv_bytes(rows: Sequence[Sequence[str]], *, encoding: str = "utf-8", delimiter: str = ";") -> bytes:
    return "\r\n".join(delimiter.join(row) for row in rows).encode(encoding)


def xlsx_bytes(rows: Sequence[Sequence[object]]) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None  # a new workbook has its one sheet active
    for row in rows:
        sheet.append(list(row))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def import_rows(rows: Sequence[Sequence[str]], *, month: date = date(2026, 12, 1), **options) -> KaskoValueList:
    return kasko_value_list_import(month=month, source_name="liste.csv", content=csv_bytes(rows), **options)


@pytest.fixture
def sample_list(db) -> KaskoValueList:
    """The demo's sample list (vehicles/sample/), as the current edition."""
    return kasko_value_list_import(month=SAMPLE_MONTH, source_name=SAMPLE_FILE.name, content=SAMPLE_FILE.read_bytes())
