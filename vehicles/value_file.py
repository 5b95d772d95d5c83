"""Reading the TSB kasko value list as TSB and the agencies' spreadsheets hand it over.

The list is one row per vehicle type: MARKA KODU, TİP KODU, MARKA ADI, TİP ADI, then one column
per model year (its header is the year) holding the type's value in lira for that year, blank
where the type was not sold that year. TSB's own file is an Excel sheet, often with a title row
above the header; agencies re-save it as CSV from Excel, which means `;` between fields (the
comma is Turkish Excel's decimal mark) and Windows-1254 unless "CSV UTF-8" was chosen. So:

- `.xlsx` (openpyxl), or CSV in UTF-8 (with or without BOM) or, failing that, Windows-1254;
- the header is the first row that names MARKA KODU, found within the first rows; headers are
  matched Turkish-insensitively ("Tip Kodu", "TİP KODU", "TIP KODU");
- the CSV separator is whichever of `;`, tab or `,` splits the header line most;
- columns other than the four and the years (a row number, a note) are ignored.

Every problem is reported with the row number a spreadsheet shows and the column's header, and
the whole file is read before anything is written: the importer stores all of it or nothing.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import PurePath

from customers.name_search import name_fold

# Codes are 3 digits: the contract every insurer's kasko service follows (CONTRACTS.md, "Common
# input fields"), and what the quote form checks.
CODE_LENGTH = 3
HEADER_SEARCH_ROWS = 20
MAX_ERRORS_SHOWN = 20
YEAR_RANGE = (1950, 2100)

BRAND_CODE, TYPE_CODE, BRAND_NAME, TYPE_NAME = "MARKA KODU", "TİP KODU", "MARKA ADI", "TİP ADI"
REQUIRED_COLUMNS = (BRAND_CODE, TYPE_CODE, BRAND_NAME, TYPE_NAME)
_COLUMN_KEYS = {name_fold(column): column for column in REQUIRED_COLUMNS}

_YEAR_RE = re.compile(r"[0-9]{4}")
_CODE_RE = re.compile(r"[0-9]{1,3}")
# Lira as a Turkish sheet writes them ("1.234.567", "1.234.567,50", "1234567,50"), or as a
# program exports them ("1234567", "1234567.50"). A dot followed by exactly three digits is a
# thousands mark, never a decimal point: nothing on the list is worth a lira and a half.
_AMOUNT_FORMS = (
    (re.compile(r"[0-9]+"), lambda text: text),
    (re.compile(r"[0-9]{1,3}(?:\.[0-9]{3})+(?:,[0-9]{1,2})?"), lambda text: text.replace(".", "").replace(",", ".")),
    (re.compile(r"[0-9]+,[0-9]{1,2}"), lambda text: text.replace(",", ".")),
    (re.compile(r"[0-9]+\.[0-9]{1,2}"), lambda text: text),
)
_XLSX_MAGIC = b"PK\x03\x04"
_XLS_MAGIC = b"\xd0\xcf\x11\xe0"
_CENTS = Decimal("0.01")


@dataclass(frozen=True)
class VehicleType:
    """One row of the list: a vehicle type and its value per model year."""

    row: int
    brand_code: str
    type_code: str
    brand_name: str
    type_name: str
    values: dict[int, Decimal] = field(default_factory=dict)


class ValueFileError(ValueError):
    """The file cannot be imported; `problems` are the Turkish sentences to show, each naming
    its row and column where it has one."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems)
        self.problems = problems

    def __str__(self) -> str:
        return "\n".join(self.problems)


def value_file_read(*, name: str, content: bytes) -> list[VehicleType]:
    """Every vehicle type in the file, or `ValueFileError` listing what is wrong with it."""
    rows = _xlsx_rows(content) if _is_xlsx(name, content) else _csv_rows(content)
    return _vehicle_types(rows)


# --- cells out of the two formats ---------------------------------------------------------------


