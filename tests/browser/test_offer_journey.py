"""In a real browser: the agent records the customer's SMS consent, sends the offer by SMS
(through the loopback Netgsm stand-in), and the customer opens the link in a browser of their
own, with no login, and downloads the PDF."""

from __future__ import annotations

import importlib
import re

import pytest
from playwright.sync_api import expect

from customers.models import Customer
from outreach.models import AgencyContact, ChannelConsent, OutboundMessage
from tests import samples
from tests.browser.conftest import CspWatch
from tests.browser.test_quote_desk import log_in
from tests.outreach.conftest import offered_request
from tests.outreach.netgsm_standin import netgsm_configured

pytestmark = pytest.mark.browser


@pytest.fixture
def consent_texts(transactional_db):
    """The seeded consent texts again: a transactional test before this one flushed the tables."""
    from django.apps import apps

    importlib.import_module("outreach.migrations.0002_seed_consent_texts").seed(apps, None)


@pytest.fixture
def netgsm(settings):
    with netgsm_configured(settings) as standin:
        yield standin


def test_consent_then_offer_by_sms_then_the_customer_opens_the_link(
    page, shot, browser, live_server, desk_agent, netgsm, consent_texts
):
    agency = desk_agent.agent_profile.agency
    AgencyContact.objects.create(agency=agency, phone="0212 555 01 02", email="iletisim@acente1.example")
    customer = Customer.objects.create(
        agency=agency,
        name="Ayşe Yılmaz",
        identity_no=samples.TRAFIK["owner_id"],
        phone="+905321234567",
        created_by=desk_agent,
    )
    request = offered_request(customer)

    log_in(page, desk_agent.username)
    page.goto(f"/talepler/{request.public_id}/#musteriye-gonder")
    section = page.locator(".offer-send")
    expect(section.locator('li[data-channel="sms"]')).to_contain_text("izin yok")
    section.get_by_role("button", name="SMS ile gönder").click()
    expect(page.locator(".offer-send [role=alert]")).to_contain_text("Müşterinin SMS izni yok")
    assert not netgsm.state.received
    shot(page, "refused-without-consent")

    section.get_by_role("link", name="İzinleri düzenle").click()
    form = page.locator(".consent-form")
    form.get_by_label("Kanal").select_option(label="SMS")
    form.get_by_label("İşlem").select_option(label="İzin verdi")
    form.get_by_label("Alınma şekli").select_option(label="Telefon (ses kaydı)")
    form.get_by_role("button", name="İzni kaydet").click()
    expect(page.get_by_role("status")).to_contain_text("SMS izni kaydedildi.")
    expect(page.locator('.consent-states tr[data-channel="sms"] .consent-state')).to_have_text("İzin var")
    expect(page.locator(".consent-history")).to_contain_text("Telefon (ses kaydı)")
    shot(page, "consent-recorded")
    assert ChannelConsent.objects.get(customer=customer).recorded_by == desk_agent

    page.goto(f"/talepler/{request.public_id}/karsilastir/")
    page.get_by_role("link", name="Müşteriye gönder").click()
    page.locator(".offer-send").get_by_role("button", name="SMS ile gönder").click()
    expect(page.locator(".offer-send [role=alert]")).to_contain_text("Teklif SMS ile gönderildi: 0532 *** ** 67")
    expect(page.locator(".outbound-messages")).to_contain_text("Gönderildi")
    shot(page, "sent")
    (sms,) = netgsm.state.received
    assert OutboundMessage.objects.get().provider_message_id == sms.answer.split()[1]
    path = re.search(r"(/teklif/[^\s/]+/)", sms.params["message"]).group(1)

    # The customer's phone: another browser profile, no session, no cookies of the desk.
    phone = browser.new_context(base_url=live_server.url, locale="tr-TR", timezone_id="Europe/Istanbul")
    watch = CspWatch(phone)
    try:
        customer_page = phone.new_page()
        customer_page.goto(path)
        expect(customer_page.get_by_role("heading", name="Trafik sigorta teklifiniz")).to_be_visible()
        expect(customer_page.locator(".plate")).to_have_text("34 ABC 123")
        expect(customer_page.locator(".offer-public")).to_contain_text("4.312,50 ₺")
        expect(customer_page.locator(".agency-contact")).to_contain_text("0212 555 01 02")
        assert samples.TRAFIK["owner_id"] not in customer_page.content()
        shot(customer_page, "customer-opens-link")
        with customer_page.expect_download() as download:
            customer_page.get_by_role("link", name="Teklifi PDF olarak indir").click()
        assert re.fullmatch(r"teklif-trafik-\d{8}\.pdf", download.value.suggested_filename)
        customer_page.goto(path.replace("/teklif/", "/teklif/x", 1))
        expect(customer_page.get_by_role("heading", name="Sayfa bulunamadı")).to_be_visible()
        watch.assert_clean()
    finally:
        phone.close()
