"""The agency's policies on the desk: the list with its filters, one policy, the export."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from agencies.scope import may_act_on
from insurehub.desk_errors import desk_errors
from insurehub.desk_lists import DeskSearch, page_of, search_recall, search_redirect
from insurehub.request_types import AuthenticatedHttpRequest
from integrations.models import Insurer
from policies.models import Policy
from policies.selectors import policy_get
from quotes import selectors
from quotes.forms import PRODUCTS
from quotes.policy_page import policy_page_sections
from quotes.services.policies import export_filename, policy_export_csv, policy_export_xlsx

# --- filters ------------------------------------------------------------------------------------


class PolicyFilterForm(forms.Form):
    """The list's filters, read from the query string: nothing in them names a person."""

    urun = forms.ChoiceField(label="Ürün", required=False, choices=[("", "Tümü"), *PRODUCTS])
    sirket = forms.ChoiceField(label="Sigorta şirketi", required=False)
    durum = forms.ChoiceField(label="Durum", required=False, choices=[("", "Tümü"), *Policy.Status.choices])
    donem = forms.ChoiceField(label="Dönem", required=False, choices=[("", "Tümü"), *selectors.PERIOD_LABELS.items()])
    baslangic_min = forms.DateField(
        label="Başlangıç (en erken)", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    baslangic_max = forms.DateField(
        label="Başlangıç (en geç)", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        insurers = Insurer.objects.order_by("name").values_list("code", "name")
        sirket = self.fields["sirket"]
        assert isinstance(sirket, forms.ChoiceField)  # declared above
        sirket.choices = [("", "Tümü"), *insurers]

    def policy_filter(self) -> selectors.PolicyFilter:
        """The valid fields as a filter; a bad one is shown as an error on the form and ignored."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return selectors.PolicyFilter(
            product=data.get("urun", ""),
            insurer=data.get("sirket", ""),
            status=data.get("durum", ""),
            period=data.get("donem", ""),
            starts_from=data.get("baslangic_min"),
            starts_to=data.get("baslangic_max"),
        )


def list_query(request: HttpRequest, form: forms.Form, search: DeskSearch) -> str:
    """The filters as typed and the search token, for pager and export links (no page number)."""
    pairs = [(name, request.GET[name]) for name in form.fields if request.GET.get(name)]
    if search.token:
        pairs.append(("arama", search.token))
    return urlencode(pairs)


def _filtered_policies(request: AuthenticatedHttpRequest) -> tuple[PolicyFilterForm, DeskSearch, QuerySet[Policy]]:
    form = PolicyFilterForm(request.GET)
    search = search_recall(request)
    policies = selectors.policy_list(user=request.user, search=search.term, filters=form.policy_filter())
    return form, search, policies


# --- pages --------------------------------------------------------------------------------------


@login_required
@require_GET
def policy_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    form, search, policies = _filtered_policies(request)
    context = {
        # A cancelled policy shows the day its cancellation took effect.
        "page": page_of(request, policies.prefetch_related("cancellations")),
        "search": search,
        "filter_form": form,
        "list_query": list_query(request, form, search),
        "filtered": any(request.GET.get(name) for name in form.fields),
    }
    return render(request, "quotes/policy_list.html", context)


@login_required
@require_POST
def policy_search(request: HttpRequest) -> HttpResponse:
    return search_redirect(request, "policy_list")


@login_required
@require_GET
@desk_errors
def policy_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    policy = policy_get(user=request.user, pk=pk)
    source = policy.issuance.quote_request if policy.issuance is not None else None
    # Quoting again and cancelling call the agency's own insurer accounts: only the policy's own
    # scope (`agencies.scope`) is offered the buttons, never a cross-agency reader.
    may_act = may_act_on(request.user, agency_id=policy.agency_id, sub_agency_id=policy.sub_agency_id)
    context = {
        "policy": policy,
        "source_request": source,
        "may_renew": source is not None and may_act,
        "may_cancel": policy.status == "ACTIVE" and may_act,
        # What other apps show of the policy (its commission): quotes.policy_page.
        "policy_sections": policy_page_sections(request, policy),
    }
    return render(request, "quotes/policy_detail.html", context)


EXPORT_FORMATS = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def export_refused(message: str) -> HttpResponse:
    """A 400 the agent reads as it is: plain text, so nothing in it can ever be taken for markup."""
    return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")


def filter_errors_text(form: forms.Form) -> str:
    """Each bad filter by its label and query name, with what it may be; never the value sent.

    Django's own messages repeat the value ("… mevcut seçeneklerden biri değil"), and a
    link someone else crafted must not make this page say what they wrote.
    """
    problems = []
    for name in form.errors:
        field = form.fields[name]
        if isinstance(field, forms.ChoiceField):
            # django-stubs give the getter the setter's wide type; Django reads back (value, label) pairs.
            allowed = ", ".join(str(value) for value, _ in field.choices if value)  # type: ignore[misc, union-attr]
            hint = f"geçerli değerler: {allowed}" if allowed else "bu alan için seçenek yok"
        elif isinstance(field, forms.DateField):
            hint = "tarih YYYY-AA-GG biçiminde olmalı"
        else:
            hint = "geçersiz değer"
        problems.append(f"{field.label} ({name}): {hint}")
    return "Geçersiz filtre. " + "; ".join(problems) + "."


@login_required
@require_GET
def policy_export(request: AuthenticatedHttpRequest) -> HttpResponseBase:
    """The list as it is filtered (and searched) on the page, as CSV or an Excel workbook."""
    kind = request.GET.get("format", "csv")
    if kind not in EXPORT_FORMATS:
        return export_refused("Geçersiz dosya biçimi (format): csv veya xlsx olmalıdır.")
    form, search, policies = _filtered_policies(request)
    if search.expired:
        # Exporting everything instead of what the agent searched would be a quiet surprise.
        return export_refused("Aramanın süresi doldu; lütfen yeniden arayıp dışarı aktarın.")
    if form.errors:
        return export_refused(filter_errors_text(form))
    disposition = f'attachment; filename="{export_filename(kind)}"'
    response: HttpResponseBase
    if kind == "csv":
        response = StreamingHttpResponse(
            policy_export_csv(policies.iterator(chunk_size=500)), content_type=EXPORT_FORMATS[kind]
        )
    else:
        response = HttpResponse(
            policy_export_xlsx(policies.iterator(chunk_size=500)), content_type=EXPORT_FORMATS[kind]
        )
    response["Content-Disposition"] = disposition
    # A customer list: not for a shared cache or the browser's disk cache.
    response["Cache-Control"] = "private, no-store"
    return response
