"""An agency's portfolio brought in from the desk: upload, a preview of every row, then import.

The rules are those of `manage.py import_policies` (`policies.services.imports`), run twice:
once without writing (the preview: every bad row with its field and a Turkish message), then,
when the agency admin confirms, again on the same file, writing the good rows in one
transaction. The second run checks everything again, since a colleague may have imported some
of the same policies in between: when its result differs from the preview the agent confirmed,
nothing is written and the new preview is shown, so what lands is always what was shown.

Between the two steps the file waits in the shared cache under a random token bound to the
uploader, for half an hour; it is never written to disk or into a URL.
"""

from __future__ import annotations

import csv
import io
import secrets
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache

from agencies.models import Agency
from insurehub.errors import Forbidden, Invalid
from policies.services.imports import ImportFileError, PolicyImportReport, RowError, policies_import, portfolio_text

MAX_UPLOAD_BYTES = 5 * 1024 * 1024
PENDING_SECONDS = 30 * 60
_CACHE_PREFIX = "portfolio-upload:"

FIELD_LABELS_TR = {
    "agency_code": "acente kodu",
    "insurer": "sigorta şirketi",
    "policy_no": "poliçe no",
    "product": "ürün",
    "plate": "plaka",
    "owner_id": "T.C. kimlik / vergi no",
    "status": "durum",
    "starts_on": "başlangıç",
    "ends_on": "bitiş",
}
NOT_ADMIN_MESSAGE = "Portföy aktarımını acente yöneticisi yapabilir."
TOO_LARGE_MESSAGE = "Dosya en fazla 5 MB olabilir; portföyü birkaç dosyaya bölün."
EMPTY_MESSAGE = "Dosya boş."
NOT_READABLE_MESSAGE = "Dosya okunamadı: CSV (UTF-8 ya da Windows-1254) veya Excel (.xlsx) olmalıdır."
EXPIRED_MESSAGE = "Önizlemenin süresi doldu; dosyayı yeniden yükleyin."
CHANGED_MESSAGE = (
    "Önizlemeden bu yana kayıtlar değişti (aynı poliçeler başka biri tarafından aktarılmış olabilir); "
    "hiçbir şey aktarılmadı. Güncel önizlemeyi kontrol edip yeniden onaylayın."
)


class UploadInvalid(Invalid):
    """The file as a whole cannot be read; the message is for the agent, on the file field."""

    def __init__(self, message: str) -> None:
        super().__init__({"file": message}, message)


@dataclass(frozen=True)
class RowProblem:
    line: int
    field: str
    message: str

    @property
    def text(self) -> str:
        return f"{self.line}. satır · {self.field}: {self.message}"


@dataclass(frozen=True)
class Preview:
    token: str
    file_name: str
    good_rows: int
    bad_rows: int
    problems: list[RowProblem]
    imported: int = 0


def portfolio_preview(*, user: AbstractBaseUser, file_name: str, raw: bytes) -> Preview:
    """Check every row of the file for the user's agency; nothing is written."""
    agency = portfolio_admin_agency(user)
    lines = _lines(file_name, raw)
    report = _run(lines, agency=agency, dry_run=True)
    token = secrets.token_urlsafe(24)
    cache.set(_CACHE_PREFIX + token, {"user": user.pk, "file_name": file_name, "lines": lines,
                                      "good_rows": report.good_rows, "errors": _error_keys(report)},
              PENDING_SECONDS)  # fmt: skip
    return _preview(token, file_name, report)


def portfolio_import(*, user: AbstractBaseUser, token: str) -> Preview:
    """Import the good rows of the file previewed under `token`, if they are still what the
    preview showed; otherwise nothing, and the new preview (`imported` 0) under a new token."""
    agency = portfolio_admin_agency(user)
    pending = cache.get(_CACHE_PREFIX + str(token))
    if not pending or pending.get("user") != user.pk:
        raise UploadInvalid(EXPIRED_MESSAGE)
    check = _run(pending["lines"], agency=agency, dry_run=True)
    if check.good_rows != pending["good_rows"] or _error_keys(check) != pending["errors"]:
        cache.delete(_CACHE_PREFIX + str(token))
        changed = portfolio_preview(user=user, file_name=pending["file_name"], raw=_as_bytes(pending["lines"]))
        raise PreviewChanged(changed)
    report = _run(pending["lines"], agency=agency, dry_run=False)
    cache.delete(_CACHE_PREFIX + str(token))
    preview = _preview("", pending["file_name"], report)
    return Preview(**{**preview.__dict__, "imported": report.imported})


