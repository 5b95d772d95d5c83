"""The attempt log: one row per HTTP exchange with an insurer.

Rows are buffered per operation and written in one statement when the operation waits or
ends, so recording costs one write per operation step rather than one per field update, and
the wait chosen after a failed attempt can be written on that attempt's own row.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from functools import lru_cache
from typing import Any, Protocol

from insurehub.masking import mask_and_cut
from integrations.answers.taxonomy import ErrorClass

logger = logging.getLogger("integrations.attempts")

MAX_RAW_SAMPLE = 2000


@dataclass
class AttemptRecord:
    insurer_code: str
    account_key: str
    operation: str
    product: str
    call: str
    attempt_no: int
    reference: str
    ok: bool
    http_status: int | None
    provider_code: str
    error_class: str
    error_kind: str
    ambiguous: bool
    message: str
    raw_sample: str
    latency_ms: float
    started_at: datetime
    finished_at: datetime
    wait_seconds: float | None = None
    wait_reason: str = ""


class AttemptRecorder(Protocol):
    def record(self, attempt: AttemptRecord) -> None: ...

    def annotate_wait(self, seconds: float, reason: str) -> None: ...

    def flush(self) -> None: ...


@dataclass
class BufferedRecorder:
    """Keeps records in memory; `records` is what was recorded (benchmarks, dry runs)."""

    records: list[AttemptRecord] = field(default_factory=list)
    _unflushed: int = 0

    def record(self, attempt: AttemptRecord) -> None:
        self.records.append(attempt)
        self._unflushed += 1
        _log(attempt)

    def annotate_wait(self, seconds: float, reason: str) -> None:
        if self.records:
            self.records[-1].wait_seconds = round(seconds, 3)
            self.records[-1].wait_reason = reason[:64]

    def pending(self) -> list[AttemptRecord]:
        return self.records[len(self.records) - self._unflushed :] if self._unflushed else []

    def flush(self) -> None:
        self._unflushed = 0


class DatabaseRecorder(BufferedRecorder):
    """Writes the buffered records to `Attempt` with one INSERT per flush (`attempts_insert`).

    Synchronous on purpose: when `flush` returns the rows are in the database, so a durable
    record or an issuance that decides after a flush never decides on an attempt not logged.
    """

    def flush(self) -> None:
        batch = self.pending()
        if batch:
            attempts_insert(batch)
        super().flush()


# Rows per INSERT: 21 columns each stays far under SQLite's bound on parameters.
_INSERT_CHUNK = 40


def attempts_insert(records: Sequence[AttemptRecord]) -> None:
    """Insert attempt rows with one plain INSERT statement per chunk of rows.

    The attempt log is written on every insurer call, so this is the hot path: the ORM's
    `bulk_create` builds model instances, compiles the statement and opens a transaction each
    time, a few hundred microseconds a call. The statement here is built once per database
    and row count; only datetimes need the database's own form (`adapt_datetimefield_value`:
    naive UTC text on SQLite). One statement is atomic on its own, so no transaction is opened
    beyond the caller's.
    """
    from django.db import connection

    names, defaults = _attempt_fields()
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        for start in range(0, len(records), _INSERT_CHUNK):
            chunk = records[start : start + _INSERT_CHUNK]
            params: list[Any] = []
            for record in chunk:
                values = vars(record)
                for name in names:
                    value = values[name] if name in values else defaults[name]
                    params.append(adapt(value) if isinstance(value, datetime) else value)
            cursor.execute(_insert_sql(connection.vendor, len(chunk)), params)


def _attempt_model_fields() -> list[Any]:
    from integrations.models import Attempt

    return [f for f in Attempt._meta.concrete_fields if not f.primary_key]


@lru_cache(maxsize=1)
def _attempt_fields() -> tuple[tuple[str, ...], dict[str, Any]]:
    """The Attempt model's fields other than its key, in column order, and defaults for those
    an `AttemptRecord` does not carry."""
    recorded = {f.name for f in fields(AttemptRecord)}
    model_fields = _attempt_model_fields()
    defaults = {f.name: f.get_default() for f in model_fields if f.name not in recorded}
    return tuple(f.name for f in model_fields), defaults


@lru_cache(maxsize=64)
def _insert_sql(vendor: str, rows: int) -> str:
    from django.db import connection

    from integrations.models import Attempt

    columns = [f.column for f in _attempt_model_fields()]
    quote = connection.ops.quote_name
    one = "(" + ", ".join(["%s"] * len(columns)) + ")"
    # Only the model's own table and column names and placeholders: no value is spliced in.
    return (
        f"INSERT INTO {quote(Attempt._meta.db_table)} ({', '.join(quote(c) for c in columns)}) "  # noqa: S608
        f"VALUES {', '.join([one] * rows)}"
    )


def _log(attempt: AttemptRecord) -> None:
    if attempt.ok:
        logger.info(
            "insurer=%s op=%s call=%s attempt=%d ok latency_ms=%.0f",
            attempt.insurer_code,
            attempt.operation,
            attempt.call,
            attempt.attempt_no,
            attempt.latency_ms,
        )
        return
    # Unknown codes are logged loudly with the raw code so somebody classifies them soon.
    level = logging.WARNING if attempt.error_class == ErrorClass.UNKNOWN else logging.INFO
    logger.log(
        level,
        "insurer=%s op=%s call=%s attempt=%d failed class=%s kind=%s provider_code=%s http=%s raw=%r",
        attempt.insurer_code,
        attempt.operation,
        attempt.call,
        attempt.attempt_no,
        attempt.error_class,
        attempt.error_kind,
        attempt.provider_code,
        attempt.http_status,
        mask_and_cut(attempt.raw_sample, 300) if level == logging.WARNING else "",
    )
