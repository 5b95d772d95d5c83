"""The agency's customers on the desk: list and search, a page per customer, add and edit.

Reads go through the agency-scoped selectors, so another agency's customer is "not found"
(404) like an unknown one. Searching reuses the desk's POST-and-token design
(`insurehub.desk_lists`): a TCKN typed into the search box never lands in a URL.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agencies.scope import may_act_on
from customers import selectors
from customers.customer_page import customer_history_sections, customer_page_sections
from customers.forms import CustomerForm, customer_pick_label
from customers.services import customer_create, customer_may_write, customer_update
from insurehub.desk_errors import desk_errors
from insurehub.desk_lists import page_of, search_recall, search_redirect
from insurehub.masking import mask_identity
from insurehub.request_types import AuthenticatedHttpRequest

# What the customer page lists of a customer's history; older ones stay in the main lists.


@login_required
@require_GET
def customer_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    search = search_recall(request)
    customers = selectors.customer_list(user=request.user, search=search.term)
    context = {"page": page_of(request, customers), "search": search, "may_write": customer_may_write(request.user)}
    return render(request, "customers/customer_list.html", context)


@login_required
@require_POST
def customer_search(request: HttpRequest) -> HttpResponse:
    return search_redirect(request, "customer_list")


def _json_login_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A logged-out fetch is answered 401 with a sentence (a script cannot show a login page)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return JsonResponse({"detail": "Oturumunuz kapanmış; yeniden giriş yapın."}, status=401)
        return view(request, *args, **kwargs)

    return wrapper


# Shorter than this a name part finds too many to list; digits (an identity number's start) too.
PICK_MIN_LENGTH = 2
PICK_MAX_LENGTH = 64


@_json_login_required
@require_POST
def customer_pick(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The quote form's customer search box (static/insurehub/customer-search.js): `q`, part of a
    name or the start of a TCKN/VKN, in the POST body (an identity number never lands in a URL);
    the agent's own agency's customers matching it, identity masked, as on the old select."""
    term = " ".join(str(request.POST.get("q", ""))[:PICK_MAX_LENGTH].split())
    found = selectors.customer_pick_search(user=request.user, term=term) if len(term) >= PICK_MIN_LENGTH else []
    shown = found[: selectors.CUSTOMER_PICK_LIMIT]
    results = [
        {
            "id": customer.pk,
            "name": customer.name,
            "identity": mask_identity(customer.identity_no),
            "label": customer_pick_label(customer),
        }
        for customer in shown
    ]
    response = JsonResponse({"results": results, "more": len(found) > len(shown)})
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def customer_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    if not customer_may_write(request.user):
        raise PermissionDenied
    form = CustomerForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        with desk_errors(form) as outcome:
            customer = customer_create(user=request.user, data=form.cleaned_data)
        if outcome.ok:
            messages.success(request, f"{customer.name} kaydedildi.")
            return redirect("customer_detail", pk=customer.pk)
    return render(request, "customers/customer_form.html", {"form": form}, status=400 if form.errors else 200)


@login_required
@require_GET
@desk_errors
def customer_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    customer = selectors.customer_get(user=request.user, pk=pk)
    context = {
        "customer": customer,
        # Only the customer's own scope (agency, or sub-agency) edits them or asks quotes for them.
        "may_write": customer_may_write(request.user)
        and may_act_on(request.user, agency_id=customer.agency_id, sub_agency_id=customer.sub_agency_id),
        # What other apps add (the customer's consent per channel, the messages sent to them).
        "customer_sections": customer_page_sections.render(request, customer),
        "customer_history": customer_history_sections.render(request, customer),
    }
    return render(request, "customers/customer_detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
@desk_errors
def customer_edit(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    customer = selectors.customer_get_for_edit(user=request.user, pk=pk)
    if not customer_may_write(request.user):
        raise PermissionDenied
    form = CustomerForm(request.POST if request.method == "POST" else None, customer=customer)
    if request.method == "POST" and form.is_valid():
        with desk_errors(form) as outcome:
            customer_update(user=request.user, customer=customer, data=form.cleaned_data)
        if outcome.ok:
            messages.success(request, f"{customer.name} güncellendi.")
            return redirect("customer_detail", pk=customer.pk)
    context = {"form": form, "customer": customer}
    return render(request, "customers/customer_form.html", context, status=400 if form.errors else 200)
