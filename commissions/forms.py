"""The agency admin's forms (agreements, sub-agency shares) and the production report's filters:
shapes only; the rules are the services'."""

from __future__ import annotations

from django import forms

from agencies.models import SubAgency
from commissions.models import CommissionBase
from commissions.production_report import OWN_SALES, OWN_SALES_TR
from integrations.models import Insurer, InsurerAccount
from integrations.operations import PRODUCT_LABELS_TR, Product


def _choices_of(form: forms.Form, name: str) -> forms.ChoiceField:
    """The form's choice field `name`, whose choices are set per request."""
    field = form.fields[name]
    assert isinstance(field, forms.ChoiceField)  # declared as one on the form
    return field


class CommissionAgreementForm(forms.Form):
    insurer = forms.ChoiceField(label="Sigorta şirketi")
    product = forms.ChoiceField(label="Ürün", choices=[(p.value, PRODUCT_LABELS_TR[p]) for p in Product])
    # Localized: an agent types "12,5"; "12.5" is read too (no thousands separator is expected here).
    rate = forms.DecimalField(
        label="Komisyon oranı (%)",
        max_digits=5,
        decimal_places=2,
        localize=True,
        widget=forms.TextInput(attrs={"inputmode": "decimal"}),
    )
    base = forms.ChoiceField(label="Hesap tabanı", choices=CommissionBase.choices)
    effective_from = forms.DateField(label="Geçerlilik başlangıcı", widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, agency_id: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        accounts = (
            InsurerAccount.objects.filter(agency_id=agency_id).select_related("insurer").order_by("insurer__name")
        )
        _choices_of(self, "insurer").choices = [(account.insurer.code, account.insurer.name) for account in accounts]


class SubAgencyShareForm(forms.Form):
    """A sub-agency's share of the agency's commission, from a day on."""

    sub_agency = forms.ChoiceField(label="Tali acente")
    rate = forms.DecimalField(
        label="Pay oranı (acente komisyonunun %)",
        max_digits=5,
        decimal_places=2,
        localize=True,
        widget=forms.TextInput(attrs={"inputmode": "decimal"}),
    )
    effective_from = forms.DateField(label="Geçerlilik başlangıcı", widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, agency_id: int, **kwargs) -> None:
        kwargs["prefix"] = "pay"  # its fields beside the agreement form's on the same page
        super().__init__(*args, **kwargs)
        subs = SubAgency.objects.filter(agency_id=agency_id).order_by("name")
        _choices_of(self, "sub_agency").choices = [(str(sub.pk), sub.name) for sub in subs]


class ProductionReportFilterForm(forms.Form):
    """The report's filters, read from the query string (nothing in them names a customer)."""

    baslangic = forms.DateField(label="Başlangıç", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    bitis = forms.DateField(label="Bitiş", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    sirket = forms.ChoiceField(label="Sigorta şirketi", required=False)
    urun = forms.ChoiceField(
        label="Ürün", required=False, choices=[("", "Tümü"), *((p.value, PRODUCT_LABELS_TR[p]) for p in Product)]
    )
    satan = forms.ChoiceField(label="Satan", required=False)
    tali = forms.ChoiceField(label="Tali acente", required=False)
    acente = forms.ChoiceField(label="Acente", required=False)

    # The service's field names → this form's.
    FIELD_OF = {
        "date_from": "baslangic",
        "date_to": "bitis",
        "insurer": "sirket",
        "product": "urun",
        "sub_agency": "tali",
    }

    def __init__(
        self,
        *args,
        agency_id: int,
        sellers: list[tuple[int, str]],
        agencies: list[tuple[str, str]],
        **kwargs,
    ) -> None:
        super().__init__(*args, **kwargs)
        insurers = Insurer.objects.order_by("name").values_list("code", "name")
        _choices_of(self, "sirket").choices = [("", "Tümü"), *insurers]
        _choices_of(self, "satan").choices = [("", "Tümü"), *((str(pk), name) for pk, name in sellers)]
        subs = SubAgency.objects.filter(agency_id=agency_id).order_by("name").values_list("pk", "name")
        _choices_of(self, "tali").choices = [
            ("", "Tümü"),
            (OWN_SALES, OWN_SALES_TR),
            *((str(pk), name) for pk, name in subs),
        ]
        if agencies:
            _choices_of(self, "acente").choices = agencies
        else:
            del self.fields["acente"]

    def error_field(self, name: str) -> str:
        return self.FIELD_OF.get(name, name)

    def values(self) -> dict:
        """The valid fields in the service's names; a bad one is shown as an error and ignored."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        seller = data.get("satan") or ""
        return {
            "date_from": data.get("baslangic"),
            "date_to": data.get("bitis"),
            "insurer": data.get("sirket", ""),
            "product": data.get("urun", ""),
            "sold_by_id": int(seller) if seller else None,
            "sub_agency": data.get("tali", ""),
        }
