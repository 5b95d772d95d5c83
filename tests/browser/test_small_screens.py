"""Every desk page at a phone's 390 px and a laptop's 1366 px: nothing leaves the screen.

The agent's journey runs on real answers (the sandbox insurers, asked by the real worker): a
customer, kasko quotes from the desk form, the results and the comparison, issuing the cheapest,
then the lists and detail pages that journey filled. On every page, measured in the page itself:
the document is no wider than the window, and no visible element reaches past the window's edge
or is cut off by a box that clips it, except inside a table's own scrolling box (`.table-wrap`),
the one place the desk scrolls sideways on purpose. At 390 px the results and the comparison are
one card per insurer, each with its price and its "Poliçeleştir" in reach; at 1366 px the
comparison shows every insurer's column whole. Each page's screenshot is kept
(test-artifacts/screenshots/).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from agencies.models import AgentProfile
from customers.models import Customer
from customers.services import customer_create
from integrations.adapters.registry import registered_codes
from policies import periods
from quotes.models import QuoteRequest
from tests import samples
from tests.quotes.policy_samples import issued_policy
from tests.quotes.request_samples import quote_request_being_asked, tasks_not_sent

from .test_dask_desk import fill_dask_form
from .test_live_results import store_quote
from .test_quote_desk import log_in, wait_for_every_answer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]

SCREENS = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1366, "height": 768}}
RESULTS_URL = re.compile(r"/talepler/[0-9a-f-]{36}/$")

# What leaves the screen, measured by the browser: the document wider than the window, and every
# rendered element past the window's edges or past a box that clips it (overflow other than
# visible). Inside a `.table-wrap` that scrolls, nothing is counted: the table scrolls there on
# purpose (the wrapper itself is, as every element).
ESCAPES_JS = """
() => {
  const width = window.innerWidth;
  const found = [];
  const root = document.documentElement;
  if (root.scrollWidth > width) found.push(`document: ${root.scrollWidth} px wide in a ${width} px window`);
  const scrollsOnPurpose = (el) => el.classList.contains("table-wrap")
    && ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  const name = (el) => {
    const text = (el.innerText || el.value || "").trim().replace(/\\s+/g, " ").slice(0, 40);
    const classes = el.classList.length ? "." + [...el.classList].join(".") : "";
    return `<${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${classes}> "${text}"`;
  };
  for (const el of document.body.querySelectorAll("*")) {
    if (!el.getClientRects().length || getComputedStyle(el).visibility !== "visible") continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    let onPurpose = false;
    let clippedBy = null;
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (scrollsOnPurpose(up)) { onPurpose = true; break; }
      if (!clippedBy && getComputedStyle(up).overflowX !== "visible") {
        const frame = up.getBoundingClientRect();
        if (box.right > frame.right + 0.5 || box.left < frame.left - 0.5) clippedBy = up;
      }
    }
    if (onPurpose) continue;
    if (box.right > width + 0.5 || box.left < -0.5) {
      found.push(`${name(el)} spans ${Math.round(box.left)}..${Math.round(box.right)} px of ${width}`);
    } else if (clippedBy) {
      found.push(`${name(el)} is cut off by ${name(clippedBy)}`);
    }
  }
  return found;
}
"""


class Fits:
    """Each page's screenshot, and what left the window on it; the journey goes on past a page
    that does not fit, so one run reports every page that does not."""

    def __init__(self, page: Page, shot, screen: str) -> None:
        self.page, self.shot, self.screen = page, shot, screen
        self.escapes: list[str] = []

    def check(self, step: str) -> None:
        self.page.wait_for_load_state("load")
        self.shot(self.page, f"{self.screen}-{step}")
        found = self.page.evaluate(ESCAPES_JS)
        if found:
            self.escapes.append(f"{step} at {SCREENS[self.screen]['width']} px: " + "; ".join(found[:8]))

    def holds(self, step: str, check) -> None:
        """A layout check of the page (its cards), reported with the rest."""
        try:
            check(self.page)
        except AssertionError as failure:
            self.escapes.append(f"{step} at {SCREENS[self.screen]['width']} px: {failure}")

    def assert_clean(self) -> None:
        assert not self.escapes, "\n".join(self.escapes)


def box(locator) -> dict:
    expect(locator).to_be_visible()
    return locator.bounding_box()


def assert_within_window(page: Page, what: str, where: Mapping[str, Any] | None) -> None:
    assert where is not None, f"{what} is not drawn"
    size = page.viewport_size
    assert size is not None  # every test here sets one
    width = size["width"]
    assert where["x"] >= -0.5 and where["x"] + where["width"] <= width + 0.5, f"{what} at {where} leaves {width} px"


def assert_result_cards(page: Page) -> None:
    """Phone: each insurer's result is a card of its own, the price and the issue button in it."""
    cards = page.locator("#results tr.result")
    expect(cards).to_have_count(len(registered_codes()))
    previous_bottom = None
    for index in range(cards.count()):
        card = cards.nth(index)
        code = card.get_attribute("data-insurer")
        where = box(card)
        assert_within_window(page, f"{code}'s card", where)
        if previous_bottom is not None:
            assert where["y"] >= previous_bottom - 0.5, f"{code}'s card is beside the previous one, not below it"
        previous_bottom = where["y"] + where["height"]
        if card.get_attribute("data-state") != "SUCCEEDED":
            continue
        expect(card.locator(".status")).to_contain_text("₺")
        assert_within_window(page, f"{code}'s price", box(card.locator(".status")))
        assert_within_window(page, f"{code}'s Poliçeleştir", box(card.get_by_role("link", name="Poliçeleştir")))


