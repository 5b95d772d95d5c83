"""The django-q2 schedules the platform needs, created idempotently by `manage.py ensure_schedules`.

Not a data migration: a migration would write `Schedule` rows through the historical model,
which skips `Schedule.save()` and so would not compute the cron's first run (the nightly sync
would start at deploy time instead of at night).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django_q.models import Schedule


@dataclass(frozen=True)
class ScheduleSpec:
    name: str
    func: str
    schedule_type: str
    cron: str | None = None
    minutes: int | None = None


SCHEDULES = (
    # Cron times are read in TIME_ZONE (Europe/Istanbul): 02:00 Turkish time, when agencies are closed.
    ScheduleSpec("Poliçe eşitleme (gece)", "sync.tasks.sync_nightly", Schedule.CRON, cron="0 2 * * *"),
    # Each run pumps for ~50 s, so retries and dead workers' records are picked up within seconds.
    ScheduleSpec("İş pompası", "sync.tasks.work_pump", Schedule.MINUTES, minutes=1),
    # /metrics and the dashboard read these sums instead of every call ever made.
    ScheduleSpec("Çağrı özetleri (dakikalık)", "sync.tasks.attempt_minutes_rollup", Schedule.MINUTES, minutes=1),
    # 02:30: every insurer's production list of the last week against the platform's policies.
    ScheduleSpec(
        "Üretim listesi mutabakatı (gece)", "policies.tasks.reconciliation_nightly", Schedule.CRON, cron="30 2 * * *"
    ),
    # 08:30, before agencies open: whoever is responsible sees the policies ending in 30/15/7 days.
    ScheduleSpec(
        "Yenileme hatırlatmaları (sabah)", "policies.tasks.renewal_reminders_daily", Schedule.CRON, cron="30 8 * * *"
    ),
    # 03:30, after the nightly sync has started and before agencies open; deletes in small batches.
    ScheduleSpec("Geçmiş temizliği (gece)", "sync.tasks.history_prune", Schedule.CRON, cron="30 3 * * *"),
    # Expired sessions (Django's `clearsessions`): a session row holds who is logged in and a search
    # term the agent typed (a TCKN, a name), so it goes once it has run out, not never.
    ScheduleSpec("Oturum temizliği (gece)", "sync.tasks.sessions_clear", Schedule.CRON, cron="15 3 * * *"),
)


@transaction.atomic
def ensure_schedules() -> list[Schedule]:
    """Create or correct the schedules by name; an unchanged schedule keeps its next run."""
    result = []
    for spec in SCHEDULES:
        rows = list(Schedule.objects.filter(name=spec.name).order_by("pk"))
        for duplicate in rows[1:]:
            duplicate.delete()
        schedule = rows[0] if rows else Schedule(name=spec.name)
        wanted = {
            "func": spec.func,
            "schedule_type": spec.schedule_type,
            "cron": spec.cron,
            "minutes": spec.minutes,
            "repeats": -1,
        }
        changed = schedule.pk is None or any(getattr(schedule, field) != value for field, value in wanted.items())
        if changed:
            for field, value in wanted.items():
                setattr(schedule, field, value)
            if schedule.pk is not None and spec.schedule_type == Schedule.CRON:
                schedule.next_run = schedule.calculate_next_run()
            schedule.save()
        result.append(schedule)
    return result
