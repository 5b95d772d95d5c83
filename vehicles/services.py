"""Importing a month's TSB kasko value list: the one write path of the admin upload, the
`import_kasko_values` command and the demo's sample."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction

from customers.name_search import name_fold
from insurehub.errors import Invalid
from vehicles.models import KaskoValue, KaskoValueList
from vehicles.value_file import ValueFileError, value_file_read

# The demo's list (docs/vehicles.md): a few dozen types in TSB's layout, made up but plausible.
SAMPLE_FILE = Path(__file__).resolve().parent / "sample" / "kasko-deger-listesi-2026-12.csv"
SAMPLE_MONTH = date(2026, 12, 1)

_MONTH_RE = re.compile(r"([0-9]{4})-([0-9]{2})")
_BATCH = 2000


class ValueListInvalid(Invalid):
    """The file (field `file`) or the month (field `month`) cannot be imported; nothing was written."""


def month_parse(text: str) -> date:
    """ "2026-12" -> the first of December 2026: a list is valid for a calendar month."""
    match = _MONTH_RE.fullmatch(text.strip())
    if match is None or not 1 <= int(match.group(2)) <= 12:
        raise ValueListInvalid({"month": "Ay YYYY-AA biçiminde olmalı (ör. 2026-12)."})
    return date(int(match.group(1)), int(match.group(2)), 1)


def kasko_value_list_import(
    *,
    month: date,
    source_name: str,
    content: bytes,
    imported_by: User | None = None,
    replace: bool = False,
) -> KaskoValueList:
    """Store the file as `month`'s edition, all of it or nothing.

    The whole file is read and checked before the first write, and the writes share one
    transaction: an agent never quotes from half a list. A month already loaded is refused
    unless `replace` (TSB sometimes re-publishes a month with corrections); the replaced
    edition goes in the same transaction, so a bad correction leaves the old one in place.
    """
    if month.day != 1:
        raise ValueError(f"a list's month is the first of a month, not {month}")
    try:
        vehicle_types = value_file_read(name=source_name, content=content)
    except ValueFileError as error:
        raise ValueListInvalid({"file": error.problems}, "; ".join(error.problems)) from None
    with transaction.atomic():
        existing = KaskoValueList.objects.select_for_update().filter(month=month).first()
        if existing is not None:
            if not replace:
                raise ValueListInvalid(
                    {"month": f"{existing.label} listesi zaten yüklü; yerine koymak için “değiştir”i seçin."}
                )
            existing.delete()
        edition = KaskoValueList.objects.create(month=month, source_name=source_name[:255], imported_by=imported_by)
        KaskoValue.objects.bulk_create(
            (
                KaskoValue(
                    edition=edition,
                    brand_code=vehicle.brand_code,
                    type_code=vehicle.type_code,
                    brand_name=vehicle.brand_name,
                    type_name=vehicle.type_name,
                    brand_key=name_fold(vehicle.brand_name),
                    type_key=name_fold(vehicle.type_name),
                    model_year=year,
                    value=value,
                )
                for vehicle in vehicle_types
                for year, value in vehicle.values.items()
            ),
            batch_size=_BATCH,
        )
    return edition