def assert_comparison_cards(page: Page) -> None:
    """Phone: the comparison reads as one card per insurer, stacked: its name, its price, its covers
    (each named), its validity and its issue button, all inside the window."""
    codes = page.locator("table.compare thead th[data-insurer]").evaluate_all(
        "cells => cells.map(c => c.dataset.insurer)"
    )
    assert sorted(codes) == sorted(registered_codes())
    previous_bottom = None
    for index, code in enumerate(codes):
        title = box(page.locator("table.compare thead th[data-insurer]").nth(index))
        price = box(page.locator("table.compare tr.premium td").nth(index))
        button = box(page.locator("table.compare tr.issue-row td").nth(index).get_by_role("link", name="Poliçeleştir"))
        for what, where in (("name", title), ("price", price), ("Poliçeleştir", button)):
            assert_within_window(page, f"{code}'s {what}", where)
        assert title["y"] < price["y"] < button["y"], f"{code}'s card is not read top to bottom"
        if previous_bottom is not None:
            assert title["y"] >= previous_bottom - 0.5, f"{code}'s card is beside the previous one, not below it"
        previous_bottom = button["y"] + button["height"]
        covers = page.locator("table.compare tr.coverage")
        expect(covers.first).to_be_attached()
        for row in range(covers.count()):
            cell = covers.nth(row).locator("td").nth(index)
            where = box(cell)
            assert_within_window(page, f"{code}'s cover {row}", where)
            assert price["y"] < where["y"] < button["y"], f"{code}'s cover {row} is outside its card"
            # The cover's name, on the cell itself (the row's own heading is one for all insurers).
            label = cell.evaluate("td => getComputedStyle(td, '::before').content")
            assert label.strip('"') == covers.nth(row).locator("th").inner_text().strip(), label


def assert_comparison_whole(page: Page) -> None:
    """Laptop: every insurer's column shown in full, nothing scrolled out of the comparison's box."""
    wrap = page.locator(".compare-wrap")
    widths = wrap.evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert widths[0] <= widths[1], f"the comparison is {widths[0]} px wide in a {widths[1]} px box"
    frame = box(wrap)
    for index in range(page.locator("table.compare thead th[data-insurer]").count()):
        for cell in (
            page.locator("table.compare thead th[data-insurer]").nth(index),
            page.locator("table.compare tr.issue-row td").nth(index),
        ):
            where = box(cell)
            assert where["x"] + where["width"] <= frame["x"] + frame["width"] + 0.5, f"column {index} cut off"


