"""The desk's customer form, and the same fields as the quote form's inline "new customer".

Like the quote forms, these only collect text and show errors: every rule is in
`customers.validators`, run here for the page and again by the service before saving.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms

from customers.models import Customer
from customers.validators import TURKEY_TZ, validate_customer
from insurehub.masking import mask_identity

CONSENT_INPUT_FORMAT = "%Y-%m-%dT%H:%M"


def _text(label: str, *, max_length: int, placeholder: str = "", **attrs: str) -> forms.CharField:
    widget_attrs = {"placeholder": placeholder, "autocomplete": "off", **attrs}
    return forms.CharField(label=label, required=False, max_length=max_length, widget=forms.TextInput(widget_attrs))


def customer_pick_label(customer: Customer) -> str:
    """How the quote form names a customer it offers: the name and the masked number."""
    return f"{customer.name} · {mask_identity(customer.identity_no)}"


def customer_fields() -> dict[str, forms.Field]:
    """A customer's fields, keyed by the model's (validators') names; new instances each call."""
    return {
        "name": _text("Ad soyad / unvan", max_length=200),
        "identity_no": _text(
            "T.C. Kimlik / Vergi No", max_length=16, placeholder="11 veya 10 hane", inputmode="numeric"
        ),
        "phone": _text("Telefon", max_length=32, placeholder="0532 123 45 67", inputmode="tel"),
        "email": _text("E-posta", max_length=254, placeholder="ad@ornek.com", inputmode="email"),
        "address": forms.CharField(
            label="Adres", required=False, max_length=500, widget=forms.Textarea(attrs={"rows": 2})
        ),
        "kvkk_consent_at": _text("KVKK onay zamanı", max_length=32, type="datetime-local"),
        "kvkk_consent_channel": forms.ChoiceField(
            label="KVKK onay şekli", required=False, choices=[("", "Seçiniz"), *Customer.ConsentChannel.choices]
        ),
    }


def consent_input_value(customer: Customer) -> str:
    """The stored consent moment as the datetime-local input shows it (Türkiye time)."""
    if customer.kvkk_consent_at is None:
        return ""
    return customer.kvkk_consent_at.astimezone(TURKEY_TZ).strftime(CONSENT_INPUT_FORMAT)


class CustomerForm(forms.Form):
    def __init__(self, *args: Any, customer: Customer | None = None, **kwargs: Any) -> None:
        if customer is not None and "initial" not in kwargs:
            kwargs["initial"] = {
                "name": customer.name,
                "identity_no": customer.identity_no,
                "phone": customer.phone,
                "email": customer.email,
                "address": customer.address,
                "kvkk_consent_at": consent_input_value(customer),
                "kvkk_consent_channel": customer.kvkk_consent_channel,
            }
        super().__init__(*args, **kwargs)
        self.fields.update(customer_fields())

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what Form.clean returns
        _, errors = validate_customer(data)
        self.add_errors(errors)
        return data

    def add_errors(self, errors: Mapping[str, str]) -> None:
        for field, message in errors.items():
            if field not in self.errors:
                self.add_error(field if field in self.fields else None, message)
