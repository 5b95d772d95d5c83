"""Attempt rows of many tries, written together: one insert per batch instead of one per try.

A worker that keeps hundreds of durable tries a second in flight would otherwise pay one INSERT
(and, on SQLite, one write transaction) per try for the attempt log alone. Each try gets its own
recorder (`AttemptBatch.recorder()`, what `insurer_operation_run` takes); what it flushes joins
the batch, and the batch's owner writes it, in the same transaction as the answers it stores
(`write`), so a stored answer never lacks its attempt row. Rows still unwritten when a process
dies are lost with it (at most one flush interval's), the records themselves are not: their
leases bring them back.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from integrations.attempts.recording import AttemptRecord, BufferedRecorder


class AttemptBatch:
    """Collects flushed attempt records from many threads; `write` inserts them in one statement."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: list[AttemptRecord] = []

    def recorder(self) -> BatchedRecorder:
        return BatchedRecorder(batch=self)

    def add(self, rows: list[AttemptRecord]) -> None:
        if rows:
            with self._lock:
                self._rows.extend(rows)

    def __len__(self) -> int:
        return len(self._rows)

    def take(self) -> list[AttemptRecord]:
        with self._lock:
            rows, self._rows = self._rows, []
        return rows

    def write(self, rows: list[AttemptRecord] | None = None) -> int:
        """Insert `rows` (by default everything collected so far); returns how many."""
        from integrations.models import Attempt

        rows = self.take() if rows is None else rows
        if rows:
            Attempt.objects.bulk_create([Attempt(**vars(r)) for r in rows], batch_size=500)
        return len(rows)


@dataclass
class BatchedRecorder(BufferedRecorder):
    """One try's recorder: what it flushes goes to its batch, not to the database."""

    batch: AttemptBatch | None = field(default=None)

    def flush(self) -> None:
        if self.batch is not None:
            self.batch.add(self.pending())
        super().flush()
