"""The quote form with a customer: pick one, add one inline, the number filled in, a mismatch refused."""

from __future__ import annotations

import re

import pytest

from customers.models import Customer
from quotes.models import QuoteRequest
from quotes.services.quote_requests import InputInvalid, quote_request_create
from tests import samples

from .conftest import OTHER_TCKN, TCKN

pytestmark = pytest.mark.django_db


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p class="error" id="id_{field}_error">([^<]*)</p>', html)
    return match.group(1) if match else ""


def trafik(**fields) -> dict[str, str]:
    return {**samples.TRAFIK, **fields}


def test_form_offers_the_agencys_customers_through_its_search_box_only(desk, customers):
    """The page names no customer (tests/customers/test_customer_pick.py: the box's endpoint)."""
    html = desk.get("/teklif/yeni/trafik/").content.decode()
    assert "Müşteri ACENTE1" not in html and "Müşteri ACENTE2" not in html
    assert desk.post("/musteriler/sec/", {"q": "müşteri"}).json()["results"] == [
        {
            "id": customers["ACENTE1"].pk,
            "name": "Müşteri ACENTE1",
            "identity": "123******50",
            "label": "Müşteri ACENTE1 · 123******50",
        }
    ]


def test_picked_customer_with_blank_number_asks_for_the_customers_number(desk, customers):
    customer = customers["ACENTE1"]
    response = desk.post("/teklif/yeni/trafik/", trafik(customer=str(customer.pk), owner_id=""))
    assert response.status_code == 302
    request = QuoteRequest.objects.get()
    assert request.customer == customer and request.owner_id == TCKN and request.input_data["owner_id"] == TCKN


def test_picked_customer_with_their_own_number_typed_is_fine(desk, customers):
    response = desk.post(
        "/teklif/yeni/trafik/", trafik(customer=str(customers["ACENTE1"].pk), owner_id="123 456 789 50")
    )
    assert response.status_code == 302 and QuoteRequest.objects.get().customer == customers["ACENTE1"]


def test_picked_customer_with_another_number_is_an_owner_id_error(desk, customers):
    response = desk.post("/teklif/yeni/trafik/", trafik(customer=str(customers["ACENTE1"].pk), owner_id=OTHER_TCKN))
    assert response.status_code == 200
    assert list(response.context["form"].errors) == ["owner_id"]
    assert "uyuşmuyor" in field_error(response.content.decode(), "owner_id")
    assert not QuoteRequest.objects.exists()


def test_another_agencys_customer_cannot_be_picked(desk, customers):
    response = desk.post("/teklif/yeni/trafik/", trafik(customer=str(customers["ACENTE2"].pk), owner_id=TCKN))
    assert response.status_code == 200
    assert field_error(response.content.decode(), "customer") == "Geçersiz müşteri seçimi."
    assert not QuoteRequest.objects.exists()


def test_new_customer_inline_is_saved_with_the_request(desk, agents):
    response = desk.post(
        "/teklif/yeni/trafik/",
        trafik(
            owner_id=OTHER_TCKN,
            customer="yeni",
            customer_name="Ali Veli",
            customer_phone="0532 123 45 67",
            customer_kvkk_consent_at="2026-02-01T09:00",
            customer_kvkk_consent_channel="sms",
        ),
    )
    assert response.status_code == 302
    customer = Customer.objects.get(identity_no=OTHER_TCKN)
    assert customer.name == "Ali Veli" and customer.phone == "+905321234567" and customer.kvkk_consent_channel == "sms"
    assert customer.agency == agents["ACENTE1"].agent_profile.agency and customer.created_by == agents["ACENTE1"]
    assert QuoteRequest.objects.get().customer == customer


def test_new_customer_with_bad_fields_saves_neither_customer_nor_request(desk, agents):
    response = desk.post(
        "/teklif/yeni/trafik/",
        trafik(customer="yeni", customer_name="", customer_kvkk_consent_channel="sms"),
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert set(errors) == {"customer_name", "customer_kvkk_consent_at"}
    assert "Ad soyad" in field_error(response.content.decode(), "customer_name")
    assert not Customer.objects.exists() and not QuoteRequest.objects.exists()


def test_new_customer_whose_number_the_agency_has_points_to_the_list(desk, customers):
    response = desk.post("/teklif/yeni/trafik/", trafik(owner_id=TCKN, customer="yeni", customer_name="Kopya"))
    assert response.status_code == 200
    assert "listeden seçin" in field_error(response.content.decode(), "customer")
    assert Customer.objects.filter(identity_no=TCKN).count() == 2 and not QuoteRequest.objects.exists()


def test_new_customer_is_rolled_back_when_no_request_can_be_made(desk, agents):
    """No insurer account: the form says so, and the customer typed in is not left behind either."""
    from integrations.models import InsurerAccount

    InsurerAccount.objects.filter(agency=agents["ACENTE1"].agent_profile.agency).update(is_active=False)
    response = desk.post("/teklif/yeni/trafik/", trafik(owner_id=OTHER_TCKN, customer="yeni", customer_name="Ali"))
    assert response.status_code == 200 and "aktif sigorta şirketi hesabı yok" in response.content.decode()
    assert not Customer.objects.exists()


def test_musteri_in_the_url_preselects_the_customer_and_fills_the_number(desk, customers):
    own = customers["ACENTE1"]
    form = desk.get(f"/teklif/yeni/kasko/?musteri={own.pk}").context["form"]
    assert form["customer"].value() == str(own.pk) and form["owner_id"].value() == TCKN
    for ignored in (str(customers["ACENTE2"].pk), "abc", "9" * 40, "١"):
        form = desk.get("/teklif/yeni/kasko/", {"musteri": ignored}).context["form"]
        assert not form["customer"].value() and not form["owner_id"].value()


def test_no_customer_is_still_fine(desk, agents):
    """A customer is optional: the request is stored without one, as before customers existed."""
    assert desk.post("/teklif/yeni/trafik/", trafik()).status_code == 302
    assert QuoteRequest.objects.get().customer is None


def test_service_refuses_another_agencys_customer_and_a_mismatched_number(agents, customers):
    with pytest.raises(InputInvalid) as raised:
        quote_request_create(user=agents["ACENTE1"], product="trafik", data=trafik(), customer=customers["ACENTE2"])
    assert list(raised.value.errors) == ["customer"]
    with pytest.raises(InputInvalid) as raised:
        quote_request_create(
            user=agents["ACENTE1"], product="trafik", data=trafik(owner_id=OTHER_TCKN), customer=customers["ACENTE1"]
        )
    assert list(raised.value.errors) == ["owner_id"]
    assert not QuoteRequest.objects.exists()
