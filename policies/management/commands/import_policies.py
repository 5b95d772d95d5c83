"""Import an agency portfolio from CSV; bad rows are reported by line and not imported."""

from __future__ import annotations

import io
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from policies.services.imports import COLUMNS, PORTFOLIO_ENCODINGS, ImportFileError, policies_import, portfolio_text


class Command(BaseCommand):
    help = (
        f"Import policies from a CSV file with the columns {', '.join(COLUMNS)}. Every bad row is reported as "
        "'line N: field: message' and skipped; the good rows are imported together. Exits non-zero if any row was bad."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file",
            help="CSV file (UTF-8 or Windows-1254 as Excel saves it, comma or semicolon separated, header on line 1)",
        )
        parser.add_argument("--dry-run", action="store_true", help="check every row, import nothing")
        parser.add_argument(
            "--encoding",
            choices=("auto", *PORTFOLIO_ENCODINGS),
            default="auto",
            help="auto (default): UTF-8 when the bytes are UTF-8, else Windows-1254",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with open(options["file"], "rb") as csv_file:
                raw = csv_file.read()
        except OSError as exc:
            raise CommandError(f"can not read {options['file']}: {exc.strerror or exc}") from exc
        try:
            text, encoding = portfolio_text(raw, encoding=options["encoding"])
            report = policies_import(lines=io.StringIO(text, newline=""), dry_run=options["dry_run"])
        except ImportFileError as exc:
            raise CommandError(f"{options['file']}: {exc}") from exc
        if encoding != "utf-8":
            self.stdout.write(f"Read as {encoding}.")
        for error in report.errors:
            self.stderr.write(str(error))
        outcome = "dry run, nothing imported" if options["dry_run"] else f"{report.imported} imported"
        self.stdout.write(f"{report.good_rows} good rows ({outcome}), {report.bad_rows} bad rows.")
        if report.errors:
            raise CommandError(f"{report.bad_rows} bad rows were not imported; see the lines above.")
