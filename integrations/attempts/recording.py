"""The attempt log: one row per HTTP exchange with an insurer.

Rows are buffered per operation and written in one statement when the operation waits or
ends, so recording costs one write per operation step rather than one per field update, and
the wait chosen after a failed attempt can be written on that attempt's own row.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

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
    """Writes the buffered records to `Attempt` with one bulk insert per flush."""

    def flush(self) -> None:
        batch = self.pending()
        if batch:
            from integrations.models import Attempt

            Attempt.objects.bulk_create([Attempt(**vars(r)) for r in batch])
        super().flush()


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
        attempt.raw_sample[:300] if level == logging.WARNING else "",
    )
