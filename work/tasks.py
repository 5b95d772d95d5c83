"""django-q2 task entry points of durable work itself: thin, each calls one service.

The retry decision is the services' (from the error taxonomy), never the queue's:
`Q_CLUSTER["max_attempts"]` is 1 and these tasks never raise for an insurer's "no".
"""

from __future__ import annotations

from integrations.attempts import retention as attempt_history
from work import pump, retention


def work_pump(seconds: float = 50.0) -> int:
    """Scheduled every minute: every kind of durable record pumped for about a minute."""
    return pump.work_pump_run(seconds=seconds)


def attempt_minutes_rollup() -> int:
    """Scheduled every minute: sum the attempt log's complete minutes for /metrics and the dashboard."""
    return attempt_history.attempt_minutes_rollup()


def history_prune() -> dict[str, int]:
    """Scheduled nightly: delete (in batches) what is past its retention."""
    return retention.history_prune()


def sessions_clear() -> int:
    """Scheduled nightly: Django's `clearsessions` (expired sessions deleted)."""
    return retention.sessions_clear()
