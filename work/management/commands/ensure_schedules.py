"""Create (or correct) the django-q2 schedules every app registered (`work.schedules`)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from work.schedules import ensure_schedules


class Command(BaseCommand):
    help = (
        "Create or correct the django-q2 schedules (nightly policy sync, work pump, attempt roll-up, "
        "reconciliation, renewal reminders, history prune, expired sessions); safe to run again."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        for schedule in ensure_schedules():
            when = schedule.cron or f"every {schedule.minutes} min"
            next_run = f"{timezone.localtime(schedule.next_run):%Y-%m-%d %H:%M %Z}" if schedule.next_run else "now"
            self.stdout.write(f"{schedule.name}: {schedule.func} ({when}), next run {next_run}")
