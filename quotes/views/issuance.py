"""Issuing a quote (poliçeleştirme) on the desk: the confirm step and the status as it moves."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_GET, require_http_methods

from insurehub.desk_auth import fragment_login_required
from insurehub.desk_errors import desk_errors
from insurehub.request_types import AuthenticatedHttpRequest
from quotes import live, selectors
from quotes.forms import IssuanceConfirmForm
from quotes.models import Issuance
from quotes.services.issuance import issuance_start, request_held_message
from quotes.views.common import ISSUANCE_FINAL_STATES, live_stream_response

# --- issuance ---------------------------------------------------------------------------------


@login_required
# A card token in an error report (the 500 mail, a debug page) is a card: starred out there.
@sensitive_post_parameters("payment_token")
@sensitive_variables("form")
@require_http_methods(["GET", "POST"])
@desk_errors
def issuance_confirm(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The confirm step. A second POST (double click, other tab, retry) gets the same issuance
    back from the service, so it lands on the same status page and never issues twice."""
    quote = selectors.insurer_quote_get(user=request.user, pk=pk)
    plans = (quote.details or {}).get("installments") or []
    if request.method == "POST":
        form = IssuanceConfirmForm(request.POST, plans=plans)
        outcome = desk_errors(form)
        if form.is_valid():
            with outcome:
                issuance = issuance_start(
                    user=request.user,
                    insurer_quote_id=quote.pk,
                    payment_token=form.cleaned_data["payment_token"],
                    installments=form.cleaned_data["installments"],
                    overlap=form.cleaned_data["overlap"],
                )
            if outcome.ok:
                return redirect("issuance_detail", pk=issuance.pk)
    else:
        existing = Issuance.objects.filter(insurer_quote=quote).first()
        if existing is not None:
            return redirect("issuance_detail", pk=existing.pk)
        form = IssuanceConfirmForm(plans=plans)
        outcome = desk_errors(form)
    overlapping = selectors.policy_overlapping_for(quote_request=quote.request)
    # Another insurer of this request was picked: said before the agent types a card, not after.
    held = request_held_message(quote_request_id=quote.request_id)
    context = {
        "quote": quote,
        "form": form,
        "refusal": outcome.message or held,
        "held": bool(held),
        "expired": quote.valid_until is not None and quote.valid_until <= timezone.now(),
        "overlapping": overlapping,
        "overlap_blocks": overlapping is not None and quote.request.product == "trafik",
    }
    return render(request, "quotes/issuance_confirm.html", context, status=outcome.status)


def _issuance_context(issuance: Issuance) -> dict[str, Any]:
    return {
        "issuance": issuance,
        "is_final": issuance.state in ISSUANCE_FINAL_STATES,
        # The page's version travels to its stream, which then sends only what the page lacks.
        "status_version": live.issuance_version(issuance),
    }


@login_required
@require_GET
@desk_errors
def issuance_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    issuance = selectors.issuance_get(user=request.user, pk=pk)
    return render(request, "quotes/issuance_detail.html", _issuance_context(issuance))


@fragment_login_required
@require_GET
@desk_errors
def issuance_status(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The issuance state alone: the stream's fallback, polled every second while the stream is
    not open, until the policy number (or a reason) is in."""
    issuance = selectors.issuance_get(user=request.user, pk=pk)
    return render(request, "quotes/_issuance_status.html", _issuance_context(issuance))


@fragment_login_required
@require_GET
@desk_errors
def issuance_stream(request: AuthenticatedHttpRequest, pk: int) -> HttpResponseBase:
    """The issuance status pushed as server-sent events whenever it changes (quotes/live.py).

    Checked before the first byte like the fragment (another agency's issuance is a 404) and
    under the same open-stream caps as the results' stream."""
    issuance = selectors.issuance_get(user=request.user, pk=pk)
    user = request.user

    def rendered(seen_at: float | None) -> live.Rendered:
        context = _issuance_context(selectors.issuance_get(user=user, pk=issuance.pk))
        html = render_to_string("quotes/_issuance_status.html", context)
        return live.Rendered(html=html, version=context["status_version"], all_final=context["is_final"])

    seen = request.headers.get("Last-Event-ID") or request.GET.get("v", "")
    events = live.status_events(topic=live.ISSUANCE_TOPIC, key=issuance.pk, render=rendered, seen_version=seen[:32])
    return live_stream_response(request, events)