@pytest.fixture
def customer(desk_agent) -> Customer:
    return customer_create(
        user=desk_agent,
        data={
            "name": "Ayşe Gülşen Çağlayan Öztürk",
            "identity_no": samples.KASKO["owner_id"],
            "phone": "0533 765 43 21",
            "email": "ayse.gulsen.caglayan.ozturk@uzun-bir-alan-adi.com.tr",
            "address": "Bağdat Caddesi No: 123/45 Kızıltoprak Mahallesi, Kadıköy / İstanbul",
        },
    )


@pytest.fixture
def renewal_due(desk_agent, customer, monkeypatch) -> None:
    """A policy of the customer ending in 20 days, so the renewals list has a row (stored, not asked)."""
    with monkeypatch.context() as quiet:
        tasks_not_sent(quiet)
        issued_policy(
            desk_agent,
            "ANK-YENILEME-390",
            data={**samples.TRAFIK, "plate": "06BYZ42"},
            ends_on=periods.today() + timedelta(days=20),
            customer=customer,
        )


@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_desk_page_fits_the_screen(page, shot, sandbox, desk_agent, customer, renewal_due, screen):
    """Forms, DASK and kasko results, comparison, issuance, lists and detail pages, every link of the
    bar: nothing leaves the window."""
    page.set_viewport_size(SCREENS[screen])
    phone = screen == "phone"
    fits = Fits(page, shot, screen)
    # An agency admin: the longest bar, three links more than a plain agent's.
    AgentProfile.objects.filter(user=desk_agent).update(is_agency_admin=True)
    log_in(page, desk_agent.username)
    fits.check("trafik-form")
    page.goto("/teklif/yeni/dask/")
    fits.check("dask-form")
    fill_dask_form(page, samples.DASK_ADDRESS["uavt_code"])
    page.get_by_role("button", name="Adresi göster").click()
    expect(page.locator("#dask-address [data-address]")).to_be_visible()
    fits.check("dask-address")
    page.get_by_role("button", name="Adres doğru, teklif al").click()
    expect(page).to_have_url(RESULTS_URL)
    wait_for_every_answer(page)
    fits.check("dask-results")  # each answer carries the building's address, a long line
    if phone:
        fits.holds("dask result cards", assert_result_cards)

    page.goto(f"/musteriler/{customer.pk}/")
    fits.check("customer-detail-before")
    page.get_by_role("link", name="Kasko teklifi al").click()
    expect(page.get_by_label("T.C. Kimlik / Vergi No")).to_have_value(samples.KASKO["owner_id"])
    page.get_by_label("Plaka").fill("34 ABC 123")
    page.get_by_label("Ruhsat seri no").fill(samples.KASKO["registration_serial"])
    page.get_by_label("Kullanım tarzı").select_option(label="Hususi")
    page.get_by_label("Model yılı").fill(str(samples.KASKO["model_year"]))
    page.get_by_label("Marka kodu").fill(samples.KASKO["brand_code"])
    page.get_by_label("Tip kodu").fill(samples.KASKO["model_code"])
    fits.check("kasko-form")
    page.get_by_role("button", name="Teklif al").click()

    # The answers arrive on the page as they are stored, on the cards as on the table.
    expect(page).to_have_url(RESULTS_URL)
    wait_for_every_answer(page)
    expect(page.locator('#results tr.result[data-state="SUCCEEDED"]')).to_have_count(len(sandbox))
    fits.check("results")
    if phone:
        fits.holds("result cards", assert_result_cards)

    page.get_by_role("link", name="Teklifleri teminatlarıyla karşılaştır").click()
    expect(page.get_by_role("heading", name="Kasko teklif karşılaştırması")).to_be_visible()
    fits.check("comparison")
    fits.holds("comparison", assert_comparison_cards if phone else assert_comparison_whole)

    page.locator("table.compare tr.issue-row td").first.get_by_role("link", name="Poliçeleştir").click()
    expect(page.get_by_role("heading", name="Poliçeleştirme onayı")).to_be_visible()
    fits.check("issuance-confirm")
    page.get_by_role("button", name="Onayla ve poliçeleştir").click()
    policy_no = page.locator(".policy-no")
    expect(policy_no).to_have_text(re.compile(r"\S+"))
    fits.check("issuance-detail")
    issued = policy_no.inner_text().strip()

    page.get_by_role("link", name="Talepler").first.click()
    expect(page.locator("main tbody tr")).to_have_count(QuoteRequest.objects.count())
    fits.check("request-list")
    page.get_by_role("link", name="Poliçeler").first.click()
    expect(page.locator(f'tr.policy[data-policy-no="{issued}"]')).to_be_visible()
    fits.check("policy-list")
    page.get_by_role("link", name=issued).click()
    expect(page.get_by_role("heading", name=f"Poliçe {issued}")).to_be_visible()
    fits.check("policy-detail")
    page.get_by_role("link", name="Müşteriler").first.click()
    expect(page.locator("main tbody tr")).to_contain_text(customer.name)
    fits.check("customer-list")
    page.locator("main tbody tr").get_by_role("link", name="Aç").click()
    expect(page.locator("#policies")).to_contain_text(issued)
    fits.check("customer-detail")
    page.goto("/musteriler/yeni/")
    fits.check("customer-form")
    page.get_by_role("link", name="Yenilemeler").first.click()
    expect(page.locator("tr.renewal")).to_have_count(1)
    fits.check("renewals")
    # The rest of the bar's pages, an agency admin's included.
    for link, step in (
        ("Mükerrer poliçeler", "duplicates"),
        ("Çalışanlar", "agents"),
        ("Komisyonlar", "commissions"),
        ("Portföy aktar", "portfolio-upload"),
        ("Bildirimler", "notifications"),
    ):
        page.locator("header").get_by_role("link", name=re.compile(f"^{link}")).click()
        expect(page.locator("main h1")).to_be_visible()
        fits.check(step)
    fits.assert_clean()


