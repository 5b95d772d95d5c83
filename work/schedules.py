"""The django-q2 schedules the platform needs, created idempotently by `manage.py ensure_schedules`.

Each app registers its own (`schedule_register`, from its `AppConfig.ready()`): the nightly sync is
sync's, the reconciliation and the renewal reminders are policies', the pump and the history's
upkeep are durable work's own.

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


_schedules: dict[str, ScheduleSpec] = {}


def schedule_register(spec: ScheduleSpec) -> None:
    """A schedule an app needs, by its name (called from its `AppConfig.ready()`)."""
    _schedules[spec.name] = spec


def schedules() -> tuple[ScheduleSpec, ...]:
    return tuple(_schedules.values())


def work_schedules_register() -> None:
    """The schedules of durable work itself (called from `WorkConfig.ready`)."""
    # Each run pumps for ~50 s, so retries and dead workers' records are picked up within seconds.
    schedule_register(ScheduleSpec("İş pompası", "work.tasks.work_pump", Schedule.MINUTES, minutes=1))
    # /metrics and the dashboard read these sums instead of every call ever made.
    schedule_register(
        ScheduleSpec("Çağrı özetleri (dakikalık)", "work.tasks.attempt_minutes_rollup", Schedule.MINUTES, minutes=1)
    )
    # 03:30, after the nightly sync has started and before agencies open; deletes in small batches.
    schedule_register(
        ScheduleSpec("Geçmiş temizliği (gece)", "work.tasks.history_prune", Schedule.CRON, cron="30 3 * * *")
    )
    # Expired sessions (Django's `clearsessions`): a session row holds who is logged in and a search
    # term the agent typed (a TCKN, a name), so it goes once it has run out, not never.
    schedule_register(
        ScheduleSpec("Oturum temizliği (gece)", "work.tasks.sessions_clear", Schedule.CRON, cron="15 3 * * *")
    )


@transaction.atomic
def ensure_schedules() -> list[Schedule]:
    """Create or correct the schedules by name; an unchanged schedule keeps its next run."""
    result = []
    for spec in schedules():
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
