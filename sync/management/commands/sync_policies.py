"""Sync every active policy's status with its insurer now, in this process or by the workers."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper

from sync.models import SyncRun
from sync.services import sync_run_enqueue, sync_run_process, sync_run_start

BAR_WIDTH = 24


class ProgressLine:
    """One terminal line rewritten in place: bar, then in-flight / pending / done / dead."""

    def __init__(self, out: OutputWrapper, run: SyncRun) -> None:
        self.out = out
        self.run = run
        self.shown_at = 0.0

    def update(self, counts: dict[str, int], *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.shown_at < 0.1:
            return
        self.shown_at = now
        total = counts["total"] or 1
        finished = counts["done"] + counts["dead"]
        filled = round(BAR_WIDTH * finished / total)
        self.out.write(
            f"\rSync #{self.run.pk} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {finished}/{counts['total']}"
            f"  queued {counts['queued']}  in-flight {counts['in_flight']}  pending {counts['pending']}"
            f"  done {counts['done']}  dead {counts['dead']}\x1b[K",
            ending="",
        )
        self.out.flush()

    def finish(self, counts: dict[str, int]) -> None:
        self.update(counts, force=True)
        self.out.write("")


class Command(BaseCommand):
    help = (
        "Sync every active policy's status with its insurer. By default the run is processed here, "
        "with a thread pool, until every item is final; --enqueue hands it to the django-q2 workers."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--enqueue", action="store_true", help="only create the run and queue it for the workers")
        parser.add_argument("--threads", type=int, default=8, help="items processed at once (default 8)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["threads"] < 1:
            raise CommandError("--threads must be at least 1")
        run = sync_run_start(trigger=SyncRun.Trigger.COMMAND)
        if options["enqueue"]:
            queued = sync_run_enqueue(run)
            self.stdout.write(f"Sync run #{run.pk}: {queued} policies queued for the workers.")
            return
        line = ProgressLine(self.stdout, run) if self.stdout.isatty() else None
        started = time.monotonic()
        try:
            counts = sync_run_process(run, threads=options["threads"], on_progress=line.update if line else None)
        except KeyboardInterrupt:
            if line:
                self.stdout.write("")
            raise CommandError(f"Sync run #{run.pk} interrupted; what is left is queued for the workers.") from None
        if line:
            line.finish(counts)
        self.stdout.write(
            f"Sync run #{run.pk} finished in {time.monotonic() - started:.1f} s: {counts['total']} policies, "
            f"{counts['done']} done ({counts['changed']} changed), "
            f"{counts['dead']} dead ({counts['failed']} failed, {counts['deferred']} deferred)."
        )
