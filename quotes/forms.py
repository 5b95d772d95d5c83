"""The agent's quote forms (one per product) and the issuance confirmation.

The forms only collect text and show errors: every rule lives in `quotes.validation` (and, for
a kasko's vehicle, the TSB value list), run through `quote_input_validate`, the same check the
service runs again before saving, so the page and the backend can never disagree about what is
valid. Django-level `required` is off on purpose: `validate_fields`
reports a missing value with the same Turkish message as any other error on that field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from django import forms
from django.conf import settings
from django.db.models import QuerySet
from django.http import QueryDict
from django.urls import reverse_lazy
from django.utils.functional import cached_property

from customers.forms import customer_fields, customer_pick_label
from customers.models import Customer
from customers.name_search import name_fold
from customers.selectors import CUSTOMER_PICK_LIMIT, customer_pick_matching
from customers.services import customer_identity_conflict
from customers.validators import validate_customer
from integrations.operations import KASKO_DEDUCTIBLES, KASKO_REPLACEMENT_CAR_DAYS, PRODUCT_LABELS_TR, Product
from quotes.models import QuoteRequest
from quotes.services.quote_requests import quote_input_validate
from quotes.validation import (
    KASKO_LIABILITY_LIMITS,
    PRODUCT_FIELDS,
    PRODUCT_OPTION_FIELDS,
    REPAIR_SHOP_LABELS_TR,
    FieldError,
    default_starts_on,
    option_given,
    validate_starts_on,
)
from vehicles.models import KaskoValueList
from vehicles.selectors import kasko_value_list_current

USAGE_CHOICES = [("private", "Hususi"), ("commercial", "Ticari"), ("taxi", "Taksi")]
CONSTRUCTION_TYPE_CHOICES = [
    ("reinforced_concrete", "Betonarme / çelik karkas"),
    ("masonry", "Yığma"),
    ("other", "Diğer"),
]
DAMAGE_STATUS_CHOICES = [("none", "Hasarsız"), ("minor", "Az hasarlı"), ("heavy", "Ağır hasarlı")]

# Kasko options (CONTRACTS.md, "Kasko options"). Blank is the insurer's own standard package:
# nothing is sent, so no insurer refuses a value the agent did not choose; each choice is then
# priced by every insurer that sells it and refused, on its row, by one that does not.
OPTION_STANDARD = ("", "Şirketin standardı")
# The İMM select's word for "unlimited" (null in the request's input and on the API).
UNLIMITED = "sinirsiz"


def _lira(amount: int) -> str:
    return f"{amount:,}".replace(",", ".") + " TL"


DEDUCTIBLE_CHOICES = [(str(amount), _lira(amount) if amount else "Muafiyetsiz") for amount in KASKO_DEDUCTIBLES]
REPLACEMENT_CAR_CHOICES = [
    (str(days), f"{days} gün" if days else "İkame araç yok") for days in KASKO_REPLACEMENT_CAR_DAYS
]
LIABILITY_CHOICES = [
    (UNLIMITED, "Sınırsız") if limit is None else (str(limit), _lira(limit)) for limit in KASKO_LIABILITY_LIMITS
]
REPAIR_SHOP_CHOICES = list(REPAIR_SHOP_LABELS_TR.items())

PRODUCTS: list[tuple[str, str]] = [(p.value, PRODUCT_LABELS_TR[p]) for p in Product]
# The vehicle the kasko form asks for: chosen from the TSB list by the picker, or typed as codes.
VEHICLE_FIELDS = ("model_year", "brand_code", "model_code")


def _text(label: str, *, placeholder: str = "", numeric: bool = False, max_length: int = 32) -> forms.CharField:
    attrs = {"placeholder": placeholder, "autocomplete": "off"}
    if numeric:
        attrs["inputmode"] = "numeric"
    return forms.CharField(label=label, required=False, max_length=max_length, widget=forms.TextInput(attrs=attrs))


def _choice(label: str, choices: list[tuple[str, str]]) -> forms.ChoiceField:
    # A blank first option makes "not chosen" an explicit, visible state instead of a silent default.
    return forms.ChoiceField(label=label, required=False, choices=[("", "Seçiniz"), *choices])


class OptionField(forms.ChoiceField):
    """A kasko option's select. A value off the list is left to `quotes.validation`, so the agent
    reads the same Turkish message on the field as an API caller sending it."""

    def valid_value(self, value: Any) -> bool:
        return True


def _option(label: str, choices: list[tuple[str, str]]) -> forms.ChoiceField:
    """A kasko option: blank is the insurer's standard (not sent)."""
    return OptionField(label=label, required=False, choices=[OPTION_STANDARD, *choices])


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
    "starts_on": lambda: forms.CharField(
        label="Poliçe başlangıç tarihi",
        required=False,
        max_length=10,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Boş bırakılırsa yarın başlar; en çok 30 gün sonrası seçilebilir.",
    ),
    "deductible": lambda: _option("Muafiyet", DEDUCTIBLE_CHOICES),
    "replacement_car_days": lambda: _option("İkame araç", REPLACEMENT_CAR_CHOICES),
    "liability_limit": lambda: _option("İMM limiti", LIABILITY_CHOICES),
    "repair_shop": lambda: _option("Servis", REPAIR_SHOP_CHOICES),
}


