"""The agent's quote desk: thin views over the quote and issuance services.

Every view needs a login and reads through the agency-scoped selectors, so another agency's
id is simply "not found" (404). The insurer calls never run here: creating a request only
stores it and queues the work; the results page polls a fragment (htmx) while answers land.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from integrations.validators import mask_identity
from integrations.work import WorkState
from quotes import selectors
from quotes.forms import PRODUCTS, QUOTE_FORMS, IssuanceConfirmForm
from quotes.models import InsurerQuote, Issuance, QuoteRequest
from quotes.services.issuance import IssuanceRefused, issuance_start
from quotes.services.quote_requests import (
    InputInvalid,
    NoInsurerAvailable,
    quote_request_close_overdue,
    quote_request_create,
)

PAGE_SIZE = 25
# Issuance states after which nothing changes without a human: the status fragment stops polling.
ISSUANCE_FINAL_STATES = (WorkState.SUBMITTED, WorkState.FAILED, WorkState.DEFERRED)


def fragment_login_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Like `login_required`, but a logged-out htmx poll sends the whole page to the login form
    instead of swapping the login page into a table cell."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        if getattr(request, "htmx", False):
            page = request.htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(redirect_to_login(page).url)
        return redirect_to_login(request.get_full_path())

    return wrapper


def _page(request: HttpRequest, items: Any) -> Page:
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


def _search_remember(request: HttpRequest, term: str) -> str:
    now = time.time()
    kept = {token: entry for token, entry in request.session.get(SEARCH_SESSION_KEY, {}).items() if entry[1] > now}
    token = secrets.token_urlsafe(9)
    kept[token] = [term, now + SEARCH_TTL_SECONDS]
    request.session[SEARCH_SESSION_KEY] = dict(sorted(kept.items(), key=lambda item: item[1][1])[-SEARCH_MAX_KEPT:])
    return token


def _search_recall(request: HttpRequest) -> DeskSearch:
    token = request.GET.get("arama", "")
    if not token:
        return DeskSearch()
    entry = request.session.get(SEARCH_SESSION_KEY, {}).get(token)
    if entry is None or entry[1] <= time.time():
        return DeskSearch(expired=True)
    return DeskSearch(term=entry[0], token=token)


def _search_redirect(request: HttpRequest, list_url_name: str) -> HttpResponse:
    term = request.POST.get("q", "").strip()[:SEARCH_MAX_LENGTH]
    url = reverse(list_url_name)
    if not term:
        return redirect(url)
    return redirect(f"{url}?{urlencode({'arama': _search_remember(request, term)})}")


# --- quote requests ---------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def quote_request_new(request: HttpRequest, product: str = "trafik") -> HttpResponse:
    """One form per product; a valid one becomes a request with one row per insurer."""
    form_class = QUOTE_FORMS.get(product)
    if form_class is None:
        raise Http404("Bilinmeyen ürün.")
    form = form_class(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            quote_request = quote_request_create(user=request.user, product=product, data=form.cleaned_data)
        except InputInvalid as error:
            form.add_errors(error.errors)
        except (NoInsurerAvailable, PermissionError) as error:
            form.add_error(None, str(error))
        else:
            return redirect("quote_request_detail", public_id=quote_request.public_id)
    return render(request, "quotes/quote_request_new.html", {"form": form, "product": product, "products": PRODUCTS})


def _quote_request_or_404(request: HttpRequest, public_id: UUID) -> QuoteRequest:
    try:
        return selectors.quote_request_get(user=request.user, public_id=public_id)
    except QuoteRequest.DoesNotExist:
        raise Http404("Teklif talebi bulunamadı.") from None


def _results_context(quote_request: QuoteRequest, user: Any) -> dict[str, Any]:
    # Rendering is what turns an insurer past the request's deadline into "Yanıt alınamadı".
    quote_request_close_overdue(request=quote_request)
    profile = getattr(user, "agent_profile", None)
    rows = selectors.insurer_quotes_for(request=quote_request)
    issuances = {issuance.insurer_quote_id: issuance for issuance in quote_request.issuances.all()}
    for row in rows:
        row.desk_issuance = issuances.get(row.pk)
    return {
        "quote_request": quote_request,
        "rows": rows,
        "all_final": all(row.is_final for row in rows),
        # The agent picks one insurer: once one issuance is live, the other quotes are not offered.
        "live_issuance": next((i for i in issuances.values() if i.state != WorkState.FAILED), None),
        # Only the request's own agency issues it; a cross-agency reader is offered no button.
        "may_issue": profile is not None and profile.agency_id == quote_request.agency_id,
        "now": timezone.now(),
    }


@login_required
@require_GET
def quote_request_detail(request: HttpRequest, public_id: UUID) -> HttpResponse:
    quote_request = _quote_request_or_404(request, public_id)
    return render(request, "quotes/quote_request_detail.html", _results_context(quote_request, request.user))


@fragment_login_required
@require_GET
def quote_request_results(request: HttpRequest, public_id: UUID) -> HttpResponse:
    """The results table alone, polled every second until every insurer's row is final."""
    quote_request = _quote_request_or_404(request, public_id)
    return render(request, "quotes/_results.html", _results_context(quote_request, request.user))


