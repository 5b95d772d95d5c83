"""The desk: the agency admin's commissions page (agreements and sub-agency shares), the
production report, and the commission section of the policy page."""

from __future__ import annotations

from datetime import date

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods

from agencies.scope import is_agency_manager
from commissions import charts, selectors
from commissions import production_report as report_service
from commissions.forms import CommissionAgreementForm, ProductionReportFilterForm, SubAgencyShareForm
from commissions.services import OWNER_ONLY_TR, commission_agreement_create, sub_agency_share_create
from insurehub.desk_errors import desk_errors
from insurehub.request_types import AuthenticatedHttpRequest
from policies import periods
from policies.models import Policy

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def policy_commission_section(request: HttpRequest, policy: Policy) -> str:
    """The policy page's commission card (registered with `quotes.policy_page`)."""
    summary = selectors.policy_commission_summary(policy=policy)
    own_part_only = selectors.is_sub_agency_user(request.user)
    return render_to_string(
        "commissions/_policy_commission.html", {"summary": summary, "own_part_only": own_part_only}, request=request
    )


@login_required
@require_http_methods(["GET", "POST"])
@desk_errors
def agreement_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Komisyonlar: the agency's agreements, the one in force marked, and a form for a new one (a
    new rate is a new agreement from its day; the old one stays as history); below, each
    sub-agency's share of the commission, kept the same way."""
    profile = getattr(request.user, "agent_profile", None)
    if profile is None or not is_agency_manager(request.user):
        raise PermissionDenied(OWNER_ONLY_TR)
    posted = request.POST if request.method == "POST" else None
    which = request.POST.get("form", "agreement") if posted is not None else ""
    form = CommissionAgreementForm(posted if which == "agreement" else None, agency_id=profile.agency_id)
    share_form = SubAgencyShareForm(posted if which == "share" else None, agency_id=profile.agency_id)
    if which == "agreement" and form.is_valid():
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
    if which == "share" and share_form.is_valid():
        data = share_form.cleaned_data
        with desk_errors(share_form) as outcome:
            share = sub_agency_share_create(
                user=request.user,
                sub_agency_id=data["sub_agency"],
                rate=data["rate"],
                effective_from=data["effective_from"],
            )
        if outcome.ok:
            messages.success(request, f"{share.sub_agency.name} payı kaydedildi.")
            return redirect("commission_agreements")
    context = {
        "form": form,
        "share_form": share_form,
        "agreements": selectors.commission_agreement_list(user=request.user),
        "shares": selectors.sub_agency_share_list(user=request.user),
        "has_sub_agencies": selectors.sub_agencies_of(agency_id=profile.agency_id).exists(),
        "today": periods.today(),
    }
    status = 400 if form.errors or share_form.errors else 200
    return render(request, "commissions/agreement_list.html", context, status=status)


def _report_for(
    request: AuthenticatedHttpRequest,
) -> tuple[ProductionReportFilterForm, report_service.ProductionReport]:
    """The report the query string asks for: the reader's agency checked first (403/404), each
    bad filter shown on its field and left out."""
    agency = report_service.report_agency_for(user=request.user, agency_code=request.GET.get("acente", ""))
    agencies = [(a.code, a.name) for a in report_service.report_agencies_for(user=request.user)]
    # The range shown in the form is the one reported: this month unless the query names one.
    data = request.GET.copy()
    if not data.get("baslangic") and not data.get("bitis"):
        first, last = report_service.month_range(periods.today())
        data["baslangic"], data["bitis"] = first.isoformat(), last.isoformat()
    form = ProductionReportFilterForm(
        data,
        agency_id=agency.pk,
        sellers=report_service.report_sellers(agency=agency),
        agencies=agencies,
    )
    values = form.values()
    with desk_errors(form) as outcome:
        report_filter = report_service.report_filter_make(agency=agency, **values)
    if not outcome.ok:  # a reversed range: the month of the start day, as if no end were given
        report_filter = report_service.report_filter_make(agency=agency, date_from=values["date_from"])
    return form, report_service.production_report(report_filter=report_filter)


@login_required
@require_GET
@desk_errors
def production_report(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Üretim raporu: the agency's month (or any range) by insurer, product, seller and
    sub-agency, with two charts and the same numbers as an Excel file (`?format=xlsx`)."""
    form, report = _report_for(request)
    if request.GET.get("format") == "xlsx":
        if form.errors:
            return HttpResponseBadRequest(
                "Geçersiz filtre; rapor sayfasında düzeltip yeniden indirin.", content_type="text/plain; charset=utf-8"
            )
        response = HttpResponse(report_service.production_report_xlsx(report), content_type=XLSX)
        response["Content-Disposition"] = f'attachment; filename="{report_service.production_report_filename(report)}"'
        response["Cache-Control"] = "private, no-store"
        return response
    f = report.filter
    query = {
        "acente": f.agency.code,
        "baslangic": f.date_from.isoformat(),
        "bitis": f.date_to.isoformat(),
        "sirket": f.insurer,
        "urun": f.product,
        "satan": f.sold_by_id or "",
        "tali": f.sub_agency,
    }
    context = {
        "form": form,
        "report": report,
        "agency": f.agency,
        "export_query": urlencode({**{k: v for k, v in query.items() if v}, "format": "xlsx"}),
        "insurer_chart": charts.horizontal_bars_svg(
            title="Şirkete göre brüt prim",
            items=[(group.label, group.figures.premium) for group in report.by_insurer],
        ),
        "month_chart": charts.columns_svg(
            title="Aya göre brüt prim",
            items=[
                (report_service.month_short_label(date.fromisoformat(group.key)), group.figures.premium)
                for group in report.by_month
            ],
        ),
    }
    return render(request, "commissions/production_report.html", context, status=400 if form.errors else 200)
