"""Cancelling a policy on the desk: the form with the refund the contract's rule gives, then the
status as the insurer answers (with its own refund)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from insurehub.desk_auth import fragment_login_required
from insurehub.desk_errors import desk_errors
from insurehub.request_types import AuthenticatedHttpRequest
from policies import periods, selectors
from policies.forms import CancellationForm, PortfolioUploadForm
from policies.models import Cancellation
from policies.selectors import policy_get
from policies.services.cancellations import cancellation_input_check, cancellation_refund_estimate, cancellation_start
from policies.services.portfolio_upload import (
    MAX_UPLOAD_BYTES,
    PreviewChanged,
    portfolio_admin_agency,
    portfolio_import,
    portfolio_preview,
)
from work.item import WorkState

FINAL_STATES = (WorkState.SUBMITTED, WorkState.FAILED, WorkState.DEFERRED)


@login_required
@require_http_methods(["GET", "POST"])
@desk_errors
def policy_cancel(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The form: "Hesapla" shows the refund for the reason and date chosen; "İptal et" sends it.
    A second POST (double click, other tab) lands on the same cancellation."""
    policy = policy_get(user=request.user, pk=pk)
    live = Cancellation.objects.filter(policy=policy).exclude(state=WorkState.FAILED).first()
    if live is not None:
        return redirect("cancellation_detail", pk=live.pk)
    estimate = None
    form = CancellationForm(request.POST or None, initial={"effective_on": periods.today().isoformat()})
    outcome = desk_errors(form)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if request.POST.get("action") == "estimate":
            with outcome:
                reason, when = cancellation_input_check(
                    policy=policy, reason=data["reason"], effective_on=data["effective_on"]
                )
                estimate = cancellation_refund_estimate(policy=policy, reason=reason, effective_on=when)
        else:
            with outcome:
                cancellation = cancellation_start(
                    user=request.user, policy_id=policy.pk, reason=data["reason"], effective_on=data["effective_on"]
                )
            if outcome.ok:
                return redirect("cancellation_detail", pk=cancellation.pk)
    context = {"policy": policy, "form": form, "estimate": estimate, "refusal": outcome.message}
    return render(request, "policies/cancel_form.html", context, status=outcome.status)


def _context(cancellation: Cancellation) -> dict[str, Any]:
    return {"cancellation": cancellation, "is_final": cancellation.state in FINAL_STATES}


@login_required
@require_GET
@desk_errors
def cancellation_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    cancellation = selectors.cancellation_get(user=request.user, pk=pk)
    return render(request, "policies/cancellation_detail.html", _context(cancellation))


@fragment_login_required
@require_GET
@desk_errors
def cancellation_status(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The state alone, polled until the insurer's refund (or a reason) is in."""
    cancellation = selectors.cancellation_get(user=request.user, pk=pk)
    return render(request, "policies/_cancellation_status.html", _context(cancellation))


@login_required
@require_GET
@desk_errors
def duplicate_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Mükerrer poliçeler: what the nightly reconciliation found, each with its one-click cancel."""
    findings = selectors.duplicate_findings(user=request.user)
    return render(request, "policies/duplicate_list.html", {"findings": findings})


@login_required
@require_http_methods(["GET", "POST"])
@desk_errors
def duplicate_cancel(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """ "Mükerrer poliçeyi iptal et": a confirmation that names both policies, then the duplicate
    cancelled with reason `duplicate` (from its start, the whole premium back)."""
    finding = selectors.duplicate_finding_get(user=request.user, pk=pk)
    policy = finding.policy
    outcome = desk_errors()
    if request.method == "POST":
        with outcome:
            cancellation = cancellation_start(
                user=request.user, policy_id=policy.pk, reason="duplicate", effective_on=policy.starts_on
            )
        if outcome.ok:
            return redirect("cancellation_detail", pk=cancellation.pk)
    # Without a start the platform knows no period, so no estimate (as `cancellation_refund_estimate` says).
    estimate = (
        cancellation_refund_estimate(policy=policy, reason="duplicate", effective_on=policy.starts_on)
        if policy.starts_on is not None
        else None
    )
    context = {"finding": finding, "estimate": estimate, "refusal": outcome.message}
    return render(request, "policies/duplicate_cancel.html", context, status=outcome.status)


@login_required
@require_http_methods(["GET", "POST"])
@desk_errors
def portfolio_upload(request: AuthenticatedHttpRequest) -> HttpResponse:
    """ "Portföy aktar" (agency admins): a file, the preview of every row, then "içe aktar"."""
    portfolio_admin_agency(request.user)  # the page itself is refused as its services are
    form = PortfolioUploadForm(request.POST or None, request.FILES or None)
    context: dict[str, Any] = {"form": form}
    if request.method == "POST" and "token" in request.POST:
        context["form"] = PortfolioUploadForm()
        with desk_errors() as outcome:
            try:
                context["done"] = portfolio_import(user=request.user, token=request.POST["token"])
            except PreviewChanged as changed:
                context["preview"] = changed.preview  # nothing was written: the new preview, to confirm again
                raise
        context["error"] = "" if outcome.ok else outcome.message
    elif request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        with desk_errors(form):
            context["preview"] = portfolio_preview(
                user=request.user, file_name=upload.name, raw=upload.read(MAX_UPLOAD_BYTES + 1)
            )
    return render(request, "policies/portfolio_upload.html", context)
