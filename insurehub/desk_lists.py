"""The desk's lists: one page size, and a search whose term never travels in a URL.

Every desk app lists things the same way (customers, quote requests, policies, renewals), so
paging and the search's session tokens live below them all.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode

from insurehub.masking import mask_identity

PAGE_SIZE = 25


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
