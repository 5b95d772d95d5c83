"""Excel workbooks the desk hands out, all made one way: a header row that stays in view (frozen)
with a filter on every column, columns as wide as what they hold, dates and lira typed so Excel
sorts and sums them. Every export builds its file here (today: the policy list).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from datetime import date
from decimal import Decimal

Cell = str | date | Decimal | int | None

DATE_FORMAT = "DD.MM.YYYY"
MONEY_FORMAT = "#,##0.00"
# Excel's own column width is about ten characters; a long address or name is cut, not a page wide.
MIN_WIDTH = 8
MAX_WIDTH = 60
SHEET_TITLE_MAX = 31  # Excel refuses a longer sheet name


def _shown(value: Cell) -> str:
    """The text a cell shows, for its column's width."""
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return f"{value:,.2f}"
    if isinstance(value, date):
        return "00.00.0000"
    return str(value)


def column_widths(header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> list[float]:
    """Each column as wide as its widest cell (the header's bold text and filter button included)."""
    widths = []
    for index, title in enumerate(header):
        longest = max([len(title) + 3, *(len(_shown(row[index])) for row in rows if index < len(row))])
        widths.append(float(min(max(longest + 2, MIN_WIDTH), MAX_WIDTH)))
    return widths


def xlsx_table(*, sheet_title: str, header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> bytes:
    """One sheet holding `header` and `rows` as a table: frozen bold header with an autofilter,
    fitted column widths, dates as DD.MM.YYYY and Decimals as money. Write-only (rows go
    straight to the file); the rows are read once first, for the widths."""
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    table = [
        # Control characters: openpyxl refuses them (and they mean nothing in a cell).
        tuple(ILLEGAL_CHARACTERS_RE.sub("", value) if isinstance(value, str) else value for value in row)
        for row in rows
    ]
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(sheet_title[:SHEET_TITLE_MAX])
    # Widths and the frozen pane are written before the first row: set them first.
    for index, width in enumerate(column_widths(header, table), start=1):
        sheet.column_dimensions[get_column_letter(index)].width = width
    sheet.freeze_panes = "A2"
    bold = Font(bold=True)
    titles = []
    for title in header:
        cell = WriteOnlyCell(sheet, value=title)
        cell.font = bold
        titles.append(cell)
    sheet.append(titles)
    for row in table:
        cells = []
        for value in row:
            # The stubs leave date and Decimal out of value=; openpyxl hands it to Cell(value=), which takes them.
            cell = WriteOnlyCell(sheet, value=value)  # type: ignore[arg-type]
            if isinstance(value, date):
                cell.number_format = DATE_FORMAT
            elif isinstance(value, Decimal):
                cell.number_format = MONEY_FORMAT
            cells.append(cell)
        sheet.append(cells)
    sheet.auto_filter.ref = f"A1:{get_column_letter(max(len(header), 1))}{len(table) + 1}"
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()
