"""Policy period dates in every form the insurers send, read the same on the fast ISO path."""

from __future__ import annotations

from datetime import date

import pytest

from integrations.adapters.base import parse_policy_date


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-03-01", date(2026, 3, 1)),
        (" 2026-03-01 ", date(2026, 3, 1)),
        ("01.03.2026", date(2026, 3, 1)),
        ("01/03/2026", date(2026, 3, 1)),
        ("2026-3-1", date(2026, 3, 1)),
        ("2026-03-01T10:00:00Z", date(2026, 3, 1)),
        ("2026-02-30", None),
        ("2026-13-01", None),
        ("2026-xx-01", None),
        ("", None),
        (None, None),
        (20260301, None),
    ],
)
def test_policy_dates(raw, expected):
    assert parse_policy_date(raw) == expected
