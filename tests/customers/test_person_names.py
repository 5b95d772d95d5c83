"""A name of emoji alone, or one carrying Unicode bidirectional controls, names nobody: refused
with a Turkish error naming the field wherever a person's name is typed (a customer's on the desk,
the quote form and the API; an agent's first and last name)."""

from __future__ import annotations

import re

import pytest

from customers.models import Customer
from customers.validators import validate_customer
from insurehub.person_names import person_name_problem
from tests.conftest import api_as

from .conftest import OTHER_TCKN, TCKN

pytestmark = pytest.mark.django_db

BIDI = {
    "right-to-left override": "Ayşe\u202e zılıY",
    "left-to-right embedding": "\u202aAyşe Yılmaz",
    "pop directional formatting": "Ayşe Yılmaz\u202c",
    "first strong isolate": "Ayşe \u2068Yılmaz\u2069",
    "left-to-right isolate": "\u2066Ali\u2069 Kaya",
    "left-to-right mark": "Ali\u200e Kaya",
    "right-to-left mark": "Ali Kaya\u200f",
    "arabic letter mark": "Ali\u061c Kaya",
}
NO_LETTER = {"emoji": "😀😀", "emoji and spaces": " 🎉 🙂 ", "flag": "🇹🇷", "symbols": "!!! ---", "digits": "12345"}
BAD_NAMES = {**BIDI, **NO_LETTER}
GOOD_NAMES = ["Ayşe Yılmaz", "İlknur Ilgaz", "Çağlar Öztürk Ltd. Şti.", "3M Türkiye", "Ayşe 🌸 Yılmaz", "O'Neil-Kaya"]


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p class="error" id="id_{field}_error">([^<]*)</p>', html)
    return match.group(1) if match else ""


@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES.keys())
def test_the_rule_refuses_the_name_naming_the_field(name):
    problem = person_name_problem(name, label="Ad soyad / unvan")
    assert problem.startswith("Ad soyad / unvan")
    _, errors = validate_customer({"name": name, "identity_no": TCKN})
    assert list(errors) == ["name"] and errors["name"].startswith("Ad soyad / unvan")


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_names_with_letters_are_accepted(name):
    assert person_name_problem(name, label="Ad") == ""
    assert validate_customer({"name": name, "identity_no": TCKN})[1] == {}


@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES.keys())
def test_the_desk_customer_form_refuses_it_on_the_name_field(desk, name):
    response = desk.post("/musteriler/yeni/", {"name": name, "identity_no": OTHER_TCKN})
    assert response.status_code in (200, 400)
    assert field_error(response.content.decode(), "name").startswith("Ad soyad / unvan")
    assert not Customer.objects.exists()


@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES.keys())
def test_the_quote_forms_new_customer_refuses_it_on_the_name_field(desk, name):
    from quotes.models import QuoteRequest
    from tests import samples

    form = {**samples.TRAFIK, "usage": "private", "customer": "yeni", "customer_name": name}
    response = desk.post("/teklif/yeni/trafik/", form)
    assert field_error(response.content.decode(), "customer_name").startswith("Ad soyad / unvan")
    assert not Customer.objects.exists() and not QuoteRequest.objects.exists()


@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES.keys())
def test_the_api_refuses_it_with_a_400_on_name_when_creating_and_changing(agents, customers, name):
    api = api_as(agents["ACENTE1"])
    created = api.post("/api/customers/", {"name": name, "identity_no": OTHER_TCKN}, format="json")
    assert created.status_code == 400 and list(created.json()) == ["name"]
    assert created.json()["name"][0].startswith("Ad soyad / unvan")
    customer = customers["ACENTE1"]
    changed = api.patch(f"/api/customers/{customer.pk}/", {"name": name}, format="json")
    assert changed.status_code == 400 and changed.json()["name"][0].startswith("Ad soyad / unvan")
    customer.refresh_from_db()
    assert customer.name == "Müşteri ACENTE1" and Customer.objects.count() == len(customers)


@pytest.mark.parametrize(("field", "label"), [("first_name", "Ad"), ("last_name", "Soyad")])
@pytest.mark.parametrize("name", [BAD_NAMES["emoji"], BAD_NAMES["right-to-left override"]], ids=["emoji", "bidi"])
def test_an_agents_first_and_last_name_are_held_to_the_same_rule(agents, desk, field, label, name):
    from django.contrib.auth import get_user_model

    profile = agents["ACENTE1"].agent_profile
    profile.is_agency_admin = True
    profile.save()
    form = {"username": "yeni-ajan", "password": "uzun-ve-zor-parola-42", field: name}
    response = desk.post("/acente/calisanlar/", form)
    assert response.status_code == 400
    assert [error[: len(label) + 1] for error in response.context["form"].errors[field]] == [f"{label} "]
    assert response.context["form"].errors[field][0] in response.content.decode()
    assert not get_user_model().objects.filter(username="yeni-ajan").exists()
