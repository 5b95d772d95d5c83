"""What every desk view of quotes and issuances shares: the live streams' response and the final states."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase

from insurehub.cache_slots import SlotsUnavailable
from insurehub.request_types import AuthenticatedHttpRequest
from quotes import live
from work.item import WorkState

logger = logging.getLogger(__name__)

# Issuance states after which nothing changes without a human: the status fragment stops polling.
ISSUANCE_FINAL_STATES = (WorkState.SUBMITTED, WorkState.FAILED, WorkState.DEFERRED)


def live_stream_response(request: AuthenticatedHttpRequest, events: Iterator[str]) -> HttpResponseBase:
    """A live stream's response (quotes/live.py), under the open-stream caps every stream shares.

    Past the caps (per session, per user) a 429, and a 503 when the cache that counts them is
    down: the page's poll then serves the agent. The caller has checked the login and the
    agency already (another agency's record is a 404 before the first byte); `events` is a
    generator, so nothing of it runs unless the stream is let through.
    """
    user = request.user
    try:
        slots, full = live.stream_slots_take(user_id=user.pk, session_key=request.session.session_key or "")
    except SlotsUnavailable:
        logger.warning("live stream refused: the cache counting open streams did not answer")
        return _stream_refused(live.STREAMS_UNAVAILABLE_MESSAGE, status=503)
    if slots is None:
        logger.info("live stream refused: %s has its open streams' cap", full.split(":")[1])
        return _stream_refused(live.STREAMS_FULL_MESSAGE, status=429)
    response = StreamingHttpResponse(live.StreamLease(events, slots), content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy in front must pass each event on at once
    return response


def _stream_refused(message: str, *, status: int) -> HttpResponse:
    """A refused stream: a short plain answer (an `EventSource` shows nothing of it; a person
    opening the URL reads the sentence), and when to try again: after the longest stream's life."""
    response = HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(int(live.STREAM_MAX_SECONDS))
    response["Cache-Control"] = "no-store"
    return response
