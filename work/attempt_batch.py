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
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from django.db import connection

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
        """Insert `rows` (by default everything collected so far); returns how many.

        One prepared INSERT run for every row, not `bulk_create`: building a model per row and
        preparing each of its fields through the ORM cost more CPU than the rest of the write.
        """
        rows = self.take() if rows is None else rows
        if rows:
            sql, adapt = _insert_statement()
            with connection.cursor() as cursor:
                cursor.executemany(sql, [adapt(row) for row in rows])
        return len(rows)


_NAMES = tuple(f.name for f in fields(AttemptRecord))
_DATETIMES = ("started_at", "finished_at")


def _insert_statement() -> tuple[str, Callable[[AttemptRecord], tuple]]:
    """The attempt table's INSERT for `connection`'s database, and a row's parameters for it."""
    from integrations.models import Attempt

    ops, meta = connection.ops, Attempt._meta
    column_of = {name: field.column for field in meta.concrete_fields for name in (field.name, field.attname)}
    columns = ", ".join(ops.quote_name(column_of[name]) for name in _NAMES)
    marks = ", ".join(["%s"] * len(_NAMES))
    # Only the model's own quoted names go into the text; every value is a parameter.
    sql = f"INSERT INTO {ops.quote_name(meta.db_table)} ({columns}) VALUES ({marks})"  # noqa: S608
    at = [_NAMES.index(name) for name in _DATETIMES]

    def adapt(row: AttemptRecord) -> tuple:
        values = [getattr(row, name) for name in _NAMES]
        for index in at:
            values[index] = ops.adapt_datetimefield_value(values[index])
        return tuple(values)

    return sql, adapt


@dataclass
class BatchedRecorder(BufferedRecorder):
    """One try's recorder: what it flushes goes to its batch, not to the database."""

    batch: AttemptBatch | None = field(default=None)

    def flush(self) -> None:
        if self.batch is not None:
            self.batch.add(self.pending())
        super().flush()
