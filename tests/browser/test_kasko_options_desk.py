"""In a real browser, against a real worker and the sandbox insurers: the agent finds the customer
by typing part of a Turkish name, asks kasko quotes with options, reads on the results which
insurer does not sell one, compares what each price includes, then re-runs the quote with other
options, the form filled in with the previous ones."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from customers.models import Customer
from quotes.forms import CUSTOMER_AMBIGUOUS_MESSAGE
from quotes.models import InsurerQuote, QuoteRequest
from tests import samples

from .conftest import TIMEOUT_MS
from .test_quote_desk import log_in, wait_for_every_answer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]

RESULTS_URL = re.compile(r"/talepler/[0-9a-f-]{36}/$")


def request_of(page: Page) -> QuoteRequest:
    return QuoteRequest.objects.get(public_id=page.url.rstrip("/").rsplit("/", 1)[-1])


def option_row(page: Page, name: str):
    return page.locator(f'tr.option[data-option="{name}"]')


@pytest.fixture
def caglar(desk_agent) -> Customer:
    """ÇAĞLAR of the agent's agency, a namesake at the other agency, and someone else."""
    from agencies.models import Agency

    own = desk_agent.agent_profile.agency
    Customer.objects.create(agency=own, name="Ayşe Demir", identity_no="17291716060", created_by=desk_agent)
    Customer.objects.create(agency=Agency.objects.get(code="ACENTE2"), name="ÇAĞLAR BAŞKA", identity_no="10000000146")
    return Customer.objects.create(
        agency=own, name="ÇAĞLAR ÖZTÜRK", identity_no=samples.KASKO["owner_id"], created_by=desk_agent
    )