# The customer select's value for "add the customer typed below" (a pk is always digits).
NEW_CUSTOMER = "yeni"
# The inline new customer: a customer's fields under a prefix, except the identity number, which
# is the form's own owner_id (a customer's quote is always for the customer's own number).
NEW_CUSTOMER_PREFIX = "customer_"
NEW_CUSTOMER_FIELDS = ("name", "phone", "email", "kvkk_consent_at", "kvkk_consent_channel")
CUSTOMER_TAKEN_MESSAGE = "Bu kimlik numarasıyla kayıtlı bir müşteriniz var; listeden seçin."
INVALID_CUSTOMER_MESSAGE = "Geçersiz müşteri seçimi."
CUSTOMER_NOT_FOUND_MESSAGE = "Bu aramayla eşleşen müşteriniz yok; adı ya da kimlik numarasını kontrol edin."
CUSTOMER_AMBIGUOUS_MESSAGE = "Bu aramayla birden çok müşteri eşleşti; adı tam yazın ya da kimlik numarasıyla arayın."
# The box holds a pick's label too: a name (200 at most) and the masked number.
CUSTOMER_QUERY_MAX_LENGTH = 240


class QuoteRequestForm(forms.Form):
    """Base of the per-product forms: the fields come from the validators' product table.

    A quote may be for a customer: one of `customers` (the agent's agency's) found by the search
    box, or a new one typed in below (saved by the view with the request). Both are optional.
    """

    product: ClassVar[str]

    def __init__(self, *args: Any, customers: QuerySet[Customer] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.customers = customers if customers is not None else Customer.objects.none()
        self.customer: Customer | None = None
        self._new_customer = False
        # The customer: a search box (customer_query) that static/insurehub/customer-search.js
        # turns into a list of matches, the pick's pk kept in `customer`. Without scripts the box
        # is a plain field looked up on submit. The inline new customer is `new_customer` ticked
        # (or `customer` "yeni", as the form sent it when the pick was a select).
        self.fields["customer"] = forms.CharField(required=False, max_length=20, widget=forms.HiddenInput)
        self.fields["customer_query"] = forms.CharField(
            label="Müşteri",
            required=False,
            max_length=CUSTOMER_QUERY_MAX_LENGTH,
            widget=forms.TextInput(
                attrs={
                    "placeholder": "Ad soyad ya da T.C. kimlik / vergi no yazın",
                    "autocomplete": "off",
                    "data-customer-search": reverse_lazy("customer_pick"),
                    "role": "combobox",
                    "aria-autocomplete": "list",
                    "aria-expanded": "false",
                    "aria-controls": "customer-matches",
                }
            ),
        )
        self.fields["new_customer"] = forms.BooleanField(label="+ Yeni müşteri", required=False)
        for name in (*PRODUCT_FIELDS[self.product], "starts_on", *self.option_names):
            self.fields[name] = FIELD_FACTORIES[name]()
        self.fields["starts_on"].initial = default_starts_on()
        inline = customer_fields()
        for name in NEW_CUSTOMER_FIELDS:
            self.fields[NEW_CUSTOMER_PREFIX + name] = inline[name]

    @property
    def option_names(self) -> tuple[str, ...]:
        return PRODUCT_OPTION_FIELDS.get(self.product, ())

    def option_fields(self) -> list[forms.BoundField]:
        """The product's options (kasko: muafiyet, ikame araç, İMM, servis)."""
        return [self[name] for name in self.option_names]

    @property
    def wants_new_customer(self) -> bool:
        return self._new_customer

    def product_fields(self) -> list[forms.BoundField]:
        """The product's fields but the vehicle's codes, which the vehicle picker holds."""
        names = (*PRODUCT_FIELDS[self.product], "starts_on")
        return [self[name] for name in names if name not in VEHICLE_FIELDS]

    def vehicle_fields(self) -> list[forms.BoundField]:
        """Model year, brand and type codes (kasko): what the picker fills in, typed by hand too."""
        return [self[name] for name in PRODUCT_FIELDS[self.product] if name in VEHICLE_FIELDS]

    def new_customer_fields(self) -> list[forms.BoundField]:
        return [self[NEW_CUSTOMER_PREFIX + name] for name in NEW_CUSTOMER_FIELDS]

    def new_customer_data(self) -> dict[str, Any]:
        """The inline customer in the customer service's field names."""
        data = {name: self.cleaned_data.get(NEW_CUSTOMER_PREFIX + name) for name in NEW_CUSTOMER_FIELDS}
        return {**data, "identity_no": self.cleaned_data.get("owner_id")}

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what Form.clean returns
        choice = (data.get("customer") or "").strip()
        self._new_customer = bool(data.get("new_customer")) or choice == NEW_CUSTOMER
        if not self._new_customer:
            self.customer = self._picked_customer(choice, data.get("customer_query") or "")
        if self.customer is not None:
            data["customer"] = str(self.customer.pk)
            if not (data.get("owner_id") or "").strip():
                # The number comes from the customer: the agent need not type it again.
                data["owner_id"] = self.customer.identity_no
        if data.get("liability_limit") == UNLIMITED:
            data["liability_limit"] = None  # a null İMM limit is the choice "unlimited"
        clean, errors = quote_input_validate(product=self.product, data=data)
        self.add_errors(errors)
        if self.customer is not None and "owner_id" in clean:
            conflict = customer_identity_conflict(customer=self.customer, owner_id=clean["owner_id"])
            if conflict:
                self.add_error("owner_id", conflict)
        if self._new_customer:
            self._clean_new_customer(clean.get("owner_id"))
        return data

    def _picked_customer(self, choice: str, query: str) -> Customer | None:
        """The customer the agent picked (`choice`, a pk the script wrote), else the one the
        search box names alone (no script: looked up here). One of the agency's or a field error."""
        if choice:
            is_pk = choice.isascii() and choice.isdigit() and len(choice) < 19  # past that, no database key
            found = self.customers.filter(pk=choice).first() if is_pk else None
            if found is None:
                self.add_error("customer", INVALID_CUSTOMER_MESSAGE)
            return found
        # The box shows a pick as "NAME · 123******50": the name is what is looked up.
        term = " ".join(query.split(" · ")[0].split())
        if not term:
            return None
        matches = list(self.customers.filter(customer_pick_matching(term)).order_by("name", "pk")[:CUSTOMER_PICK_LIMIT])
        exact = [customer for customer in matches if name_fold(customer.name) == name_fold(term)]
        if len(matches) == 1 or len(exact) == 1:
            return matches[0] if len(matches) == 1 else exact[0]
        self.add_error("customer", CUSTOMER_AMBIGUOUS_MESSAGE if matches else CUSTOMER_NOT_FOUND_MESSAGE)
        return None

    def _clean_new_customer(self, identity_no: str | None) -> None:
        """The inline customer's own fields; its identity number is owner_id, checked above."""
        _, errors = validate_customer(self.new_customer_data())
        self.add_customer_errors({field: message for field, message in errors.items() if field != "identity_no"})
        if identity_no and self.customers.filter(identity_no=identity_no).exists():
            self.add_error("customer", CUSTOMER_TAKEN_MESSAGE)

    def add_customer_errors(self, errors: Mapping[str, str]) -> None:
        """The customer service's errors on the inline fields (its identity number is owner_id)."""
        for field, message in errors.items():
            name = "owner_id" if field == "identity_no" else NEW_CUSTOMER_PREFIX + field
            if name not in self.errors:
                self.add_error(name if name in self.fields else None, message)

    def error_field(self, name: str) -> str:
        """Where a service's message about `name` goes (`insurehub.desk_errors`): the
        quote's own field, else the inline new customer's (the customer's identity_no is owner_id)."""
        if name in self.fields:
            return name
        return "owner_id" if name == "identity_no" else NEW_CUSTOMER_PREFIX + name

    def add_errors(self, errors: Mapping[str, str]) -> None:
        """Each message next to its field; anything not on this form goes to the top."""
        for field, message in errors.items():
            self.add_error(field if field in self.fields else None, message)


class TrafikForm(QuoteRequestForm):
    product = Product.TRAFIK.value


class KaskoForm(QuoteRequestForm):
    product = Product.KASKO.value

    @cached_property
    def value_list(self) -> KaskoValueList | None:
        """The TSB list the vehicle picker searches (none loaded: the codes are typed by hand)."""
        return kasko_value_list_current()


class DaskForm(QuoteRequestForm):
    """DASK asks in two steps: the UAVT code's address shown (`dask_address_check`), then, once
    the agent has confirmed it with the customer, the quote. `confirmed_uavt` carries the code
    that was confirmed: a code changed after the address was shown must be shown again."""

    product = Product.DASK.value

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["confirmed_uavt"] = forms.CharField(required=False, max_length=16, widget=forms.HiddenInput)

    @property
    def address_confirmed(self) -> bool:
        confirmed = "".join(str(self.cleaned_data.get("confirmed_uavt") or "").split())
        code = "".join(str(self.cleaned_data.get("uavt_code") or "").split())
        return bool(code) and confirmed == code

    def confirm_address_of(self, uavt_code: str) -> None:
        """Show the form again with the address of `uavt_code`; the next submit confirms it."""
        posted = self.data
        assert isinstance(posted, QueryDict | dict)  # a bound form's: request.POST on the desk
        data = posted.copy()  # request.POST is immutable
        data["confirmed_uavt"] = uavt_code
        self.data = data


def customer_initial(customer: Customer) -> dict[str, str]:
    """The form's customer fields with `customer` picked, and their number filled in."""
    return {
        "customer": str(customer.pk),
        "customer_query": customer_pick_label(customer),
        "owner_id": customer.identity_no,
    }


def option_initial(name: str, value: Any) -> str:
    """An option as stored (an integer, a word, None for an unlimited İMM) as its select's value."""
    if name == "liability_limit" and value is None:
        return UNLIMITED
    return str(value)


def rerun_initial(quote_request: QuoteRequest) -> dict[str, Any]:
    """ "Teklifi yeniden çalış": the form filled in with what `quote_request` asked (its risk,
    customer and options), for the agent to change and ask every insurer again. A start that
    has passed since is left to the form's default (tomorrow)."""
    data = quote_request.input_data or {}
    initial: dict[str, Any] = {
        name: data[name] for name in PRODUCT_FIELDS.get(quote_request.product, ()) if name in data
    }
    initial["owner_id"] = quote_request.owner_id
    for name in PRODUCT_OPTION_FIELDS.get(quote_request.product, ()):
        if option_given(data, name):
            initial[name] = option_initial(name, data[name])
    try:
        initial["starts_on"] = validate_starts_on(data.get("starts_on"))
    except FieldError:
        pass  # passed: tomorrow, the form's own default
    if quote_request.customer is not None:
        initial.update(customer_initial(quote_request.customer))
    return initial


QUOTE_FORMS: dict[str, type[QuoteRequestForm]] = {form.product: form for form in (TrafikForm, KaskoForm, DaskForm)}


class IssuanceConfirmForm(forms.Form):
    # Stand-in for a payment provider's token. Only the demo settings pre-fill one the sandbox
    # accepts (`DEMO_PAYMENT_TOKEN`): a real desk never offers a card it did not get.
    payment_token = forms.CharField(
        label="Ödeme belirteci",
        max_length=128,
        error_messages={"required": "Ödeme bilgisi eksik."},
    )

    installments = forms.TypedChoiceField(
        label="Taksit sayısı",
        required=False,
        coerce=int,
        empty_value=1,  # type: ignore[arg-type]  # django-stubs say str; Django hands back any value as it is
        error_messages={"invalid_choice": "Bu teklif bu taksit sayısını sunmuyor."},
    )
    overlap = forms.ChoiceField(
        label="Çakışan trafik poliçesi",
        required=False,
        choices=[
            ("", "Seçiniz"),
            ("cancel_old", "Eski poliçe araç satışı nedeniyle, yeni poliçenin başlangıcından itibaren iptal edilsin"),
        ],
        widget=forms.RadioSelect,
    )

    def __init__(self, *args: Any, plans: list[dict] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["payment_token"].initial = settings.DEMO_PAYMENT_TOKEN or None
        choices = [(1, "Peşin")]
        for plan in plans or []:
            if isinstance(plan.get("count"), int) and plan["count"] > 1:
                choices.append((plan["count"], f"{plan['count']} taksit (toplam {plan.get('total')} TL)"))
        installments = self.fields["installments"]
        assert isinstance(installments, forms.TypedChoiceField)  # declared above
        installments.choices = choices
