"""DASK on the desk in Chromium: the UAVT code's address shown and confirmed, then the quotes,
at a laptop's width and a phone's."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from quotes.models import QuoteRequest
from sandbox.domain import address_for

from .test_quote_desk import log_in, wait_for_every_answer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]

WIDTHS = {"laptop": {"width": 1366, "height": 800}, "phone": {"width": 390, "height": 844}}


def fill_dask_form(page: Page, uavt_code: str) -> None:
    page.get_by_label("UAVT adres kodu").fill(uavt_code)
    page.get_by_label("Yapı tarzı").select_option(label="Betonarme / çelik karkas")
    page.get_by_label("İnşa yılı").fill("2005")
    page.get_by_label("Kat sayısı").fill("5")
    page.get_by_label("Brüt alan (m²)").fill("120")
    page.get_by_label("Hasar durumu").select_option(label="Hasarsız")
    page.get_by_label("T.C. Kimlik / Vergi No").fill("10000000146")


@pytest.mark.parametrize("width", WIDTHS)
def test_agent_confirms_the_address_then_gets_dask_quotes(page, shot, sandbox, desk_agent, width):
    page.set_viewport_size(WIDTHS[width])
    log_in(page, desk_agent.username)
    page.goto("/teklif/yeni/dask/")

    fill_dask_form(page, "9234567890")
    page.get_by_role("button", name="Adresi göster").click()
    expect(page.locator("#id_uavt_code_error")).to_have_text(
        "Bu UAVT adres koduyla kayıtlı bir bina bulunamadı. Kodu kontrol edin."
    )
    shot(page, "unknown-code")

    page.get_by_label("UAVT adres kodu").fill("1234567890")
    page.get_by_role("button", name="Adresi göster").click()
    address = page.locator("#dask-address [data-address]")
    expect(address).to_have_text(address_for("1234567890"))
    expect(page.get_by_role("button", name="Adres doğru, teklif al")).to_be_visible()
    assert QuoteRequest.objects.count() == 0
    shot(page, "address-shown")

    page.get_by_role("button", name="Adres doğru, teklif al").click()
    expect(page).to_have_url(re.compile(r"/talepler/[0-9a-f-]{36}/$"))
    wait_for_every_answer(page)
    expect(page.locator('tr.result[data-state="SUCCEEDED"]').first).to_be_attached()
    request = QuoteRequest.objects.get()
    assert request.product == "dask" and request.input_data["uavt_code"] == "1234567890"
    shot(page, "quotes")