def _is_xlsx(name: str, content: bytes) -> bool:
    suffix = PurePath(name).suffix.lower()
    if suffix == ".xls" or content.startswith(_XLS_MAGIC):
        raise ValueFileError(["Eski Excel biçimi (.xls) okunamıyor: dosyayı .xlsx ya da CSV olarak kaydedin."])
    return suffix in (".xlsx", ".xlsm") or content.startswith(_XLSX_MAGIC)


def _xlsx_rows(content: bytes) -> Iterator[tuple[int, list[object]]]:
    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(content), read_only=True, data_only=True)
    except Exception as problem:  # noqa: BLE001 - openpyxl raises many kinds for a broken file
        raise ValueFileError([f"Excel dosyası açılamadı: {problem.__class__.__name__}."]) from None
    try:
        sheet = book.worksheets[0]
        for number, cells in enumerate(sheet.iter_rows(values_only=True), start=1):
            yield number, list(cells)
    finally:
        book.close()


def _csv_text(content: bytes) -> str:
    # UTF-8 is tried first because it is strict: Windows-1254 text with any Turkish letter in it
    # is (all but) never valid UTF-8, while any UTF-8 would decode, wrongly, as Windows-1254.
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return content.decode("cp1254")
    except UnicodeDecodeError:
        raise ValueFileError(
            ["Dosyanın karakter kodlaması okunamadı: UTF-8 ya da Windows-1254 (Türkçe) olmalı."]
        ) from None


def _csv_rows(content: bytes) -> Iterator[tuple[int, list[object]]]:
    text = _csv_text(content)
    lines = text.splitlines()
    header = next((line for line in lines[:HEADER_SEARCH_ROWS] if name_fold(BRAND_CODE) in name_fold(line)), "")
    delimiter = max(";\t,", key=header.count) if header else ";"
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        for cells in reader:
            yield reader.line_num, list(cells)
    except csv.Error as problem:
        raise ValueFileError([f"Satır {reader.line_num}: CSV okunamadı ({problem})."]) from None


# --- rows into vehicle types --------------------------------------------------------------------


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(str(value).split())


def _header(rows: Iterator[tuple[int, list[object]]]) -> tuple[int, dict[str, int], dict[int, int]]:
    """The header row's number, where each named column is, and where each year's column is."""
    number, keys = 0, []
    for number, cells in rows:
        keys = [name_fold(_cell_text(cell)) for cell in cells]
        if _COLUMN_KEYS.keys() & set(keys):
            break
        if number >= HEADER_SEARCH_ROWS:
            keys = []
            break
    if number == 0:
        raise ValueFileError(["Dosya boş."])
    columns = {_COLUMN_KEYS[key]: index for index, key in enumerate(keys) if key in _COLUMN_KEYS}
    missing = [column for column in REQUIRED_COLUMNS if column not in columns]
    if missing:
        raise ValueFileError(
            [
                f"Başlık satırı bulunamadı ya da eksik: {', '.join(missing)} sütunu yok "
                f"(ilk {HEADER_SEARCH_ROWS} satırda)."
            ]
        )
    years: dict[int, int] = {}
    for index, key in enumerate(keys):
        if not _YEAR_RE.fullmatch(key):
            continue
        year = int(key)
        if not YEAR_RANGE[0] <= year <= YEAR_RANGE[1]:
            raise ValueFileError([f"Satır {number}: {key} bir model yılı sütunu olamaz."])
        if year in years.values():
            raise ValueFileError([f"Satır {number}: {year} sütunu iki kez var."])
        years[index] = year
    if not years:
        raise ValueFileError([f"Satır {number}: model yılı sütunu yok (başlıkları 2025, 2024… olan sütunlar)."])
    return number, columns, years


def _code(value: object, *, row: int, column: str) -> str:
    """A code as the insurers take it: 3 digits. Excel reads a code column as numbers and drops
    the leading zeros ("012" becomes 12), so 1–3 digits are padded back to 3."""
    text = _cell_text(value)
    if not _CODE_RE.fullmatch(text):
        raise ValueError(f"Satır {row}, {column}: “{text}” geçerli bir kod değil (en çok {CODE_LENGTH} rakam).")
    return text.zfill(CODE_LENGTH)


