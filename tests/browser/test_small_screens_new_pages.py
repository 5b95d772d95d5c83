"""The desk's newer pages at a phone's 390 px and a laptop's 1366 px: nothing leaves the screen.

The same measure as `test_small_screens.py` (its `Fits`: the document no wider than the window,
no visible element past the window's edge or cut off by a clipping box, except inside a
scrolling `.table-wrap`; a screenshot of each page), on a manager's day with real data: the
customer's consent recorded on their page, the quote form's customer search box with its
matches open, a kasko quote with every option chosen (each insurer sells them, so every
insurer is priced), its results and the comparison with the option rows (one card per insurer
on a phone, each option named on its card), "Teklifi yeniden çalış", the request page's
"Müşteriye gönder" card after an SMS went (through the loopback Netgsm stand-in), the
customer's own browser on the public offer page with no login, the customer page's consent and
message cards, the production report with its SVG charts scaled inside the window, the
commissions page with a sub-agency's share, the staff page with sub-agencies, and a sub-agency
user's header carrying the sub-agency's long name.
"""

from __future__ import annotations

import importlib
import re

import pytest
from playwright.sync_api import Page, expect

from agencies.models import AgentProfile
from agencies.services import sub_agency_create
from commissions.services import commission_agreement_create, sub_agency_share_create
from customers.models import Customer
from customers.services import customer_create
from integrations.adapters.registry import registered_codes
from outreach.models import AgencyContact
from policies import periods
from tests import samples
from tests.outreach.netgsm_standin import netgsm_configured

from .conftest import AGENT_PASSWORD, TIMEOUT_MS, CspWatch
from .test_quote_desk import log_in, wait_for_every_answer
from .test_small_screens import (
    RESULTS_URL,
    SCREENS,
    Fits,
    assert_comparison_cards,
    assert_comparison_whole,
    assert_result_cards,
    assert_within_window,
    box,
)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]

SUB_AGENCY_NAME = "Kadıköy Bağdat Caddesi Şubesi Tali Acentesi"
SUB_AGENT = "kadikoy-bagdat-caddesi-tali-calisani"


@pytest.fixture
def consent_texts(transactional_db) -> None:
    """The seeded consent texts again: a transactional test before this one flushed the tables."""
    from django.apps import apps

    importlib.import_module("outreach.migrations.0002_seed_consent_texts").seed(apps, None)


@pytest.fixture
def netgsm(settings):
    with netgsm_configured(settings) as standin:
        yield standin


@pytest.fixture
def manager_day(desk_agent, consent_texts) -> dict:
    """ACENTE1's manager (`desk_agent`, made agency admin), a sub-agency with a long name and an
    agent of its own, the agreements for kasko at every insurer and the sub-agency's share, the
    agency's contact (on the public offer page) and a customer with long Turkish details."""
    AgentProfile.objects.filter(user=desk_agent).update(is_agency_admin=True)
    desk_agent.refresh_from_db()
    agency = desk_agent.agent_profile.agency
    sub_agency = sub_agency_create(admin=desk_agent, code="kadikoy-bagdat", name=SUB_AGENCY_NAME)
    sub_agency_create(admin=desk_agent, code="moda", name="Moda Sahil Yolu Tali Acentesi")
    from django.contrib.auth import get_user_model

    sub_agent = get_user_model().objects.create_user(SUB_AGENT, password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=sub_agent, agency=agency, sub_agency=sub_agency)
    first_of_month = periods.today().replace(day=1)
    for code in registered_codes():
        commission_agreement_create(
            user=desk_agent,
            insurer_code=code,
            product="kasko",
            rate="12.5",
            base="gross",
            effective_from=first_of_month,
        )
    sub_agency_share_create(user=desk_agent, sub_agency_id=sub_agency.pk, rate="60", effective_from=first_of_month)
    AgencyContact.objects.create(
        agency=agency,
        phone="0212 555 01 02",
        email="iletisim.merkez@uzun-bir-acente-alan-adi.com.tr",
        address="Büyükdere Caddesi No: 185 Kat: 12 Levent Mahallesi\nBeşiktaş / İstanbul",
    )
    customer = customer_create(
        user=desk_agent,
        data={
            "name": "Çağlar Gülşen Ağaoğlu Öztürk",
            "identity_no": samples.KASKO["owner_id"],
            "phone": "0533 765 43 21",
            "email": "caglar.gulsen.agaoglu.ozturk@uzun-bir-alan-adi.com.tr",
            "address": "Bağdat Caddesi No: 123/45 Kızıltoprak Mahallesi, Kadıköy / İstanbul",
        },
    )
    Customer.objects.create(agency=agency, name="Çağatay Şahinoğlu", identity_no="17291716060", created_by=desk_agent)
    return {"manager": desk_agent, "sub_agent": sub_agent, "customer": customer}


