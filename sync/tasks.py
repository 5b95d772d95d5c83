"""django-q2 task entry points of the nightly sync: thin, each calls one service.

The retry decision is the services' (from the error taxonomy), never the queue's:
`Q_CLUSTER["max_attempts"]` is 1 and these tasks never raise for an insurer's "no".
"""

from __future__ import annotations

from sync import services
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
