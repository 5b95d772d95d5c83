"""The attempt log's writer: every field of a record lands in its `Attempt` row as recorded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from integrations.attempts.recording import AttemptRecord, DatabaseRecorder, attempts_insert
from integrations.models import Attempt

pytestmark = pytest.mark.django_db


def _record(n: int, **changes) -> AttemptRecord:
    started = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=timezone(timedelta(hours=3)))
    fields: dict[str, Any] = {
        "insurer_code": "anka",
        "account_key": "anka:ACENTE1",
        "operation": "trafik_quote",
        "product": "trafik",
        "call": "main",
        "attempt_no": n,
        "reference": f"IH-{n}",
        "ok": False,
        "http_status": 429,
        "provider_code": "RATE_LIMITED",
        "error_class": "retryable",
        "error_kind": "throttled",
        "ambiguous": True,
        "message": "Çok fazla istek — ğüşıöç",
        "raw_sample": '{"code": "RATE_LIMITED"}',
        "latency_ms": 12.5,
        "started_at": started,
        "finished_at": started + timedelta(milliseconds=12.5),
        "wait_seconds": 1.25,
        "wait_reason": "signal:retry-after",
    }
    fields.update(changes)
    return AttemptRecord(**fields)


def test_every_field_round_trips():
    record = _record(1)

    attempts_insert([record])

    row = Attempt.objects.get()
    for name, value in vars(record).items():
        assert getattr(row, name) == value, name
    assert row.started_at.astimezone(UTC) == datetime(2026, 3, 1, 6, 30, 15, 123456, tzinfo=UTC)


def test_nulls_and_more_rows_than_one_statement_holds():
    records = [_record(i, ok=True, http_status=None, wait_seconds=None, provider_code="") for i in range(1, 96)]

    attempts_insert(records)

    assert Attempt.objects.count() == 95
    assert sorted(Attempt.objects.values_list("attempt_no", flat=True)) == list(range(1, 96))
    assert not Attempt.objects.exclude(http_status=None).exists()


def test_the_database_recorder_writes_what_is_pending_once():
    recorder = DatabaseRecorder()
    recorder.record(_record(1))
    recorder.annotate_wait(2.0, "backoff:full-jitter")
    recorder.flush()
    recorder.flush()
    recorder.record(_record(2))
    recorder.flush()

    rows = Attempt.objects.order_by("attempt_no").values_list("attempt_no", "wait_seconds")
    assert list(rows) == [(1, 2.0), (2, 1.25)]
