"""Delete what is past its retention: raw attempt rows, old minute sums, budget buckets, finished work records."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from work.retention import history_prune, history_prune_steps

WHAT = {
    "attempts": ("raw attempt rows", "ATTEMPT_RETENTION_DAYS", "days"),
    "attempt_minutes": ("minute sums (their calls stay in the all-time totals)", "AGGREGATE_RETENTION_DAYS", "days"),
    "budget_buckets": ("retry-budget buckets", "BUDGET_BUCKET_RETENTION_MINUTES", "minutes"),
}


class Command(BaseCommand):
    help = "Prune history past its retention (the nightly job does the same); --dry-run only counts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="count what would be deleted, delete nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        dry_run = options["dry_run"]
        counts = history_prune(dry_run=dry_run)
        verb = "would delete" if dry_run else "deleted"
        what = WHAT | {step.key: (step.label, step.setting, "days") for step in history_prune_steps()}
        for key, (label, setting, unit) in what.items():
            limit = getattr(settings, setting)
            self.stdout.write(f"{key}: {verb} {counts[key]} {label} older than {limit} {unit} ({setting})")
