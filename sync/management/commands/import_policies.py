"""Import an agency portfolio from CSV; bad rows are reported by line and not imported."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sync.imports import COLUMNS, ImportFileError, policies_import


class Command(BaseCommand):
    help = (
        f"Import policies from a CSV file with the columns {', '.join(COLUMNS)}. Every bad row is reported as "
        "'line N: field: message' and skipped; the good rows are imported together. Exits non-zero if any row was bad."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="CSV file (UTF-8, comma or semicolon separated, header on line 1)")
        parser.add_argument("--dry-run", action="store_true", help="check every row, import nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with open(options["file"], encoding="utf-8-sig", newline="") as csv_file:
                report = policies_import(lines=csv_file, dry_run=options["dry_run"])
        except OSError as exc:
            raise CommandError(f"can not read {options['file']}: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:
            raise CommandError(f"{options['file']} is not UTF-8 text: {exc}") from exc
        except ImportFileError as exc:
            raise CommandError(str(exc)) from exc
        for error in report.errors:
            self.stderr.write(str(error))
        outcome = "dry run, nothing imported" if options["dry_run"] else f"{report.imported} imported"
        self.stdout.write(f"{report.good_rows} good rows ({outcome}), {report.bad_rows} bad rows.")
        if report.errors:
            raise CommandError(f"{report.bad_rows} bad rows were not imported; see the lines above.")
