"""Attempt rows written by a batch (one prepared INSERT for every row) read back as recorded."""

from __future__ import annotations

from dataclasses import fields
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from integrations.attempts.recording import AttemptRecord
from integrations.models import Attempt
from work.attempt_batch import AttemptBatch

pytestmark = pytest.mark.django_db


def _record(n: int, **changes: Any) -> AttemptRecord:
    started = timezone.now().replace(microsecond=123456) - timedelta(seconds=n)
    values: dict[str, Any] = {
        "insurer_code": "anka",
        "account_key": "anka:ACENTE1",
        "operation": "policy_status",
        "product": "trafik",
        "call": "main",
        "attempt_no": n,
        "reference": f"AK-P-{n}",
        "ok": True,
        "http_status": 200,
        "provider_code": "",
        "error_class": "",
        "error_kind": "",
        "ambiguous": False,
        "message": "",
        "raw_sample": '{"status": "ACTIVE"}',
        "latency_ms": 41.5,
        "started_at": started,
        "finished_at": started + timedelta(milliseconds=41),
    }
    return AttemptRecord(**{**values, **changes})


def test_each_recorded_field_is_stored_as_it_was():
    throttled = _record(
        2,
        ok=False,
        http_status=429,
        provider_code="RATE_LIMITED",
        error_class="retryable",
        error_kind="throttled",
        ambiguous=True,
        message="Şirket yoğun.",
        wait_seconds=1.25,
        wait_reason="retry_after",
    )
    rows = [_record(1), throttled]
    batch = AttemptBatch()
    recorder = batch.recorder()
    for row in rows:
        recorder.record(row)
    recorder.flush()

    assert batch.write() == 2

    stored = list(Attempt.objects.order_by("attempt_no"))
    assert len(stored) == 2 and len(batch) == 0
    for row, attempt in zip(rows, stored, strict=True):
        assert {f.name: getattr(attempt, f.name) for f in fields(AttemptRecord)} == vars(row)
