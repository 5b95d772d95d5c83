"""Wait-signal parsing and backoff bounds (property-based)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from hypothesis import given
from hypothesis import strategies as st

from integrations.answers.taxonomy import WaitHint
from integrations.pacing.waits import (
    MAX_SIGNALLED_WAIT,
    full_jitter_backoff,
    parse_reset_epoch,
    parse_retry_after,
    signalled_wait_with_spread,
)

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


def test_retry_after_seconds_is_read_as_a_delay():
    """`Retry-After: 3` means three seconds."""
    assert parse_retry_after("3", now=NOW) == 3.0


def test_retry_after_http_date_is_read_relative_to_now():
    """`Retry-After` as an IMF-fixdate is the time left until that instant."""
    value = format_datetime(NOW + timedelta(seconds=7), usegmt=True)
    assert parse_retry_after(value, now=NOW) == 7.0


def test_retry_after_in_the_past_means_no_wait():
    """A date already gone is a wait of zero, never negative."""
    value = format_datetime(NOW - timedelta(hours=1), usegmt=True)
    assert parse_retry_after(value, now=NOW) == 0.0


def test_reset_epoch_is_seconds_until_that_unix_time():
    """Deniz's `X-RateLimit-Reset` holds a unix time, not a delay."""
    assert parse_reset_epoch(str(int(NOW.timestamp()) + 5), now=NOW) == 5.0


@given(st.text(max_size=60))
def test_garbage_retry_after_never_raises_and_stays_bounded(value):
    """Whatever the header holds, the answer is None or a wait within [0, MAX]."""
    seconds = parse_retry_after(value, now=NOW)
    assert seconds is None or 0.0 <= seconds <= MAX_SIGNALLED_WAIT


@given(st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True)))
def test_huge_or_negative_numeric_signals_are_clamped(value):
    """A wait of a week or of minus a minute is clamped into [0, MAX]."""
    seconds = parse_retry_after(str(value), now=NOW)
    assert seconds is None or 0.0 <= seconds <= MAX_SIGNALLED_WAIT
    epoch = parse_reset_epoch(str(value), now=NOW)
    assert epoch is None or 0.0 <= epoch <= MAX_SIGNALLED_WAIT


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(9000, 1, 1), timezones=st.just(UTC)))
def test_any_http_date_gives_a_bounded_wait(when):
    """Past dates give 0, far-future dates are capped."""
    seconds = parse_retry_after(format_datetime(when, usegmt=True), now=NOW)
    assert seconds is not None and 0.0 <= seconds <= MAX_SIGNALLED_WAIT


@given(
    attempt=st.integers(min_value=-5, max_value=10_000),
    base=st.floats(min_value=0.0, max_value=100.0),
    cap=st.floats(min_value=0.0, max_value=1000.0),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_full_jitter_stays_within_zero_and_the_capped_exponential(attempt, base, cap, seed):
    """Backoff is never negative and never above min(cap, base * 2^(n-1))."""
    wait = full_jitter_backoff(attempt, base=base, cap=cap, rng=random.Random(seed))
    ceiling = min(cap, base * 2.0 ** min(max(attempt, 1) - 1, 62))
    assert 0.0 <= wait <= ceiling + 1e-9


def test_full_jitter_spreads_waits_over_the_whole_window():
    """Many clients failing together do not come back together."""
    rng = random.Random(1)
    waits = [full_jitter_backoff(4, base=1.0, cap=100.0, rng=rng) for _ in range(2000)]
    assert min(waits) < 0.5 and max(waits) > 7.5
    assert 3.5 < sum(waits) / len(waits) < 4.5


@given(seconds=st.floats(min_value=0.0, max_value=3600.0), spread=st.floats(min_value=0.0, max_value=1.0))
def test_signalled_wait_is_never_shortened(seconds, spread):
    """The insurer's wait wins: we may wait a little longer, never less."""
    wait = signalled_wait_with_spread(WaitHint(seconds, "Retry-After"), spread=spread, rng=random.Random(0))
    assert seconds <= wait <= seconds + spread * max(seconds, 0.1) + 1e-9
