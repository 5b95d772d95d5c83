"""django-q2 task entry points: thin, each calls one service.

The retry decision is the services' (from the error taxonomy), never the queue's:
`Q_CLUSTER["max_attempts"]` is 1 and these tasks never raise for an insurer's "no".
"""

from __future__ import annotations

from integrations.attempts import retention as attempt_history
from sync import retention, services
from sync.models import SyncRun


def sync_nightly() -> int:
    """The scheduled nightly run: store an item per active policy and hand them to a few drains."""
    run = services.sync_run_start(trigger=SyncRun.Trigger.SCHEDULE)
    services.sync_run_enqueue(run)
    return run.pk


def sync_item_process(item_id: int) -> str:
    """One item (tasks queued one per item, as before drains; a caller that processes one item)."""
    return services.sync_item_process(item_id)


def sync_drain(run_id: int | None = None) -> int:
    """Claim due sync items in batches and try them with a pool of threads, until none is left."""
    return services.sync_drain(run_id)


def work_pump(seconds: float = 50.0) -> int:
    """Scheduled every minute: reclaim and requeue sync items and issuances for about a minute."""
    return services.work_pump_run(seconds=seconds)


def attempt_minutes_rollup() -> int:
    """Scheduled every minute: sum the attempt log's complete minutes for /metrics and the dashboard."""
    return attempt_history.attempt_minutes_rollup()


def history_prune() -> dict[str, int]:
    """Scheduled nightly: delete (in batches) what is past its retention."""
    return retention.history_prune()


def sessions_clear() -> int:
    """Scheduled nightly: Django's `clearsessions` (expired sessions deleted)."""
    return retention.sessions_clear()
