"""What every desk view shares: login for htmx fragments, paging, and searches kept out of URLs."""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode
from django_htmx.http import HttpResponseClientRedirect

from insurehub.cache_slots import SlotsUnavailable
from insurehub.request_types import AuthenticatedHttpRequest
from integrations.masking import mask_identity
from integrations.work.item import WorkState
from quotes import live

logger = logging.getLogger(__name__)

PAGE_SIZE = 25
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


def page_of(request: HttpRequest, items: Any) -> Page:
    return Paginator(items, PAGE_SIZE).get_page(request.GET.get("sayfa"))


# --- search: the term travels in a POST body, never in a URL ------------------------------------
#
# A customer's TCKN in a URL ends up in access logs, proxy logs, the browser's history and the
# Referer of the next page. So the search form POSTs; the term is kept in the agent's session
# under a random token, and the list is shown at `?arama=<token>`: a URL that pages, reloads and
# comes back with the Back button like any GET, but names nobody. Tokens run out after a while.

SEARCH_SESSION_KEY = "desk_searches"
SEARCH_TTL_SECONDS = 30 * 60
# Older searches are forgotten first: a session never grows without bound.
SEARCH_MAX_KEPT = 20
SEARCH_MAX_LENGTH = 64
_IDENTITY_RE = re.compile(r"[0-9]{10,11}")


@dataclass(frozen=True)
class DeskSearch:
    term: str = ""
    token: str = ""
    expired: bool = False

    @property
    def shown(self) -> str:
        """The term as the page may repeat it: an identity number only masked (KVKK)."""
        compact = "".join(self.term.split())
        return mask_identity(compact) if _IDENTITY_RE.fullmatch(compact) else self.term


def search_remember(request: HttpRequest, term: str) -> str:
    now = time.time()
    kept = {token: entry for token, entry in request.session.get(SEARCH_SESSION_KEY, {}).items() if entry[1] > now}
    token = secrets.token_urlsafe(9)
    kept[token] = [term, now + SEARCH_TTL_SECONDS]
    request.session[SEARCH_SESSION_KEY] = dict(sorted(kept.items(), key=lambda item: item[1][1])[-SEARCH_MAX_KEPT:])
    return token


def search_recall(request: HttpRequest) -> DeskSearch:
    token = request.GET.get("arama", "")
    if not token:
        return DeskSearch()
    entry = request.session.get(SEARCH_SESSION_KEY, {}).get(token)
    if entry is None or entry[1] <= time.time():
        return DeskSearch(expired=True)
    return DeskSearch(term=entry[0], token=token)


def search_redirect(request: HttpRequest, list_url_name: str) -> HttpResponse:
    term = request.POST.get("q", "").strip()[:SEARCH_MAX_LENGTH]
    url = reverse(list_url_name)
    if not term:
        return redirect(url)
    return redirect(f"{url}?{urlencode({'arama': search_remember(request, term)})}")