def assert_option_cards(page: Page) -> None:
    """Phone: each insurer's options on its own card, each cell named by its option (the row's
    heading is one for all insurers and hidden on a phone)."""
    rows = page.locator("table.compare tr.option")
    expect(rows).to_have_count(4)
    for row in range(rows.count()):
        name = rows.nth(row).locator("th").evaluate("th => th.firstChild.textContent").strip()
        cells = rows.nth(row).locator("td")
        for index in range(cells.count()):
            cell = cells.nth(index)
            assert_within_window(page, f"option {name} of insurer {index}", box(cell))
            label = cell.evaluate("td => getComputedStyle(td, '::before').content")
            assert label.strip('"') == name, f"option {name}'s cell is labelled {label}"


def assert_matches_open(page: Page) -> None:
    """The customer search's matches, open under the box, every one inside the window."""
    matches = page.locator("#customer-matches [role=option]")
    expect(matches).to_have_count(2)
    assert_within_window(page, "the match list", box(page.locator("#customer-matches")))
    for index in range(matches.count()):
        assert_within_window(page, f"match {index}", box(matches.nth(index)))


def assert_charts_scale(page: Page) -> None:
    """The report's SVG charts inside their cards and the window; on a phone drawn smaller than
    their own width rather than cut or scrolled."""
    charts = page.locator("svg.chart")
    expect(charts).to_have_count(2)
    for index in range(charts.count()):
        chart = charts.nth(index)
        where = box(chart)
        assert_within_window(page, f"chart {index}", where)
        card = chart.locator("xpath=ancestor::div[contains(@class, 'card')][1]")
        inner = card.evaluate(
            "el => { const r = el.getBoundingClientRect(), s = getComputedStyle(el);"
            " return [r.left + parseFloat(s.paddingLeft), r.right - parseFloat(s.paddingRight)]; }"
        )
        assert where["x"] >= inner[0] - 0.5 and where["x"] + where["width"] <= inner[1] + 0.5, (
            f"chart {index} at {where} leaves its card's {inner}"
        )
        drawn = chart.evaluate("svg => svg.viewBox.baseVal.width")
        if where["width"] < drawn:  # scaled down: the height follows (no squashed bars)
            ratio = chart.evaluate("svg => svg.viewBox.baseVal.height / svg.viewBox.baseVal.width")
            assert abs(where["height"] - where["width"] * ratio) < 2, f"chart {index} is squashed: {where}"
        for bar in chart.locator("rect.chart-bar").all():
            assert_within_window(page, f"a bar of chart {index}", bar.bounding_box())


