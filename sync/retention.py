"""The platform's history kept bounded: the attempt log, its minute sums, budget buckets, sync items,
and the personal data logins leave behind (failed-login counters and lock-outs name a username and
an address: `LOGIN_HISTORY_RETENTION_DAYS`, 90) and expired sessions (`sessions_clear`).

It lives in `sync`, the layer that knows both the integration core's tables and its own work
records; `integrations.attempts.retention` does the attempt side and never reaches up here.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from agencies.models import LoginFailure, LoginLockout
from integrations.attempts.retention import Retention, attempt_history_prune, delete_in_batches
from integrations.work.item import WorkState
from sync.models import SyncItem


def sync_items_prune(*, before: datetime, dry_run: bool = False) -> int:
    """Delete SUBMITTED items that finished before `before`, of runs that have ended.

    Dead letters (FAILED, DEFERRED) wait for a human and are what a replay sends, and an open
    run still counts its items: those are never pruned, however old.
    """
    done = SyncItem.objects.filter(state=WorkState.SUBMITTED, finished_at__lt=before, run__finished_at__isnull=False)
    return done.count() if dry_run else delete_in_batches(done)


def history_prune(*, now: datetime | None = None, dry_run: bool = False) -> dict[str, int]:
    """Everything past its retention (settings `*_RETENTION_*`): rows deleted, or to delete with `dry_run`."""
    now = now or timezone.now()
    retention = Retention(
        attempt_days=settings.ATTEMPT_RETENTION_DAYS,
        aggregate_days=settings.AGGREGATE_RETENTION_DAYS,
        budget_bucket_minutes=settings.BUDGET_BUCKET_RETENTION_MINUTES,
    )
    counts = attempt_history_prune(retention=retention, now=now, dry_run=dry_run)
    counts["sync_items"] = sync_items_prune(
        before=now - timedelta(days=settings.SYNC_ITEM_RETENTION_DAYS), dry_run=dry_run
    )
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
