"""When the work pump last finished a pass, kept where every process reads it (readyz, /metrics).

The pump (`work.pump.work_pump_run`, scheduled every minute, ~50 s of passes a second apart)
is what takes back dead workers' records and sends retries when they are due: a pump that has
stopped leaves issuances waiting in silence. Each process that pumps writes the time of its last
good pass into the shared cache (Redis with REDIS_URL, else the database table; settings/base.py),
at most every `BEAT_EVERY_SECONDS`, so `/readyz` on any web process and `/metrics`
(`insurehub_work_pump_last_pass_age_seconds`, alert `WorkPumpSilent`) see the same beat.

A pass that failed (the database locked, the broker down) writes no beat: "the pump ran" means
it did its work, and a pump failing every pass is as silent as a stopped one.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

BEAT_KEY = "ops:work-pump:last-pass"
BEAT_EVERY_SECONDS = 5.0
_last_written = 0.0


def pump_stale_after_seconds() -> float:
    """A beat older than this is a silent pump: three of its one-minute periods by default."""
    return float(getattr(settings, "WORK_PUMP_STALE_SECONDS", 180))


def pump_beat_record(*, force: bool = False) -> None:
    """A pass ended well: note it (at most every few seconds per process; a cache down is logged)."""
    global _last_written
    now = time.time()
    if not force and now - _last_written < BEAT_EVERY_SECONDS:
        return
    try:
        # Kept a day: a beat that old still says "silent since", rather than "never ran".
        cache.set(BEAT_KEY, now, timeout=86400)
        _last_written = now
    except Exception:  # noqa: BLE001 - the pump's own work matters more than its beat
        logger.warning("work pump: could not record its beat (cache unreachable)")


def pump_beat_last() -> datetime | None:
    """When the pump last finished a pass, or None if no beat is known. Raises if the cache is down."""
    value = cache.get(BEAT_KEY)
    if value is None:
        return None
    return datetime.fromtimestamp(float(value), tz=UTC)