def test_customer_by_part_of_a_name_then_kasko_options_compared_and_rerun(page, shot, sandbox, desk_agent, caglar):
    log_in(page, desk_agent.username)
    page.goto("/teklif/yeni/kasko/")

    # The customer: "çağ" typed, the agency's ÇAĞLAR listed (never the other agency's), picked.
    box = page.get_by_label("Müşteri", exact=True)
    box.press_sequentially("çağ", delay=60)
    matches = page.locator("#customer-matches [role=option]")
    expect(matches).to_have_count(1)
    expect(matches.first).to_have_text("ÇAĞLAR ÖZTÜRK · 100******46")
    shot(page, "customer-matches")
    matches.first.click()
    expect(page.locator("#id_customer")).to_have_value(str(caglar.pk))
    expect(box).to_have_value("ÇAĞLAR ÖZTÜRK · 100******46")
    expect(page.locator("#customer-matches")).to_be_hidden()

    # The vehicle, and the options: a 10 000 TL deductible and an authorized shop, which not
    # every insurer sells.
    page.get_by_label("Plaka").fill("34 ABC 123")
    page.get_by_label("Ruhsat seri no").fill(samples.KASKO["registration_serial"])
    page.get_by_label("Kullanım tarzı").select_option(label="Hususi")
    page.get_by_label("Model yılı").fill(str(samples.KASKO["model_year"]))
    page.get_by_label("Marka kodu").fill(samples.KASKO["brand_code"])
    page.get_by_label("Tip kodu").fill(samples.KASKO["model_code"])
    page.get_by_label("Muafiyet", exact=True).select_option(label="10.000 TL")
    page.get_by_label("İkame araç", exact=True).select_option(label="7 gün")
    page.get_by_label("İMM limiti", exact=True).select_option(label="1.000.000 TL")
    page.get_by_label("Servis", exact=True).select_option(label="Yetkili servis")
    shot(page, "kasko-form")
    page.get_by_role("button", name="Teklif al").click()

    # The results: priced rows, and refusals saying which option the insurer does not sell.
    expect(page).to_have_url(RESULTS_URL)
    first = request_of(page)
    assert first.customer_id == caglar.pk and first.owner_id == caglar.identity_no
    assert first.input_data["deductible"] == 10000 and first.input_data["repair_shop"] == "authorized"
    wait_for_every_answer(page)
    refused = first.insurer_quotes.filter(state=InsurerQuote.State.FAILED).select_related("insurer")
    assert refused.exists() and first.insurer_quotes.filter(state=InsurerQuote.State.SUCCEEDED).exists()
    for row in refused:
        expect(page.locator(f'tr.result[data-insurer="{row.insurer.code}"]')).to_contain_text("satmıyor")
    shot(page, "results")

    # The comparison: each insurer's price with what it includes.
    page.get_by_role("link", name="Teklifleri teminatlarıyla karşılaştır").click()
    priced = first.insurer_quotes.filter(state=InsurerQuote.State.SUCCEEDED).count()
    expect(page.locator("table.compare thead th[data-insurer]")).to_have_count(priced)
    expect(option_row(page, "deductible").locator("td")).to_have_text(["10.000,00 ₺"] * priced)
    expect(option_row(page, "replacement_car_days").locator("td")).to_have_text(["7 gün"] * priced)
    expect(option_row(page, "liability_limit").locator("td")).to_have_text(["1.000.000,00 ₺"] * priced)
    expect(option_row(page, "repair_shop").locator("td")).to_have_text(["Yetkili servis"] * priced)
    shot(page, "comparison")

    # "Teklifi yeniden çalış": the previous options filled in; the agent changes two and asks again.
    page.get_by_role("link", name="Teklifi yeniden çalış").click()
    expect(page.get_by_role("heading", name="Teklifi yeniden çalış")).to_be_visible()
    expect(page.get_by_label("Muafiyet", exact=True)).to_have_value("10000")
    expect(page.get_by_label("Servis", exact=True)).to_have_value("authorized")
    expect(page.get_by_label("İkame araç", exact=True)).to_have_value("7")
    expect(page.get_by_label("Plaka")).to_have_value("34ABC123")
    expect(page.locator("#id_customer")).to_have_value(str(caglar.pk))
    page.get_by_label("Muafiyet", exact=True).select_option(label="5.000 TL")
    page.get_by_label("Servis", exact=True).select_option(label="Anlaşmalı servis")
    shot(page, "rerun-form")
    page.get_by_role("button", name="Teklif al").click()

    expect(page).to_have_url(RESULTS_URL)
    second = request_of(page)
    assert second.pk != first.pk and second.customer_id == caglar.pk
    assert (second.input_data["deductible"], second.input_data["repair_shop"]) == (5000, "contracted")
    wait_for_every_answer(page)
    page.get_by_role("link", name="Teklifleri teminatlarıyla karşılaştır").click()
    priced = second.insurer_quotes.filter(state=InsurerQuote.State.SUCCEEDED).count()
    assert priced > first.insurer_quotes.filter(state=InsurerQuote.State.SUCCEEDED).count()
    expect(option_row(page, "deductible").locator("td")).to_have_text(["5.000,00 ₺"] * priced)
    expect(option_row(page, "repair_shop").locator("td")).to_have_text(["Anlaşmalı servis"] * priced)
    shot(page, "rerun-comparison")


@pytest.fixture
def page_without_scripts(browser, live_server, shot) -> Iterator[Page]:
    """A browser with JavaScript off: the desk must still work as plain HTML forms."""
    context = browser.new_context(base_url=live_server.url, locale="tr-TR", java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    yield page
    shot(page, "end")
    context.close()


def test_without_scripts_the_customer_box_is_looked_up_on_submit(page_without_scripts, sandbox, desk_agent, caglar):
    """No list appears; "çağ" names two customers (a field error), "çağlar" one: the request is theirs."""
    page = page_without_scripts
    log_in(page, desk_agent.username)
    page.goto("/teklif/yeni/trafik/")
    Customer.objects.create(agency=caglar.agency, name="Ayşe Çağ", identity_no="12345678950", created_by=desk_agent)
    page.get_by_label("Müşteri", exact=True).fill("çağ")
    page.get_by_label("Plaka").fill("34 ABC 123")
    page.get_by_label("Ruhsat seri no").fill("AB123456")
    page.get_by_label("Kullanım tarzı").select_option(label="Hususi")
    page.get_by_role("button", name="Teklif al").click()
    expect(page.locator("#id_customer_error")).to_have_text(CUSTOMER_AMBIGUOUS_MESSAGE)
    page.get_by_label("Müşteri", exact=True).fill("çağlar")
    page.get_by_role("button", name="Teklif al").click()
    expect(page).to_have_url(RESULTS_URL)
    request = request_of(page)
    assert request.customer_id == caglar.pk and request.owner_id == caglar.identity_no
