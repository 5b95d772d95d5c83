"""Quote requests on the desk: the form, the results as they arrive, the list."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from integrations.work import WorkState
from quotes import selectors
from quotes.forms import PRODUCTS, QUOTE_FORMS
from quotes.models import QuoteRequest
from quotes.services.quote_requests import (
    InputInvalid,
    NoInsurerAvailable,
    quote_request_close_overdue,
    quote_request_create,
)
from quotes.views.common import fragment_login_required, page_of, search_recall, search_redirect

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
    search = search_recall(request)
    requests = selectors.quote_request_list(user=request.user, search=search.term)
    return render(request, "quotes/quote_request_list.html", {"page": page_of(request, requests), "search": search})


@login_required
@require_POST
def quote_request_search(request: HttpRequest) -> HttpResponse:
    return search_redirect(request, "quote_request_list")
