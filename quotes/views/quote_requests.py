"""Quote requests on the desk: the form, the results as they arrive, the list."""

from __future__ import annotations

import logging
import time
from typing import Any
from uuid import UUID

from django import forms
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agencies.scope import may_act_on
from customers.models import Customer
from customers.selectors import customer_choices
from customers.services import customer_create
from insurehub.desk_auth import fragment_login_required
from insurehub.desk_errors import desk_errors
from insurehub.desk_lists import page_of, search_recall, search_redirect
from insurehub.request_types import AuthenticatedHttpRequest
from quotes import live, selectors
from quotes.forms import PRODUCTS, QUOTE_FORMS, DaskForm, customer_initial, rerun_initial
from quotes.models import QuoteRequest
from quotes.quote_request_page import quote_request_page_sections
from quotes.services.dask_address import dask_address_check
from quotes.services.quote_requests import quote_request_close_overdue, quote_request_create
from quotes.views.common import live_stream_response
from quotes.views.policies import list_query
from work.item import WorkState

logger = logging.getLogger(__name__)

# --- quote requests ---------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def quote_request_new(request: AuthenticatedHttpRequest, product: str = "trafik") -> HttpResponse:
    """One form per product; a valid one becomes a request with one row per insurer."""
    form_class = QUOTE_FORMS.get(product)
    if form_class is None:
        raise Http404("Bilinmeyen ürün.")
    customers = customer_choices(user=request.user)
    if request.method == "POST":
        form = form_class(request.POST, customers=customers)
    else:
        form = form_class(initial=_preselected_customer(request, customers), customers=customers)
    address_check = None
    if request.method == "POST" and form.is_valid() and isinstance(form, DaskForm) and not form.address_confirmed:
        # DASK's first step: the code's address, shown for the agent to confirm before pricing.
        with desk_errors(form) as outcome:
            address_check = dask_address_check(user=request.user, uavt_code=form.cleaned_data.get("uavt_code"))
        if outcome.ok and address_check is not None:
            form.confirm_address_of(address_check.uavt_code)
    elif request.method == "POST" and form.is_valid():
        # A new customer typed into the form is saved with the request, or not at all.
        with desk_errors(form) as outcome, transaction.atomic():
            customer = form.customer
            if form.wants_new_customer:
                customer = customer_create(user=request.user, data=form.new_customer_data())
            quote_request = quote_request_create(
                user=request.user, product=product, data=form.cleaned_data, customer=customer
            )
        if outcome.ok:
            return redirect("quote_request_detail", public_id=quote_request.public_id)
    context = {"form": form, "product": product, "products": PRODUCTS, "address_check": address_check}
    return render(request, "quotes/quote_request_new.html", context)


@login_required
@require_GET
@desk_errors
def quote_request_rerun(request: AuthenticatedHttpRequest, public_id: UUID) -> HttpResponse:
    """ "Teklifi yeniden çalış": the request's form filled in with what it asked (risk, customer,
    kasko options) for the agent to change; sent, it is a new request at every insurer. Only the
    request's own agency asks again (its accounts are called): another's is a 404."""
    quote_request = selectors.quote_request_get(user=request.user, public_id=public_id)
    profile = getattr(request.user, "agent_profile", None)
    if profile is None or profile.agency_id != quote_request.agency_id:
        raise Http404("Teklif talebi bulunamadı.")
    product = quote_request.product
    customers = customer_choices(user=request.user)
    form = QUOTE_FORMS[product](initial=rerun_initial(quote_request), customers=customers)
    context = {"form": form, "product": product, "products": PRODUCTS, "address_check": None, "rerun_of": quote_request}
    return render(request, "quotes/quote_request_new.html", context)


def _preselected_customer(request: HttpRequest, customers: QuerySet[Customer]) -> dict[str, str]:
    """`?musteri=<pk>` (the customer page's "teklif al" links) picks the customer and fills in
    their number; a pk that is not one of the agency's customers is ignored."""
    pk = request.GET.get("musteri", "")
    customer = customers.filter(pk=pk).first() if pk.isascii() and pk.isdigit() and len(pk) < 19 else None
    return customer_initial(customer) if customer else {}


