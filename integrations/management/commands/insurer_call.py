"""Operator probe: run one real adapter operation and print the outcome as one JSON line.

Other checks rely on this interface; keep its arguments and its output exactly as they are.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from integrations.adapters.registry import registered_codes
from integrations.calling.calls import endpoint_resolve, insurer_operation_run, new_reference
from integrations.operations import MONEY_OPERATIONS, Operation


def _json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CommandError(f"{option} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise CommandError(f"{option} must be a JSON object")
    return value


class Command(BaseCommand):
    help = "Call one insurer operation through its adapter and retry policy; print one JSON line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("insurer", choices=registered_codes())
        parser.add_argument("operation", choices=[op.value for op in Operation])
        parser.add_argument("--base-url", dest="base_url")
        parser.add_argument("--data", default="{}", help="JSON with the contract's platform field names")
        parser.add_argument("--credentials", help="JSON credentials; default: the stored account")
        parser.add_argument("--agency", help="agency code, when several agencies have accounts")

    def handle(self, *args: Any, **options: Any) -> None:
        data = _json_object(options["data"], "--data")
        credentials = _json_object(options["credentials"], "--credentials") if options["credentials"] else None
        try:
            endpoint = endpoint_resolve(
                insurer_code=options["insurer"],
                base_url=options["base_url"],
                credentials=credentials,
                agency_code=options["agency"],
            )
        except LookupError as exc:
            raise CommandError(str(exc)) from exc
        reference = ""
        if options["operation"] in MONEY_OPERATIONS:
            # A stable reference: the caller's (to ask again under it), else a new one.
            reference = str(data.pop("reference", "") or new_reference())
        try:
            report = insurer_operation_run(
                endpoint=endpoint, operation=options["operation"], data=data, reference=reference
            ).to_json()
        except ValueError as exc:  # credentials missing a field: nothing was sent
            report = {
                "status": "failed",
                "error_class": "permanent",
                "error_kind": "auth",
                "provider_code": "MISSING_CREDENTIALS",
                "attempts": 0,
                "result": None,
                "message": str(exc),
            }
        self.stdout.write(json.dumps(report, ensure_ascii=False))
        if report["status"] != "ok":
            sys.exit(1)
