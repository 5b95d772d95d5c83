"""Apply the commission agreements as they stand now to the policies issued since a day.

For an agreement entered after its policies were issued (they show "Komisyon anlaşması yok"),
or one corrected since. Idempotent: a second run finds nothing to change.
"""

from __future__ import annotations

from datetime import date

from django.core.management.base import BaseCommand, CommandError

from commissions.services import Recomputed, commissions_recompute


def _day(value: str | date) -> date:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--since must be a date as YYYY-MM-DD, not {value!r}") from None


class Command(BaseCommand):
    help = "Reckon the commission of every policy issued on or after --since under the agreements in force."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--since", required=True, help="First issue day (YYYY-MM-DD, Türkiye's calendar).")
        parser.add_argument("--agency", default="", help="Only this agency's policies (its code).")

    def handle(self, *args, since: str | date, agency: str, **options) -> None:
        # Parsed here, not by argparse: call_command hands a keyword option over unparsed.
        since = _day(since)
        counts = commissions_recompute(since=since, agency_code=agency)
        total = sum(counts.values())
        parts = ", ".join(f"{counts.get(outcome, 0)} {outcome.value}" for outcome in Recomputed)
        self.stdout.write(f"{total} policies issued since {since.isoformat()}: {parts}.")
        if counts.get(Recomputed.FAILED):
            raise CommandError(f"{counts[Recomputed.FAILED]} policies failed; see the log.")