def _name(value: object, *, row: int, column: str, limit: int) -> str:
    text = _cell_text(value)
    if not text:
        raise ValueError(f"Satır {row}, {column}: boş olamaz.")
    if len(text) > limit:
        raise ValueError(f"Satır {row}, {column}: en çok {limit} karakter olabilir.")
    return text


def _amount(value: object, *, row: int, column: str) -> Decimal | None:
    """None for an empty cell (the type has no value that year)."""
    if isinstance(value, bool):
        raise ValueError(f"Satır {row}, {column} sütunu: “{value}” bir tutar değil.")
    if isinstance(value, int | float | Decimal):
        amount = Decimal(str(value))
    else:
        text = _cell_text(value).replace(" ", "").removesuffix("TL").removesuffix("₺")
        if text in ("", "-"):
            return None
        normalised = next((convert(text) for form, convert in _AMOUNT_FORMS if form.fullmatch(text)), None)
        if normalised is None:
            raise ValueError(f"Satır {row}, {column} sütunu: “{_cell_text(value)}” bir tutar değil (ör. 1.250.000).")
        amount = Decimal(normalised)
    try:
        amount = amount.quantize(_CENTS, ROUND_HALF_UP)
    except InvalidOperation:
        raise ValueError(f"Satır {row}, {column} sütunu: tutar çok büyük.") from None
    if not amount.is_finite() or amount <= 0 or amount >= Decimal(10) ** 12:
        raise ValueError(f"Satır {row}, {column} sütunu: tutar sıfırdan büyük ve makul olmalı.")
    return amount


def _vehicle_types(rows: Iterator[tuple[int, list[object]]]) -> list[VehicleType]:
    header_row, columns, years = _header(rows)
    problems: list[str] = []
    found: list[VehicleType] = []
    seen_types: dict[tuple[str, str], int] = {}
    brand_names: dict[str, tuple[str, int]] = {}
    for number, cells in rows:
        if not any(_cell_text(cell) for cell in cells):
            continue  # a blank line between blocks, or the sheet's trailing rows

        def cell(index: int, cells: list[object] = cells) -> object:
            return cells[index] if index < len(cells) else None

        try:
            brand_code = _code(cell(columns[BRAND_CODE]), row=number, column=BRAND_CODE)
            type_code = _code(cell(columns[TYPE_CODE]), row=number, column=TYPE_CODE)
            brand_name = _name(cell(columns[BRAND_NAME]), row=number, column=BRAND_NAME, limit=100)
            type_name = _name(cell(columns[TYPE_NAME]), row=number, column=TYPE_NAME, limit=200)
            values = {}
            for index, year in years.items():
                amount = _amount(cell(index), row=number, column=str(year))
                if amount is not None:
                    values[year] = amount
            if not values:
                raise ValueError(f"Satır {number}: hiçbir model yılı için değer yok.")
            first = seen_types.setdefault((brand_code, type_code), number)
            if first != number:
                raise ValueError(
                    f"Satır {number}: {BRAND_CODE} {brand_code} / {TYPE_CODE} {type_code} satır {first}'de de var."
                )
            known_name, known_row = brand_names.setdefault(brand_code, (brand_name, number))
            if name_fold(known_name) != name_fold(brand_name):
                raise ValueError(
                    f"Satır {number}, {BRAND_NAME}: {brand_code} kodu satır {known_row}'de "
                    f"“{known_name}” adıyla geçiyor."
                )
        except ValueError as problem:
            problems.append(str(problem))
            continue
        found.append(VehicleType(number, brand_code, type_code, brand_name, type_name, values))
    if problems:
        shown = problems[:MAX_ERRORS_SHOWN]
        if len(problems) > len(shown):
            shown.append(f"… ve {len(problems) - len(shown)} hata daha.")
        raise ValueFileError(shown)
    if not found:
        raise ValueFileError([f"Başlıktan (satır {header_row}) sonra araç satırı yok."])
    return found
