"""Sync items do not pile up: the finished ones of ended runs go after `SYNC_ITEM_RETENTION_DAYS`,
by the nightly history prune (`work.retention`), which this step is registered with."""

from __future__ import annotations

from datetime import datetime

from integrations.attempts.retention import delete_in_batches
from sync.models import SyncItem
from work.item import WorkState
from work.retention import PruneStep, history_prune_step_register


def sync_items_prune(*, before: datetime, dry_run: bool = False) -> int:
    """Delete SUBMITTED items that finished before `before`, of runs that have ended.

    Dead letters (FAILED, DEFERRED) wait for a human and are what a replay sends, and an open
    run still counts its items: those are never pruned, however old.
    """
    done = SyncItem.objects.filter(state=WorkState.SUBMITTED, finished_at__lt=before, run__finished_at__isnull=False)
    return done.count() if dry_run else delete_in_batches(done)


def sync_items_prune_register() -> None:
    history_prune_step_register(
        PruneStep(
            key="sync_items",
            label="SUBMITTED sync items of finished runs",
            setting="SYNC_ITEM_RETENTION_DAYS",
            prune=sync_items_prune,
        )
    )
