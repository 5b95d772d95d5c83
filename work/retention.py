"""The platform's history kept bounded: the attempt log, its minute sums, budget buckets, finished
work records of the kinds that register a prune step (sync items), and the personal data logins
leave behind (failed-login counters and lock-outs name a username and an address:
`LOGIN_HISTORY_RETENTION_DAYS`, 90) and expired sessions (`sessions_clear`).

`integrations.attempts.retention` does the attempt side and never reaches up here; an app whose
records grow without end registers how they are pruned (`history_prune_step_register`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from agencies.models import LoginFailure, LoginLockout
from integrations.attempts.retention import Retention, attempt_history_prune, delete_in_batches


@dataclass(frozen=True)
class PruneStep:
    """One app's records pruned nightly: `prune(before=, dry_run=)` deletes (or counts) those
    finished before `before`, `setting` (days) says how long they are kept; `label` is what
    `manage.py prune_history` prints."""

    key: str
    label: str
    setting: str
    prune: Callable[..., int]


_steps: dict[str, PruneStep] = {}


def history_prune_step_register(step: PruneStep) -> None:
    _steps[step.key] = step


def history_prune_steps() -> tuple[PruneStep, ...]:
    return tuple(_steps.values())


def history_prune(*, now: datetime | None = None, dry_run: bool = False) -> dict[str, int]:
    """Everything past its retention (settings `*_RETENTION_*`): rows deleted, or to delete with `dry_run`."""
    now = now or timezone.now()
    retention = Retention(
        attempt_days=settings.ATTEMPT_RETENTION_DAYS,
        aggregate_days=settings.AGGREGATE_RETENTION_DAYS,
        budget_bucket_minutes=settings.BUDGET_BUCKET_RETENTION_MINUTES,
    )
    counts = attempt_history_prune(retention=retention, now=now, dry_run=dry_run)
    for step in history_prune_steps():
        counts[step.key] = step.prune(before=now - timedelta(days=getattr(settings, step.setting)), dry_run=dry_run)
    counts.update(
        login_history_prune(
            before=now - timedelta(days=settings.LOGIN_HISTORY_RETENTION_DAYS), now=now, dry_run=dry_run
        )
    )
    return counts


def login_history_prune(*, before: datetime, now: datetime, dry_run: bool = False) -> dict[str, int]:
    """Lock-outs that started before `before`, and counters whose window and lock are long over."""
    lockouts = LoginLockout.objects.filter(locked_at__lt=before)
    counters = LoginFailure.objects.filter(window_started_at__lt=before).exclude(locked_until__gt=now)
    if dry_run:
        return {"login_lockouts": lockouts.count(), "login_counters": counters.count()}
    return {"login_lockouts": delete_in_batches(lockouts), "login_counters": delete_in_batches(counters)}


def sessions_clear() -> int:
    """Expired sessions deleted (Django's `clearsessions`); returns how many there were."""
    from importlib import import_module

    from django.contrib.sessions.models import Session

    expired = Session.objects.filter(expire_date__lt=timezone.now()).count()
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
    return expired
