"""Nightly retention: old finished sync items go, dead letters and open runs stay; the command reports."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from integrations.attempts.retention import ALL_TIME_MINUTE
from integrations.models import Attempt, AttemptMinute
from sync.models import SyncItem, SyncRun
from work import tasks
from work.item import WorkState

pytestmark = pytest.mark.django_db


@pytest.fixture
def aged_items(make_policies) -> dict[str, SyncItem]:
    """Items 100 days old in every final state, one 10 days old, and old ones of a run still open."""
    policies = iter(make_policies("anka", [f"P-RET-{n}" for n in range(7)]))
    now = timezone.now()
    finished_run = SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND, finished_at=now - timedelta(days=99))
    open_run = SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND)

    def item(run: SyncRun, state: str, age_days: int) -> SyncItem:
        return SyncItem.objects.create(
            run=run, policy=next(policies), state=state, finished_at=now - timedelta(days=age_days)
        )

    return {
        "old_done": item(finished_run, WorkState.SUBMITTED, 100),
        "old_failed": item(finished_run, WorkState.FAILED, 100),
        "old_deferred": item(finished_run, WorkState.DEFERRED, 100),
        "young_done": item(finished_run, WorkState.SUBMITTED, 10),
        "open_run_done": item(open_run, WorkState.SUBMITTED, 100),
        "open_run_pending": item(open_run, WorkState.PENDING, 100),
    }


def test_only_old_submitted_items_of_finished_runs_are_pruned(aged_items, settings):
    """Dead letters wait for a human and an open run still counts its items: both stay, however old."""
    settings.SYNC_ITEM_RETENTION_DAYS = 90

    counts = tasks.history_prune()

    assert counts["sync_items"] == 1
    kept = set(SyncItem.objects.values_list("pk", flat=True))
    assert kept == {item.pk for name, item in aged_items.items() if name != "old_done"}


def test_prune_history_dry_run_prints_and_keeps(aged_items, settings):
    """`prune_history --dry-run` names what it would delete and deletes nothing; without it, deletes."""
    settings.SYNC_ITEM_RETENTION_DAYS = 90
    started = timezone.now() - timedelta(days=45)
    Attempt.objects.create(
        insurer_code="anka",
        operation="trafik_quote",
        product="trafik",
        attempt_no=1,
        ok=True,
        latency_ms=20.0,
        started_at=started,
        finished_at=started,
    )
    tasks.attempt_minutes_rollup()
    out = StringIO()

    call_command("prune_history", "--dry-run", stdout=out)

    assert "sync_items: would delete 1 SUBMITTED sync items of finished runs older than 90 days" in out.getvalue()
    assert "attempts: would delete 1 raw attempt rows older than 30 days" in out.getvalue()
    assert SyncItem.objects.count() == 6 and Attempt.objects.count() == 1

    out = StringIO()
    call_command("prune_history", stdout=out)

    assert "sync_items: deleted 1 " in out.getvalue() and "attempts: deleted 1 " in out.getvalue()
    assert SyncItem.objects.count() == 5 and Attempt.objects.count() == 0
    assert AttemptMinute.objects.get(minute=ALL_TIME_MINUTE).count == 1


def test_expired_sessions_are_cleared_on_the_schedule(db):
    """The nightly `sessions_clear` task deletes expired sessions (a session may hold a search term) only."""
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session

    live, expired = SessionStore(), SessionStore()
    live["arama"] = "x"
    live.create()
    expired.create()
    Session.objects.filter(session_key=expired.session_key).update(expire_date=timezone.now() - timedelta(days=1))

    assert tasks.sessions_clear() == 1
    assert list(Session.objects.values_list("session_key", flat=True)) == [live.session_key]


def test_login_history_past_its_retention_is_pruned(db, settings):
    """Lock-outs and stale failed-login counters name a username and an address: kept 90 days."""
    from agencies.models import LoginFailure, LoginLockout

    settings.LOGIN_HISTORY_RETENTION_DAYS = 90
    now = timezone.now()
    old, young = now - timedelta(days=100), now - timedelta(days=10)
    for at in (old, young):
        LoginLockout.objects.create(scope="pair", username="u", ip_address="192.0.2.1", locked_at=at, locked_until=at)
    LoginFailure.objects.create(username="u", ip_address="192.0.2.1", failures=3, window_started_at=old)
    LoginFailure.objects.create(username="v", ip_address="192.0.2.1", failures=3, window_started_at=young)

    counts = tasks.history_prune()

    assert counts["login_lockouts"] == 1 and counts["login_counters"] == 1
    assert list(LoginLockout.objects.values_list("locked_at", flat=True)) == [young]
    assert list(LoginFailure.objects.values_list("username", flat=True)) == ["v"]
