"""Bringing an agency's existing portfolio in from CSV, so its policies are synced from tonight on.

Every row is checked and every problem reported by line and field; only the good rows are
imported, all in one transaction, so running the file again after fixing the bad rows does not
import the good ones twice (they are then refused as duplicates, by line).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction

from agencies.models import Agency
from customers.models import Customer
from insurehub.identity_numbers import REQUIRED_MESSAGE, FieldError, validate_owner_id
from insurehub.model_fields import char_max_length
from integrations.adapters.base import parse_policy_date
from integrations.models import Insurer, InsurerAccount
from integrations.operations import Product
from policies.models import Policy
from vehicles.plates import normalize_plate

COLUMNS = ("agency_code", "insurer", "policy_no", "product", "plate", "owner_id", "status")
# The policy's period, when the file has it (older files do not): any of the date forms insurers
# use (2026-12-01, 01.12.2026, 01/12/2026, an ISO timestamp); an empty cell is "not known".
OPTIONAL_COLUMNS = ("starts_on", "ends_on")
DATE_MESSAGE = "geçersiz tarih; GG.AA.YYYY veya YYYY-AA-GG olmalıdır"
PRODUCTS = tuple(p.value for p in Product)
STATUSES = tuple(s.value for s in Policy.Status)
POLICY_NO_MAX = char_max_length(Policy, "policy_no")


class ImportFileError(ValueError):
    """The file as a whole can not be read (no header, missing columns): nothing is imported."""


# Excel on a Turkish Windows saves "CSV" in the ANSI code page, Windows-1254 (ş, ğ, ı, İ where
# Latin-1 has other letters); anything else is UTF-8, with or without Excel's byte-order mark.
PORTFOLIO_ENCODINGS = ("utf-8", "windows-1254")


def portfolio_text(raw: bytes, *, encoding: str = "auto") -> tuple[str, str]:
    """The file's text and the encoding it was read in. `auto`: UTF-8 (a byte-order mark is
    dropped) when the bytes are UTF-8, else Windows-1254. Bytes that are neither are refused
    whole (ImportFileError), never guessed into wrong letters."""
    if encoding not in ("auto", *PORTFOLIO_ENCODINGS):
        raise ImportFileError(f"unknown encoding {encoding!r} (auto, {', '.join(PORTFOLIO_ENCODINGS)})")
    tried = PORTFOLIO_ENCODINGS if encoding == "auto" else (encoding,)
    for name in tried:
        try:
            text = raw.decode("utf-8-sig" if name == "utf-8" else name)
        except UnicodeDecodeError:
            continue
        return text, name
    raise ImportFileError(f"the file is not {' or '.join(tried)} text")


@dataclass(frozen=True, order=True)
class RowError:
    line: int
    column: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.message}"


@dataclass
class PolicyImportReport:
    good_rows: int = 0
    imported: int = 0
    errors: list[RowError] = field(default_factory=list)

    @property
    def bad_rows(self) -> int:
        return len({error.line for error in self.errors})


OTHER_AGENCY_MESSAGE = "başka bir acentenin kodu; yalnızca kendi acentenizin poliçeleri aktarılabilir"


def policies_import(*, lines: Iterable[str], dry_run: bool = False, agency: Agency | None = None) -> PolicyImportReport:
    """Validate every row of a portfolio CSV and import the good ones (none with `dry_run`).

    With `agency` (an agency importing its own portfolio from the desk) the `agency_code` column
    may be left out, and a row naming another agency is an error on that field: an agency never
    writes another's policies.
    """
    lines = iter(lines)
    header_line = next(lines, "")
    delimiter = ";" if header_line.count(";") > header_line.count(",") else ","
    header = [name.strip().lower() for name in next(csv.reader([header_line], delimiter=delimiter), [])]
    required = [name for name in COLUMNS if not (agency is not None and name == "agency_code")]
    missing = [name for name in required if name not in header]
    if missing:
        raise ImportFileError(f"missing columns: {', '.join(missing)} (expected {', '.join(COLUMNS)})")

    checker = _RowChecker(agency=agency)
    report = PolicyImportReport()
    candidates: list[tuple[int, Policy]] = []
    first_line_of: dict[tuple[int, str], int] = {}
    reader = csv.reader(lines, delimiter=delimiter)
    for values in reader:
        line = reader.line_num + 1  # the header was line 1
        if not any(value.strip() for value in values):
            continue
        row = {name: (values[i].strip() if i < len(values) else "") for i, name in enumerate(header)}
        for name in OPTIONAL_COLUMNS:
            row.setdefault(name, "")
        if agency is not None:
            row.setdefault("agency_code", agency.code)
        policy, errors = checker.check(line, row)
        if policy is not None:
            key = (policy.insurer_id, policy.policy_no)
            if key in first_line_of:
                errors.append(_error(line, "policy_no", f"dosyada {first_line_of[key]}. satırla aynı poliçe no"))
            else:
                first_line_of[key] = line
        report.errors.extend(errors)
        if policy is not None and not errors:
            candidates.append((line, policy))

    existing = _existing_policy_numbers({policy.insurer_id for _, policy in candidates}, first_line_of)
    good = []
    for line, policy in candidates:
        if (policy.insurer_id, policy.policy_no) in existing:
            report.errors.append(_error(line, "policy_no", "bu şirkette aynı numaralı poliçe zaten kayıtlı"))
        else:
            good.append(policy)
    report.errors.sort()
    report.good_rows = len(good)
    if good and not dry_run:
        _credit_sub_agencies(good)
        try:
            with transaction.atomic():
                Policy.objects.bulk_create(good, batch_size=500)
        except IntegrityError as exc:
            raise ImportFileError(f"nothing imported: a policy was stored meanwhile ({exc})") from exc
        report.imported = len(good)
    return report


def _credit_sub_agencies(policies: list[Policy]) -> None:
    """An imported policy is the agency's own (credited to no sub-agency) unless its owner is a
    customer of a sub-agency: the agency's customer with the row's identity number (one per
    agency) is the policy's, so the sub-agency that serves the customer sees and renews it."""
    owners = {(policy.agency_id, policy.owner_id) for policy in policies if policy.owner_id}
    credited: dict[tuple[int, str], int] = {}
    for agency_id in {agency_id for agency_id, _ in owners}:
        numbers = [number for owner_agency, number in owners if owner_agency == agency_id]
        for start in range(0, len(numbers), 500):
            rows = Customer.objects.filter(
                agency_id=agency_id, identity_no__in=numbers[start : start + 500], sub_agency__isnull=False
            ).values_list("identity_no", "sub_agency_id")
            credited.update({(agency_id, number): sub_agency_id for number, sub_agency_id in rows})
    for policy in policies:
        policy.sub_agency_id = credited.get((policy.agency_id, policy.owner_id))