def _results_context(quote_request: QuoteRequest, user: Any) -> dict[str, Any]:
    # Rendering is what turns an insurer past the request's deadline into "Yanıt alınamadı".
    quote_request_close_overdue(request=quote_request)
    rows = selectors.insurer_quotes_for(request=quote_request)
    issuances = {issuance.insurer_quote_id: issuance for issuance in quote_request.issuances.all()}
    for row in rows:
        row.desk_issuance = issuances.get(row.pk)
        # When the answer was stored (epoch ms): the page notes when each row first appears, so
        # tests and the bench read the store-to-screen time off the page.
        row.stored_at_ms = round(row.finished_at.timestamp() * 1000) if row.finished_at and row.is_final else None
    return {
        "quote_request": quote_request,
        "rows": rows,
        "results_version": live.results_version(live.row_version_fields(row) for row in rows),
        "all_final": all(row.is_final for row in rows),
        # The agent picks one insurer: once one issuance is live, the other quotes are not offered.
        "live_issuance": next((i for i in issuances.values() if i.state != WorkState.FAILED), None),
        # Only the request's own scope issues it; a cross-agency reader is offered no button.
        "may_issue": may_act_on(user, agency_id=quote_request.agency_id, sub_agency_id=quote_request.sub_agency_id),
        "now": timezone.now(),
    }


@login_required
@require_GET
@desk_errors
def quote_request_detail(request: AuthenticatedHttpRequest, public_id: UUID) -> HttpResponse:
    quote_request = selectors.quote_request_get(user=request.user, public_id=public_id)
    context = _results_context(quote_request, request.user)
    # A warning, not a block: the agent may be quoting a transfer, or the other policy is ending.
    context["policy_in_force"] = selectors.policy_overlapping_for(quote_request=quote_request)
    # What other apps add (sending the offer to the customer, and what was sent).
    context["request_sections"] = quote_request_page_sections.render(request, quote_request)
    return render(request, "quotes/quote_request_detail.html", context)


@fragment_login_required
@require_GET
@desk_errors
def quote_request_results(request: AuthenticatedHttpRequest, public_id: UUID) -> HttpResponse:
    """The results table alone: the stream's fallback, polled every second while the stream is
    not open, until every insurer's row is final."""
    quote_request = selectors.quote_request_get(user=request.user, public_id=public_id)
    return render(request, "quotes/_results.html", _results_context(quote_request, request.user))


@fragment_login_required
@require_GET
@desk_errors
def quote_request_stream(request: AuthenticatedHttpRequest, public_id: UUID) -> HttpResponseBase:
    """The results table pushed as server-sent events whenever a row changes (quotes/live.py).

    Checked before the first byte exactly like the fragment: another agency's request is a 404.
    Past the open-stream caps (per session, per user) a 429, and a 503 when the cache that
    counts them is down: the page's poll then serves the agent (quotes/live.py).
    """
    quote_request = selectors.quote_request_get(user=request.user, public_id=public_id)
    user = request.user

    def rendered(seen_at: float | None) -> live.Rendered:
        context = _results_context(quote_request, user)
        # When the watcher saw the change and when the server sent it (epoch ms): they split a
        # row's store-to-screen time into its parts (the bench reads them off the page).
        context["seen_at_ms"] = round(seen_at * 1000) if seen_at else None
        context["pushed_at_ms"] = round(time.time() * 1000)
        html = render_to_string("quotes/_results.html", context)
        return live.Rendered(html=html, version=context["results_version"], all_final=context["all_final"])

    seen = request.headers.get("Last-Event-ID") or request.GET.get("v", "")
    events = live.results_events(
        request_id=quote_request.pk,
        deadline_at_epoch=quote_request.deadline_at.timestamp(),
        render=rendered,
        seen_version=seen[:32],
    )
    return live_stream_response(request, events)


@login_required
@require_GET
def quote_request_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    search = search_recall(request)
    form = QuoteRequestFilterForm(request.GET)
    requests = selectors.quote_request_list(user=request.user, search=search.term, filters=form.request_filter())
    context = {
        "page": page_of(request, requests),
        "search": search,
        "filter_form": form,
        "list_query": list_query(request, form, search),
        "filtered": any(request.GET.get(name) for name in form.fields),
        "outcome_labels": selectors.OUTCOME_LABELS,
    }
    return render(request, "quotes/quote_request_list.html", context)


class QuoteRequestFilterForm(forms.Form):
    """The request list's filters, read from the query string: nothing in them names a person."""

    urun = forms.ChoiceField(label="Ürün", required=False, choices=[("", "Tümü"), *PRODUCTS])
    tarih_min = forms.DateField(label="Tarih (ilk)", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    tarih_max = forms.DateField(label="Tarih (son)", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    sonuc = forms.ChoiceField(label="Sonuç", required=False, choices=[("", "Tümü"), *selectors.OUTCOME_LABELS.items()])

    def request_filter(self) -> selectors.QuoteRequestFilter:
        """The valid fields as a filter; a bad one is shown as an error on the form and ignored."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return selectors.QuoteRequestFilter(
            product=data.get("urun", ""),
            created_from=data.get("tarih_min"),
            created_to=data.get("tarih_max"),
            outcome=data.get("sonuc", ""),
        )


@login_required
@require_POST
def quote_request_search(request: HttpRequest) -> HttpResponse:
    return search_redirect(request, "quote_request_list")
