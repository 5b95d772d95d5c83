"""`manage.py import_kasko_values <file> --month YYYY-MM`: a month's TSB kasko value list.

The same import as the admin's upload (`vehicles.services.kasko_value_list_import`): the whole
file or nothing, every bad row named with its row and column. `--skip-loaded` makes it a no-op
when the month is there already, which is how the demo script loads the sample at every start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from vehicles.selectors import kasko_value_list_for
from vehicles.services import ValueListInvalid, kasko_value_list_import, month_parse


class Command(BaseCommand):
    help = "Import a month's TSB kasko value list (.xlsx, or CSV in UTF-8 or Windows-1254)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the list: .xlsx or .csv")
        parser.add_argument("--month", required=True, help="the month it is valid for, YYYY-MM")
        loaded = parser.add_mutually_exclusive_group()
        loaded.add_argument("--replace", action="store_true", help="replace that month's list if it is loaded")
        loaded.add_argument(
            "--skip-loaded", action="store_true", help="do nothing if that month's list is loaded already"
        )
        parser.add_argument("--user", help="username to record as the importer (default: nobody, a command)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            month = month_parse(options["month"])
        except ValueListInvalid as error:
            raise CommandError(f"--month: {error.message}") from None
        if options["skip_loaded"] and (loaded := kasko_value_list_for(month=month)) is not None:
            self.stdout.write(f"{loaded.label} listesi zaten yüklü ({loaded.source_name}); dokunulmadı.")
            return
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"--user: {options['user']!r} diye bir kullanıcı yok")
        path = Path(options["file"])
        try:
            content = path.read_bytes()
        except OSError as problem:
            raise CommandError(f"{path}: {problem.strerror or problem}") from None
        try:
            edition = kasko_value_list_import(
                month=month, source_name=path.name, content=content, imported_by=user, replace=options["replace"]
            )
        except ValueListInvalid as error:
            lines = [message for messages in error.field_errors.values() for message in messages]
            raise CommandError("liste yüklenmedi, hiçbir satır yazılmadı:\n" + "\n".join(lines)) from None
        values = edition.values.count()
        types = edition.values.values("brand_code", "type_code").distinct().count()
        self.stdout.write(f"{edition.label} listesi yüklendi: {types} tip, {values} değer ({path.name}).")