@login_required
@require_GET
def quote_request_list(request: HttpRequest) -> HttpResponse:
    search = _search_recall(request)
    requests = selectors.quote_request_list(user=request.user, search=search.term)
    return render(request, "quotes/quote_request_list.html", {"page": _page(request, requests), "search": search})


@login_required
@require_POST
def quote_request_search(request: HttpRequest) -> HttpResponse:
    return _search_redirect(request, "quote_request_list")


# --- issuance ---------------------------------------------------------------------------------


def _insurer_quote_or_404(request: HttpRequest, pk: int) -> InsurerQuote:
    try:
        return selectors.insurer_quote_get(user=request.user, pk=pk)
    except InsurerQuote.DoesNotExist:
        raise Http404("Teklif bulunamadı.") from None


@login_required
@require_http_methods(["GET", "POST"])
def issuance_confirm(request: HttpRequest, pk: int) -> HttpResponse:
    """The confirm step. A second POST (double click, other tab, retry) gets the same issuance
    back from the service, so it lands on the same status page and never issues twice."""
    quote = _insurer_quote_or_404(request, pk)
    refusal = ""
    if request.method == "POST":
        form = IssuanceConfirmForm(request.POST)
        if form.is_valid():
            try:
                issuance = issuance_start(
                    user=request.user, insurer_quote_id=quote.pk, payment_token=form.cleaned_data["payment_token"]
                )
            except IssuanceRefused as error:
                refusal = str(error)
            except InsurerQuote.DoesNotExist:
                raise Http404("Teklif bulunamadı.") from None
            else:
                return redirect("issuance_detail", pk=issuance.pk)
    else:
        existing = Issuance.objects.filter(insurer_quote=quote).first()
        if existing is not None:
            return redirect("issuance_detail", pk=existing.pk)
        form = IssuanceConfirmForm()
    context = {
        "quote": quote,
        "form": form,
        "refusal": refusal,
        "expired": quote.valid_until is not None and quote.valid_until <= timezone.now(),
    }
    return render(request, "quotes/issuance_confirm.html", context, status=409 if refusal else 200)


def _issuance_or_404(request: HttpRequest, pk: int) -> Issuance:
    try:
        return selectors.issuance_get(user=request.user, pk=pk)
    except Issuance.DoesNotExist:
        raise Http404("Poliçeleştirme bulunamadı.") from None


def _issuance_context(issuance: Issuance) -> dict[str, Any]:
    return {"issuance": issuance, "is_final": issuance.state in ISSUANCE_FINAL_STATES}


@login_required
@require_GET
def issuance_detail(request: HttpRequest, pk: int) -> HttpResponse:
    issuance = _issuance_or_404(request, pk)
    return render(request, "quotes/issuance_detail.html", _issuance_context(issuance))


@fragment_login_required
@require_GET
def issuance_status(request: HttpRequest, pk: int) -> HttpResponse:
    """The issuance state alone, polled every second until the policy number (or a reason) is in."""
    issuance = _issuance_or_404(request, pk)
    return render(request, "quotes/_issuance_status.html", _issuance_context(issuance))


# --- policies ---------------------------------------------------------------------------------


@login_required
@require_GET
def policy_list(request: HttpRequest) -> HttpResponse:
    search = _search_recall(request)
    policies = selectors.policy_list(user=request.user, search=search.term)
    return render(request, "quotes/policy_list.html", {"page": _page(request, policies), "search": search})


@login_required
@require_POST
def policy_search(request: HttpRequest) -> HttpResponse:
    return _search_redirect(request, "policy_list")