@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_new_desk_page_fits_the_screen(page, shot, browser, live_server, sandbox, netgsm, manager_day, screen):
    """Consent, the customer box, kasko options, re-run, the offer sent and opened, the report,
    commissions, staff, a sub-agency user's header: nothing leaves the window."""
    page.set_viewport_size(SCREENS[screen])
    phone = screen == "phone"
    fits = Fits(page, shot, screen)
    manager, customer = manager_day["manager"], manager_day["customer"]
    log_in(page, manager.username)

    # The customer's SMS consent, recorded on their page.
    page.goto(f"/musteriler/{customer.pk}/")
    form = page.locator(".consent-form")
    form.get_by_label("Kanal").select_option(label="SMS")
    form.get_by_label("İşlem").select_option(label="İzin verdi")
    form.get_by_label("Alınma şekli").select_option(label="Telefon (ses kaydı)")
    form.get_by_role("button", name="İzni kaydet").click()
    expect(page.locator('.consent-states tr[data-channel="sms"] .consent-state')).to_have_text("İzin var")
    fits.check("customer-consent")

    # The kasko form: the customer found by typing "çağ" (two of the agency's), the list open.
    page.goto("/teklif/yeni/kasko/")
    customer_box = page.get_by_label("Müşteri", exact=True)
    customer_box.press_sequentially("çağ", delay=60)
    fits.holds("customer matches", assert_matches_open)
    fits.check("customer-matches")
    page.locator("#customer-matches [role=option]", has_text="Çağlar").click()
    expect(page.locator("#id_customer")).to_have_value(str(customer.pk))
    page.get_by_label("Plaka").fill("34 ABC 123")
    page.get_by_label("Ruhsat seri no").fill(samples.KASKO["registration_serial"])
    page.get_by_label("Kullanım tarzı").select_option(label="Hususi")
    page.get_by_label("Model yılı").fill(str(samples.KASKO["model_year"]))
    page.get_by_label("Marka kodu").fill(samples.KASKO["brand_code"])
    page.get_by_label("Tip kodu").fill(samples.KASKO["model_code"])
    # Options every sandbox insurer sells, so every insurer has a card and a column.
    page.get_by_label("Muafiyet", exact=True).select_option(label="5.000 TL")
    page.get_by_label("İkame araç", exact=True).select_option(label="7 gün")
    page.get_by_label("İMM limiti", exact=True).select_option(label="1.000.000 TL")
    page.get_by_label("Servis", exact=True).select_option(label="Anlaşmalı servis")
    fits.check("kasko-form-options")
    page.get_by_role("button", name="Teklif al").click()

    # The results with the options asked and the "Müşteriye gönder" card; the offer sent by SMS.
    expect(page).to_have_url(RESULTS_URL)
    results_url = page.url
    wait_for_every_answer(page)
    expect(page.locator('#results tr.result[data-state="SUCCEEDED"]')).to_have_count(len(sandbox))
    expect(page.locator("dd.chosen-option")).to_have_count(4)
    fits.check("results-options-offer-card")
    if phone:
        fits.holds("result cards", assert_result_cards)
    page.locator(".offer-send").get_by_role("button", name="SMS ile gönder").click()
    expect(page.locator(".offer-send [role=alert]")).to_contain_text("Teklif SMS ile gönderildi")
    expect(page.locator(".offer-send .outbound-messages")).to_contain_text("Gönderildi")
    fits.check("offer-sent")
    (sms,) = netgsm.state.received
    offer_path = re.search(r"(/teklif/[^\s/]+/)", sms.params["message"]).group(1)

    # The comparison with its option rows, then "Teklifi yeniden çalış".
    page.goto(results_url)
    page.get_by_role("link", name="Teklifleri teminatlarıyla karşılaştır").click()
    expect(page.get_by_role("heading", name="Kasko teklif karşılaştırması")).to_be_visible()
    expect(page.locator("table.compare tr.option")).to_have_count(4)
    fits.check("comparison-options")
    fits.holds("comparison", assert_comparison_cards if phone else assert_comparison_whole)
    if phone:
        fits.holds("option cards", assert_option_cards)
    page.get_by_role("link", name="Teklifi yeniden çalış").click()
    expect(page.get_by_role("heading", name="Teklifi yeniden çalış")).to_be_visible()
    expect(page.get_by_label("Muafiyet", exact=True)).to_have_value("5000")
    fits.check("rerun-form")

    # Issue the cheapest, so the report and the commissions have a policy of the month.
    page.go_back()
    page.locator("table.compare tr.issue-row td").first.get_by_role("link", name="Poliçeleştir").click()
    page.get_by_role("button", name="Onayla ve poliçeleştir").click()
    expect(page.locator(".policy-no")).to_have_text(re.compile(r"\S+"))

    # The customer page: the consent card with its history, the messages sent.
    page.goto(f"/musteriler/{customer.pk}/")
    expect(page.locator(".consent-history")).to_contain_text("Telefon (ses kaydı)")
    expect(page.locator(".outbound-messages")).to_contain_text("Gönderildi")
    fits.check("customer-consent-messages")

    # The manager's pages: the report with its charts, commissions with the share, the staff.
    page.locator("header").get_by_role("link", name="Üretim raporu").click()
    expect(page.get_by_role("heading", name=re.compile("Üretim raporu"))).to_be_visible()
    expect(page.locator('#report-total [data-figure="policies"]')).to_have_text("1")
    fits.check("production-report")
    fits.holds("report charts", assert_charts_scale)
    page.locator("header").get_by_role("link", name="Komisyonlar").click()
    fits.holds("commissions title", lambda p: expect(p).to_have_title("Komisyon anlaşmaları · InsureHub"))
    expect(page.locator("tr[data-share-id]")).to_contain_text(SUB_AGENCY_NAME)
    fits.check("commissions-shares")
    page.locator("header").get_by_role("link", name="Çalışanlar").click()
    expect(page.locator("main")).to_contain_text(SUB_AGENCY_NAME)
    fits.check("staff-sub-agencies")

    # The customer's own phone or laptop: the public offer page, no session of the desk.
    other = browser.new_context(
        base_url=live_server.url, locale="tr-TR", timezone_id="Europe/Istanbul", viewport=SCREENS[screen]
    )
    other.set_default_timeout(TIMEOUT_MS)
    watch = CspWatch(other)
    try:
        customer_page = other.new_page()
        customer_page.goto(offer_path)
        expect(customer_page.get_by_role("heading", name="Kasko sigorta teklifiniz")).to_be_visible()
        customer_fits = Fits(customer_page, shot, screen)
        customer_fits.check("public-offer")
        fits.escapes += customer_fits.escapes
        watch.assert_clean()
    finally:
        other.close()

    # A sub-agency user: their header names the sub-agency, and still fits.
    page.get_by_role("button", name="Çıkış").click()
    page.context.clear_cookies()
    log_in(page, SUB_AGENT)
    expect(page.locator("header .who")).to_contain_text(SUB_AGENCY_NAME)
    fits.check("sub-agency-header")
    page.locator("header").get_by_role("link", name="Müşteriler").click()
    expect(page.locator("main h1")).to_be_visible()
    fits.check("sub-agency-customers")
    fits.assert_clean()
