"""The work pump: every registered kind of durable record kept moving, once a second.

Scheduled every minute (`work.tasks.work_pump`), it passes about once a second for ~50 s, so a
retry starts about a second after it is due rather than up to a minute later, a dead worker's
record comes back within its lease, and a task the broker lost is sent again. What it does per
kind is the kind's registration (`work.registry`); what it does besides (quote requests whose
dispatch was lost, while their agent waits) is a registered pump pass.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings

from work.dispatch import work_pump_kind
from work.pump_beat import pump_beat_record
from work.registry import pump_passes, work_kinds
from work.services import work_stop_event

logger = logging.getLogger(__name__)


def work_pump_pass() -> int:
    """One pass over every kind and every registered pump pass; returns how many records moved."""
    moved = 0
    for registration in work_kinds():
        moved += len(work_pump_kind(registration))
    for pump_pass in pump_passes():
        moved += len(pump_pass())
    return moved


def work_pump_run(*, seconds: float = 50.0, interval: float = 1.0) -> int:
    """Pump for `seconds`, a pass every `interval`; kept well inside django-q2's task timeout,
    or the cluster would kill the pump mid-pass."""
    seconds = min(seconds, max(settings.Q_CLUSTER["timeout"] - 10, 1))
    end = time.monotonic() + seconds
    # django-q2 stops a worker only after the task in hand: without this the pump's ~50 s held
    # every stop of the cluster for as long.
    stopping = work_stop_event()
    moved = 0
    while not stopping.is_set():
        try:
            moved += work_pump_pass()
            pump_beat_record()
        except Exception:
            # A busy database (SQLite's lock) or a broker that is down (Redis restarting) must not
            # cost the rest of this minute's pumping: what a pass could not send, the next one sends.
            logger.exception("work pump pass failed; trying again")
        if time.monotonic() + interval >= end:
            return moved
        stopping.wait(interval)
    # The pump holds no record: ending a pass early leaves nothing IN_FLIGHT, and the next
    # cluster's pump picks up where this one left off.
    logger.info("work pump: the cluster is stopping; pump ended early")
    return moved
