"""The desk: the agency admin's agreements page, and the commission section of the policy page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_http_methods

from commissions import selectors
from commissions.forms import CommissionAgreementForm
from commissions.services import OWNER_ONLY_TR, commission_agreement_create
from insurehub.desk_errors import desk_errors
from quotes import selectors as quote_selectors
from quotes.models import Policy


def policy_commission_section(request: HttpRequest, policy: Policy) -> str:
    """The policy page's commission card (registered with `quotes.policy_page`)."""
    summary = selectors.policy_commission_summary(policy=policy)
    return render_to_string("commissions/_policy_commission.html", {"summary": summary}, request=request)


@login_required
@require_http_methods(["GET", "POST"])
@desk_errors
def agreement_list(request: HttpRequest) -> HttpResponse:
    """Komisyon anlaşmaları: the agency's agreements, the one in force marked, and a form for a
    new one (a new rate is a new agreement from its day; the old one stays as history)."""
    profile = getattr(request.user, "agent_profile", None)
    if profile is None or not profile.is_agency_admin:
        raise PermissionDenied(OWNER_ONLY_TR)
    form = CommissionAgreementForm(request.POST if request.method == "POST" else None, agency_id=profile.agency_id)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        with desk_errors(form) as outcome:
            agreement = commission_agreement_create(
                user=request.user,
                insurer_code=data["insurer"],
                product=data["product"],
                rate=data["rate"],
                base=data["base"],
                effective_from=data["effective_from"],
            )
        if outcome.ok:
            messages.success(request, f"{agreement.insurer.name} anlaşması kaydedildi.")
            return redirect("commission_agreements")
    context = {
        "form": form,
        "agreements": selectors.commission_agreement_list(user=request.user),
        "today": quote_selectors.today(),
    }
    return render(request, "commissions/agreement_list.html", context, status=400 if form.errors else 200)
