"""In a real browser: an agent adds a customer, then gets trafik quotes for them from their page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from customers.models import Customer
from quotes.models import QuoteRequest
from tests.browser.test_quote_desk import log_in, wait_for_every_answer
from tests.customers.conftest import OTHER_TCKN

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]


def test_agent_adds_a_customer_and_gets_a_quote_for_them(page, shot, sandbox, desk_agent):
    """The customer's page links to a quote form with the customer picked and their number filled in."""
    log_in(page, desk_agent.username)
    page.goto("/musteriler/")
    page.get_by_role("link", name="Yeni müşteri", exact=True).click()
    expect(page.get_by_role("heading", name="Yeni müşteri")).to_be_visible()
    page.get_by_label("Ad soyad / unvan").fill("Ayşe Yılmaz")
    page.get_by_label("T.C. Kimlik / Vergi No").fill("100 000 001 47")  # checksum off: an error first
    page.get_by_label("Telefon").fill("0532 123 45 67")
    page.get_by_label("KVKK onay zamanı").fill("2026-01-15T10:30")
    page.get_by_role("button", name="Kaydet").click()
    expect(page.locator("#id_identity_no_error")).to_contain_text("Geçersiz T.C. kimlik")
    expect(page.locator("#id_kvkk_consent_channel_error")).to_contain_text("onay şekli")
    shot(page, "customer-errors")
    page.get_by_label("T.C. Kimlik / Vergi No").fill(OTHER_TCKN)
    page.get_by_label("KVKK onay şekli").select_option(label="Islak imzalı form")
    page.get_by_role("button", name="Kaydet").click()
    expect(page.get_by_role("heading", name="Ayşe Yılmaz")).to_be_visible()
    expect(page.get_by_text("100******46")).to_be_visible()
    shot(page, "customer-page")
    customer = Customer.objects.get(identity_no=OTHER_TCKN)
    assert customer.phone == "+905321234567" and customer.kvkk_consent_channel == "wet_signature"

    page.get_by_role("link", name="Trafik teklifi al").click()
    expect(page.locator("#id_customer")).to_have_value(str(customer.pk))
    expect(page.get_by_label("Müşteri", exact=True)).to_have_value("Ayşe Yılmaz · 100******46")
    expect(page.get_by_label("T.C. Kimlik / Vergi No")).to_have_value(OTHER_TCKN)
    expect(page.locator("#new-customer")).to_be_hidden()
    page.get_by_label("Plaka").fill("34 ABC 123")
    page.get_by_label("Ruhsat seri no").fill("AB123456")
    page.get_by_label("Kullanım tarzı").select_option(label="Hususi")
    shot(page, "quote-form")
    page.get_by_role("button", name="Teklif al").click()
    expect(page).to_have_url(re.compile(r"/talepler/[0-9a-f-]{36}/$"))
    wait_for_every_answer(page)
    request = QuoteRequest.objects.get(public_id=page.url.rstrip("/").rsplit("/", 1)[-1])
    assert request.customer == customer and request.owner_id == OTHER_TCKN
    assert request.insurer_quotes.filter(state="SUCCEEDED").exists()

    page.goto(f"/musteriler/{customer.pk}/")
    expect(page.locator("#quote-requests").get_by_role("link", name="Sonuçlar")).to_have_attribute(
        "href", f"/talepler/{request.public_id}/"
    )
    shot(page, "customer-with-request")
