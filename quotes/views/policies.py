"""The agency's policies on the desk."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from quotes import selectors
from quotes.views.common import page_of, search_recall, search_redirect

# --- policies ---------------------------------------------------------------------------------


@login_required
@require_GET
def policy_list(request: HttpRequest) -> HttpResponse:
    search = search_recall(request)
    policies = selectors.policy_list(user=request.user, search=search.term)
    return render(request, "quotes/policy_list.html", {"page": page_of(request, policies), "search": search})


@login_required
@require_POST
def policy_search(request: HttpRequest) -> HttpResponse:
    return search_redirect(request, "policy_list")