def test_answers_arrive_on_the_phone_cards(page, shot, desk_agent, monkeypatch):
    """At 390 px the stream still brings each answer: a card appears with its price and issue button."""
    request = quote_request_being_asked(desk_agent, monkeypatch)
    page.set_viewport_size(SCREENS["phone"])
    log_in(page, desk_agent.username)
    page.goto(f"/talepler/{request.public_id}/")
    results = page.locator("#results")
    expect(results).to_have_attribute("data-streaming", "1")
    page.evaluate("() => { window.sameDocument = true; }")
    codes = sorted(registered_codes())
    store_quote(request, codes[0], "3999.90")
    first = page.locator(f'#results tr.result[data-insurer="{codes[0]}"]')
    expect(first).to_have_attribute("data-state", "SUCCEEDED")
    expect(first.locator(".status")).to_contain_text("3.999,90 ₺")
    assert_within_window(page, "the first answer's Poliçeleştir", box(first.get_by_role("link", name="Poliçeleştir")))
    shot(page, "phone-first-answer")
    for index, code in enumerate(codes[1:], start=1):
        store_quote(request, code, f"{4000 + index}.00")
    expect(results).to_have_attribute("data-complete", "true")
    assert page.evaluate("() => window.sameDocument") is True
    assert {entry["via"] for entry in page.evaluate("() => window.insurehubRowsSeen").values()} == {"stream"}
    fits = Fits(page, shot, "phone")
    fits.check("all-answers")
    assert_result_cards(page)
    fits.assert_clean()
