"""The agent's quote forms (one per product) and the issuance confirmation.

The forms only collect text and show errors: every rule lives in `integrations.validators`,
the same checks the service runs again before saving, so the page and the backend can never
disagree about what is valid. Django-level `required` is off on purpose: `validate_fields`
reports a missing value with the same Turkish message as any other error on that field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from django import forms

from integrations.operations import PRODUCT_LABELS_TR, Product
from integrations.validators import PRODUCT_FIELDS, validate_fields

USAGE_CHOICES = [("private", "Hususi"), ("commercial", "Ticari"), ("taxi", "Taksi")]
CONSTRUCTION_TYPE_CHOICES = [
    ("reinforced_concrete", "Betonarme / çelik karkas"),
    ("masonry", "Yığma"),
    ("other", "Diğer"),
]
DAMAGE_STATUS_CHOICES = [("none", "Hasarsız"), ("minor", "Az hasarlı"), ("heavy", "Ağır hasarlı")]

PRODUCTS: list[tuple[str, str]] = [(p.value, PRODUCT_LABELS_TR[p]) for p in Product]


def _text(label: str, *, placeholder: str = "", numeric: bool = False, max_length: int = 32) -> forms.CharField:
    attrs = {"placeholder": placeholder, "autocomplete": "off"}
    if numeric:
        attrs["inputmode"] = "numeric"
    return forms.CharField(label=label, required=False, max_length=max_length, widget=forms.TextInput(attrs=attrs))


def _choice(label: str, choices: list[tuple[str, str]]) -> forms.ChoiceField:
    # A blank first option makes "not chosen" an explicit, visible state instead of a silent default.
    return forms.ChoiceField(label=label, required=False, choices=[("", "Seçiniz"), *choices])


# Every field any product uses, keyed by the platform's field name (validators' names).
FIELD_FACTORIES: dict[str, Callable[[], forms.Field]] = {
    "plate": lambda: _text("Plaka", placeholder="34 ABC 123", max_length=16),
    "owner_id": lambda: _text("T.C. Kimlik / Vergi No", placeholder="11 veya 10 hane", numeric=True, max_length=16),
    "registration_serial": lambda: _text("Ruhsat seri no", placeholder="AB123456", max_length=16),
    "usage": lambda: _choice("Kullanım tarzı", USAGE_CHOICES),
    "model_year": lambda: _text("Model yılı", placeholder="2021", numeric=True, max_length=8),
    "brand_code": lambda: _text("Marka kodu", placeholder="012", numeric=True, max_length=8),
    "model_code": lambda: _text("Tip kodu", placeholder="345", numeric=True, max_length=8),
    "uavt_code": lambda: _text("UAVT adres kodu", placeholder="10 hane", numeric=True, max_length=16),
    "construction_type": lambda: _choice("Yapı tarzı", CONSTRUCTION_TYPE_CHOICES),
    "construction_year": lambda: _text("İnşa yılı", placeholder="2005", numeric=True, max_length=8),
    "floor_count": lambda: _text("Kat sayısı", placeholder="5", numeric=True, max_length=8),
    "gross_m2": lambda: _text("Brüt alan (m²)", placeholder="120", numeric=True, max_length=8),
    "damage_status": lambda: _choice("Hasar durumu", DAMAGE_STATUS_CHOICES),
}


class QuoteRequestForm(forms.Form):
    """Base of the per-product forms: the fields come from the validators' product table."""

    product: ClassVar[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in PRODUCT_FIELDS[self.product]:
            self.fields[name] = FIELD_FACTORIES[name]()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        _, errors = validate_fields(self.product, data)
        self.add_errors(errors)
        return data

    def add_errors(self, errors: Mapping[str, str]) -> None:
        """Each message next to its field; anything not on this form goes to the top."""
        for field, message in errors.items():
            self.add_error(field if field in self.fields else None, message)


class TrafikForm(QuoteRequestForm):
    product = Product.TRAFIK.value


class KaskoForm(QuoteRequestForm):
    product = Product.KASKO.value


class DaskForm(QuoteRequestForm):
    product = Product.DASK.value


QUOTE_FORMS: dict[str, type[QuoteRequestForm]] = {form.product: form for form in (TrafikForm, KaskoForm, DaskForm)}


class IssuanceConfirmForm(forms.Form):
    # Stand-in for a payment provider's token; the demo pre-fills one the sandbox accepts.
    payment_token = forms.CharField(
        label="Ödeme belirteci",
        max_length=128,
        initial="tok_demo_4242",
        error_messages={"required": "Ödeme bilgisi eksik."},
    )