class PreviewChanged(Invalid):
    """What the file would import changed since its preview: nothing was written."""

    def __init__(self, preview: Preview) -> None:
        super().__init__({"__all__": CHANGED_MESSAGE}, CHANGED_MESSAGE)
        self.preview = preview


def portfolio_admin_agency(user: AbstractBaseUser) -> Agency:
    """The agency whose portfolio `user` may import: their own, as its admin (`Forbidden` else)."""
    profile = getattr(user, "agent_profile", None)
    if profile is None or not profile.is_agency_admin:
        raise Forbidden(NOT_ADMIN_MESSAGE)
    return profile.agency


def _run(lines: list[str], *, agency: Agency, dry_run: bool) -> PolicyImportReport:
    try:
        return policies_import(lines=iter(lines), dry_run=dry_run, agency=agency)
    except ImportFileError as error:
        raise UploadInvalid(_file_error_tr(str(error))) from error


def _lines(file_name: str, raw: bytes) -> list[str]:
    if len(raw) > MAX_UPLOAD_BYTES:
        raise UploadInvalid(TOO_LARGE_MESSAGE)
    if not raw.strip():
        raise UploadInvalid(EMPTY_MESSAGE)
    if file_name.lower().endswith(".xlsx") or raw[:4] == b"PK\x03\x04":
        return _xlsx_lines(raw)
    try:
        text, _ = portfolio_text(raw)
    except ImportFileError as error:
        raise UploadInvalid(NOT_READABLE_MESSAGE) from error
    return io.StringIO(text, newline="").readlines()


def _xlsx_lines(raw: bytes) -> list[str]:
    """The first sheet as CSV lines, so an Excel file is read by exactly the CSV rules."""
    from openpyxl import load_workbook

    try:
        sheet = load_workbook(io.BytesIO(raw), read_only=True, data_only=True).worksheets[0]
    except Exception as error:  # openpyxl raises many kinds for a file that is not a workbook
        raise UploadInvalid(NOT_READABLE_MESSAGE) from error
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    for values in sheet.iter_rows(values_only=True):
        writer.writerow(["" if value is None else _cell_text(value) for value in values])
    return io.StringIO(out.getvalue(), newline="").readlines()


def _cell_text(value: object) -> str:
    """A cell as the file's author typed it: a date as a date, a whole number without ".0"."""
    from datetime import date, datetime

    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _as_bytes(lines: list[str]) -> bytes:
    return "".join(lines).encode("utf-8")


def _error_keys(report: PolicyImportReport) -> list[tuple[int, str, str]]:
    return [(error.line, error.field, error.message) for error in report.errors]


def _preview(token: str, file_name: str, report: PolicyImportReport) -> Preview:
    return Preview(
        token=token,
        file_name=file_name,
        good_rows=report.good_rows,
        bad_rows=report.bad_rows,
        problems=[_problem(error) for error in report.errors],
    )


def _problem(error: RowError) -> RowProblem:
    return RowProblem(line=error.line, field=FIELD_LABELS_TR.get(error.field, error.field), message=error.message)


def _file_error_tr(message: str) -> str:
    """The import's whole-file errors (written for the operator's command) in the agent's Turkish."""
    if message.startswith("missing columns:"):
        missing = message.split(":", 1)[1].split("(", 1)[0].strip()
        return f"Dosyada şu sütunlar yok: {missing}. İlk satır sütun adlarını taşımalıdır."
    if message.startswith("nothing imported"):
        return "Hiçbir şey aktarılmadı: aktarım sırasında aynı poliçe kaydedildi. Yeniden deneyin."
    return NOT_READABLE_MESSAGE
