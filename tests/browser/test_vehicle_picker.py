"""The kasko form's vehicle picker in a real browser: brand → type → year from the TSB list, the
kasko value shown, the codes filled in, and kasko quotes from every insurer, on a laptop and a phone.

The worker is the real django-q2 cluster; the list is the demo's sample (vehicles/sample/).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from insurehub.money import turkish_amount
from quotes.models import QuoteRequest
from tests import samples
from vehicles.models import KaskoValue, KaskoValueList
from vehicles.services import SAMPLE_FILE, SAMPLE_MONTH, kasko_value_list_import

from .test_quote_desk import log_in, premiums_on_page, wait_for_every_answer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]

KASKO_URL = "/teklif/yeni/kasko/"
RESULTS_URL = re.compile(r"/talepler/[0-9a-f-]{36}/$")
LAPTOP, PHONE = {"width": 1366, "height": 900}, {"width": 390, "height": 844}


@pytest.fixture
def sample_list(transactional_db) -> KaskoValueList:
    """The sample list as the current edition, committed: the live server and the worker read it."""
    return kasko_value_list_import(month=SAMPLE_MONTH, source_name=SAMPLE_FILE.name, content=SAMPLE_FILE.read_bytes())


def kasko_value_text(brand_code: str, type_code: str, year: int) -> str:
    value = KaskoValue.objects.get(brand_code=brand_code, type_code=type_code, model_year=year).value
    return f"{turkish_amount(value)} TL"


def fill_the_customer_and_car(page: Page) -> None:
    page.get_by_label("Plaka").fill("34 KSK 21")
    page.get_by_label("T.C. Kimlik / Vergi No").fill(samples.KASKO["owner_id"])
    page.get_by_label("Ruhsat seri no").fill(samples.KASKO["registration_serial"])
    page.get_by_label("Kullanım tarzı").select_option(label="Hususi")


def fits_the_screen(page: Page) -> bool:
    """Nothing sticks out sideways: the page scrolls down, never across."""
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366px", "390px"])
def test_agent_picks_brand_type_and_year_sees_the_value_and_gets_kasko_quotes(
    page, shot, sandbox, desk_agent, sample_list, viewport
):
    """Typed "fıat" finds FIAT, "egea 1.4" its Egeas, 2021 shows its value; the codes go to the insurers."""
    page.set_viewport_size(viewport)
    log_in(page, desk_agent.username)
    page.goto(KASKO_URL)
    picker = page.locator("[data-vehicle-picker]")
    expect(picker).to_be_visible()
    expect(picker).to_contain_text("Aralık 2026")
    fill_the_customer_and_car(page)

    # The brand, typed the Turkish way: the one match is chosen, and its code written into the form.
    page.get_by_label("Marka ara").fill("fıat")
    expect(page.get_by_label("Marka", exact=True)).to_have_value("012")
    expect(page.get_by_label("Marka kodu")).to_have_value("012")
    expect(page.locator("#vehicle-brand-status")).to_have_text("1 marka.")

    # The type: two Egeas have a 1.4 engine; the agent picks one.
    page.get_by_label("Tip ara").fill("egea 1.4")
    type_select = page.get_by_label("Tip", exact=True)
    expect(page.locator("#vehicle-type-status")).to_have_text("2 tip.")
    type_select.select_option(label="EGEA 1.4 FIRE URBAN")
    expect(page.get_by_label("Tip kodu")).to_have_value("345")

    # The year, with the value beside each; picking it shows the kasko value and fills the year.
    year_select = page.get_by_label("Yıl", exact=True)
    expect(year_select).to_be_enabled()
    value_2021 = kasko_value_text("012", "345", 2021)
    expect(year_select.locator("option", has_text=f"2021 · {value_2021}")).to_have_count(1)
    year_select.select_option("2021")
    expect(page.locator("#vehicle-value")).to_have_text(value_2021)
    expect(page.get_by_label("Model yılı")).to_have_value("2021")
    assert re.fullmatch(r"\d{1,3}(\.\d{3})*,\d{2} TL", value_2021)
    assert fits_the_screen(page)
    shot(page, "vehicle-picked")

    page.get_by_role("button", name="Teklif al").click()
    expect(page).to_have_url(RESULTS_URL)
    quote_request = QuoteRequest.objects.get(public_id=page.url.rstrip("/").rsplit("/", 1)[-1])
    assert quote_request.product == "kasko"
    assert {key: quote_request.input_data[key] for key in ("brand_code", "model_code", "model_year")} == {
        "brand_code": "012",
        "model_code": "345",
        "model_year": 2021,
    }
    wait_for_every_answer(page)
    expect(page.locator('tr.result[data-state="SUCCEEDED"]')).to_have_count(len(sandbox))
    assert len(premiums_on_page(page)) == len(sandbox)
    # Every insurer was asked for a kasko quote: at least once, since the worker's Çınar token may
    # be one an earlier test's sandbox issued, refused once and the call sent again with a new one.
    for server in sandbox.values():
        assert server.state.counts()["received"].get("kasko_quote", 0) >= 1
    shot(page, "kasko-answers")


def test_codes_typed_by_hand_are_followed_by_the_picker_and_an_unknown_one_is_a_field_error(
    page, shot, desk_agent, sample_list
):
    """The code fields stay the form: typed, the picker shows the vehicle; a code off the list is refused."""
    page.set_viewport_size(LAPTOP)
    log_in(page, desk_agent.username)
    page.goto(KASKO_URL)
    fill_the_customer_and_car(page)
    page.get_by_label("Model yılı").fill("2024")
    page.get_by_label("Tip kodu").fill("601")
    page.get_by_label("Marka kodu").fill("006")
    page.get_by_label("Marka kodu").press("Tab")
    expect(page.get_by_label("Marka", exact=True)).to_have_value("006")
    expect(page.get_by_label("Tip", exact=True)).to_have_value("601")
    expect(page.locator("#vehicle-value")).to_have_text(kasko_value_text("006", "601", 2024))
    shot(page, "codes-typed")

    page.get_by_label("Tip kodu").fill("999")
    page.get_by_label("Tip kodu").press("Tab")
    expect(page.locator("#vehicle-type-status")).to_have_text("Tip kodu 999 bu markada yok.")
    expect(page.locator("#vehicle-value")).to_have_text("—")
    page.get_by_role("button", name="Teklif al").click()
    expect(page.locator("#id_model_code_error")).to_have_text(
        "Tip kodu 999, BMW markasında yok (kasko değer listesi, Aralık 2026)."
    )
    assert QuoteRequest.objects.count() == 0
    # The form came back with the codes: the picker shows the brand again, and the bad type as missing.
    expect(page.get_by_label("Marka", exact=True)).to_have_value("006")
    expect(page.locator("#vehicle-type-status")).to_have_text("Tip kodu 999 bu markada yok.")
    shot(page, "unknown-type")
