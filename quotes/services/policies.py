"""Policies after issuance: keeping their period current, and handing the list out as a file."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from decimal import Decimal

from django.utils import timezone

from insurehub.masking import mask_identity
from insurehub.spreadsheets import xlsx_table
from integrations.operations import PRODUCT_LABELS_TR, Product
from policies.models import Policy

# --- export ---------------------------------------------------------------------------------------

EXPORT_HEADER = (
    "Poliçe no",
    "Sigorta şirketi",
    "Ürün",
    "Durum",
    "Plaka",
    "Müşteri",
    "T.C. Kimlik / Vergi No",
    "Başlangıç",
    "Bitiş",
    "Prim (TL)",
    "Tanzim",
)
# A spreadsheet runs a cell starting with one of these as a formula (CSV injection): such text
# is written with a leading apostrophe, which Excel and LibreOffice show as plain text.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

Cell = str | date | Decimal | None


def spreadsheet_safe(text: str) -> str:
    return f"'{text}" if text.startswith(_FORMULA_STARTS) else text


def policy_export_rows(policies: Iterable[Policy]) -> Iterator[tuple[Cell, ...]]:
    """One row per policy, as typed values; identity numbers masked (the file leaves the platform)."""
    for policy in policies:
        try:
            product = PRODUCT_LABELS_TR[Product(policy.product)]
        except ValueError:
            product = policy.product
        yield (
            spreadsheet_safe(policy.policy_no),
            spreadsheet_safe(policy.insurer.name),
            product,
            policy.get_status_display(),
            spreadsheet_safe(plate_display(policy.plate)),
            spreadsheet_safe(policy.customer.name if policy.customer is not None else ""),
            mask_identity(policy.owner_id) if policy.owner_id else "",
            policy.starts_on,
            policy.ends_on,
            policy.premium,
            timezone.localtime(policy.issued_at).date(),
        )


def plate_display(plate: str) -> str:
    """ "34ABC123" -> "34 ABC 123": how a plate is written on the car and read by people."""
    if len(plate) < 4 or not plate[:2].isdigit():
        return plate
    rest = plate[2:]
    letters = len(rest) - len(rest.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    if not letters or not rest[letters:].isdigit():
        return plate
    return f"{plate[:2]} {rest[:letters]} {rest[letters:]}"


class _Line:
    """A file object whose write returns the text: csv.writer then formats one row at a time."""

    def write(self, text: str) -> str:
        return text


def _csv_text(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return f"{value:.2f}".replace(".", ",")  # Türkiye's decimal comma, as Excel expects here
    if isinstance(value, date):
        return value.strftime("%d.%m.%Y")
    return value


def policy_export_csv(policies: Iterable[Policy]) -> Iterator[str]:
    """The list as CSV, streamed line by line. A byte-order mark first, so Excel reads it as
    UTF-8 (Ş, ğ, İ...); semicolons between fields, Excel's separator where the decimal mark is
    a comma."""
    writer = csv.writer(_Line(), delimiter=";")
    yield "\ufeff" + writer.writerow(EXPORT_HEADER)
    for row in policy_export_rows(policies):
        yield writer.writerow([_csv_text(value) for value in row])


def policy_export_xlsx(policies: Iterable[Policy]) -> bytes:
    """The list as an Excel workbook, made as every export's is (`insurehub.spreadsheets`)."""
    return xlsx_table(sheet_title="Poliçeler", header=EXPORT_HEADER, rows=policy_export_rows(policies))


def export_filename(extension: str, *, at: datetime | None = None) -> str:
    stamp = timezone.localtime(at or timezone.now()).strftime("%Y%m%d-%H%M")
    return f"policeler-{stamp}.{extension}"
