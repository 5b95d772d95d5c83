"""The agency admin's agreement form: shapes only; the rules are the service's."""

from __future__ import annotations

from django import forms

from commissions.models import CommissionBase
from integrations.models import InsurerAccount
from integrations.operations import PRODUCT_LABELS_TR, Product


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
        self.fields["insurer"].choices = [(account.insurer.code, account.insurer.name) for account in accounts]
