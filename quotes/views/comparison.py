"""The comparison of one request's quotes: a page with print styles, and a PDF to send."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from agencies.scope import may_act_on
from insurehub.desk_errors import desk_errors
from insurehub.request_types import AuthenticatedHttpRequest
from quotes import selectors
from quotes.services.comparison import comparison_build, installment_total
from quotes.services.comparison_pdf import comparison_pdf


@login_required
@require_GET
@desk_errors
def comparison_page(request: AuthenticatedHttpRequest, public_id: UUID) -> HttpResponse:
    quote_request = selectors.quote_request_get(user=request.user, public_id=public_id)
    comparison = comparison_build(request=quote_request)
    installments = [
        (count, [installment_total(column, count) for column in comparison.columns])
        for count in comparison.installment_counts
        if count > 1
    ]
    context = {
        "comparison": comparison,
        "installments": installments,
        # Once an insurer is picked (issued, or on its way) no other quote is offered: the picked
        # one's column links its policy or its issuance instead of a button.
        "policy": selectors.policy_issued_for(quote_request_id=quote_request.pk),
        "live_issuance": selectors.issuance_live_for(quote_request_id=quote_request.pk),
        # Only the request's own scope issues it; a cross-agency reader is offered no button.
        "may_issue": may_act_on(
            request.user, agency_id=quote_request.agency_id, sub_agency_id=quote_request.sub_agency_id
        ),
    }
    return render(request, "quotes/comparison.html", context)


@login_required
@require_GET
@desk_errors
def comparison_download(request: AuthenticatedHttpRequest, public_id: UUID) -> HttpResponse:
    quote_request = selectors.quote_request_get(user=request.user, public_id=public_id)
    comparison = comparison_build(request=quote_request)
    if not comparison.columns:
        raise Http404("Karşılaştırılacak teklif yok.")
    pdf = comparison_pdf(comparison, agency_name=quote_request.agency.name)
    response = HttpResponse(pdf, content_type="application/pdf")
    name = f"teklif-karsilastirma-{quote_request.product}-{quote_request.created_at:%Y%m%d-%H%M}.pdf"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
