"""Reading insurers' wait signals and computing our own backoff.

The insurer's wait signal always wins over our backoff: it knows when its window reopens. We
only guard against nonsense (negative, garbage, a date in the past, a wait of a week): the
value is clamped to `MAX_SIGNALLED_WAIT`, and the retry engine further refuses any wait that
would run past the operation's deadline.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from integrations.answers.taxonomy import WaitHint

# No signalled wait longer than this is believed; an hour already means "try in a later run".
MAX_SIGNALLED_WAIT = 3600.0


def _clamp(seconds: float) -> float:
    if math.isnan(seconds):
        return 0.0
    return min(max(seconds, 0.0), MAX_SIGNALLED_WAIT)


def parse_delay_seconds(value: object) -> float | None:
    """A delay given as a number of seconds (`Retry-After: 3`, `<TekrarDenemeSn>3`)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        text = str(value).strip()
        if not text or len(text) > 32:
            return None
        try:
            seconds = float(text)
        except ValueError:
            return None
    if math.isnan(seconds):
        return None
    return _clamp(seconds)


def parse_http_date_delay(value: str, *, now: datetime) -> float | None:
    """`Retry-After` as an HTTP-date: seconds from `now` until then (0 when already past)."""
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return _clamp((when - now).total_seconds())


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """RFC 9110 `Retry-After`: either delay-seconds or an HTTP-date."""
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    seconds = parse_delay_seconds(text)
    if seconds is not None:
        return seconds
    return parse_http_date_delay(text, now=now or datetime.now(UTC))


def parse_reset_epoch(value: str | None, *, now: datetime | None = None) -> float | None:
    """`X-RateLimit-Reset: <unix seconds>`: seconds from `now` until that instant."""
    if value is None:
        return None
    try:
        epoch = float(str(value).strip())
    except ValueError:
        return None
    if math.isnan(epoch) or math.isinf(epoch):
        return None
    current = (now or datetime.now(UTC)).timestamp()
    return _clamp(epoch - current)


def hint_from_retry_after(value: str | None, *, now: datetime | None = None) -> WaitHint | None:
    seconds = parse_retry_after(value, now=now)
    return None if seconds is None else WaitHint(seconds, "Retry-After")


def full_jitter_backoff(attempt: int, *, base: float, cap: float, rng: random.Random | None = None) -> float:
    """AWS "full jitter": uniform(0, min(cap, base * 2^(attempt-1))).

    Full jitter spreads retries of many clients that failed together over the whole window,
    so they do not come back as one synchronised wave.
    """
    attempt = max(1, attempt)
    exponent = min(attempt - 1, 62)  # 2**62 is already far past any cap
    ceiling = min(cap, base * (2.0**exponent))
    return (rng or random).uniform(0.0, max(0.0, ceiling))


def signalled_wait_with_spread(hint: WaitHint, *, spread: float, rng: random.Random | None = None) -> float:
    """Honour the signalled wait, never less, plus a small random spread on top.

    Everyone throttled in the same second gets the same `Retry-After`; without a spread they
    would all return in the same instant and be throttled again together.
    """
    extra = (rng or random).uniform(0.0, max(0.0, spread) * max(hint.seconds, 0.1))
    return hint.seconds + extra
