"""What every desk view shares: login for htmx fragments, paging, and searches kept out of URLs."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django_htmx.http import HttpResponseClientRedirect

from insurehub.cache_slots import SlotsUnavailable
from insurehub.request_types import AuthenticatedHttpRequest
from quotes import live
from work.item import WorkState

logger = logging.getLogger(__name__)

# Issuance states after which nothing changes without a human: the status fragment stops polling.
ISSUANCE_FINAL_STATES = (WorkState.SUBMITTED, WorkState.FAILED, WorkState.DEFERRED)


def fragment_login_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Like `login_required`, but a logged-out htmx poll sends the whole page to the login form
    instead of swapping the login page into a table cell."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        htmx = getattr(request, "htmx", None)
        if htmx:
            page = htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(redirect_to_login(page).url)
        return redirect_to_login(request.get_full_path())

    return wrapper


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