def _error(line: int, field_name: str, message: str) -> RowError:
    return RowError(line, (COLUMNS + OPTIONAL_COLUMNS).index(field_name), field_name, message)


def _existing_policy_numbers(insurer_ids: set[int], in_file: dict[tuple[int, str], int]) -> set[tuple[int, str]]:
    numbers = sorted({number for insurer_id, number in in_file if insurer_id in insurer_ids})
    found: set[tuple[int, str]] = set()
    for start in range(0, len(numbers), 500):
        found.update(
            Policy.objects.filter(insurer_id__in=insurer_ids, policy_no__in=numbers[start : start + 500]).values_list(
                "insurer_id", "policy_no"
            )
        )
    return found


class _RowChecker:
    """Checks one row at a time against agencies, insurers and accounts read once up front."""

    def __init__(self, *, agency: Agency | None = None) -> None:
        self.only_agency = agency
        self.agencies = {agency.code: agency for agency in Agency.objects.all()}
        self.insurers = {insurer.code: insurer for insurer in Insurer.objects.all()}
        self.accounts = {(a.agency_id, a.insurer_id): a for a in InsurerAccount.objects.all()}

    def check(self, line: int, row: dict[str, str]) -> tuple[Policy | None, list[RowError]]:
        errors: list[RowError] = []

        def fail(field_name: str, message: str) -> None:
            errors.append(_error(line, field_name, message))

        agency = self.agencies.get(row["agency_code"])
        if not row["agency_code"]:
            fail("agency_code", REQUIRED_MESSAGE)
        elif self.only_agency is not None and row["agency_code"] != self.only_agency.code:
            agency = None  # another agency's row: refused on its field, whether that agency exists or not
            fail("agency_code", OTHER_AGENCY_MESSAGE)
        elif agency is None:
            fail("agency_code", f"{row['agency_code']!r} kodlu acente yok")
        insurer = self.insurers.get(row["insurer"].lower())
        account = None
        if not row["insurer"]:
            fail("insurer", REQUIRED_MESSAGE)
        elif insurer is None:
            fail("insurer", f"{row['insurer']!r} kodlu sigorta şirketi yok")
        elif agency is not None:
            account = self.accounts.get((agency.pk, insurer.pk))
            if account is None:
                fail("insurer", f"{agency.code} acentesinin {insurer.code} şirketinde hesabı yok")
        policy_no = row["policy_no"]
        if not policy_no:
            fail("policy_no", REQUIRED_MESSAGE)
        elif len(policy_no) > POLICY_NO_MAX or any(ch.isspace() for ch in policy_no):
            fail("policy_no", f"poliçe no boşluksuz ve en fazla {POLICY_NO_MAX} karakter olmalıdır")
        product = row["product"].lower()
        if product not in PRODUCTS:
            fail("product", f"geçersiz ürün; {', '.join(PRODUCTS)} olmalıdır")
        plate = ""
        if row["plate"]:
            try:
                plate = normalize_plate(row["plate"])
            except FieldError as exc:
                fail("plate", exc.message)
        owner_id = ""
        try:
            owner_id = validate_owner_id(row["owner_id"])
        except FieldError as exc:
            fail("owner_id", exc.message)
        status = row["status"].upper()
        if status not in STATUSES:
            fail("status", f"geçersiz durum; {', '.join(STATUSES)} olmalıdır")
        period = {}
        for name in OPTIONAL_COLUMNS:
            period[name] = parse_policy_date(row[name])
            if row[name] and period[name] is None:
                fail(name, DATE_MESSAGE)
        if period["starts_on"] and period["ends_on"] and period["ends_on"] < period["starts_on"]:
            fail("ends_on", "bitiş tarihi başlangıçtan önce olamaz")
        # A row with a usable number takes part in the duplicate check even if other fields are bad.
        if account is None or any(error.field == "policy_no" for error in errors):
            return None, errors
        policy = Policy(
            agency=agency,
            insurer=insurer,
            account=account,
            product=product,
            policy_no=policy_no,
            status=status,
            plate=plate,
            owner_id=owner_id,
            starts_on=period["starts_on"],
            ends_on=period["ends_on"],
            source="import",
        )
        return policy, errors
