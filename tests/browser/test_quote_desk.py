"""The agent's desk in a real browser: quotes arriving live from a real worker, and issuing once."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from integrations.adapters.registry import registered_codes
from quotes.models import InsurerQuote, Issuance, QuoteRequest

from .conftest import AGENT_PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]

REFUSE_BOGAZICI = {"operation": "trafik_quote", "fault": "error", "code": "BS-300"}
THROTTLE_ANKA_ONCE = {"operation": "trafik_quote", "fault": "throttle", "wait_seconds": 1}


def log_in(page: Page, username: str) -> None:
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/giris/"))
    page.get_by_label("Kullanıcı adı").fill(username)
    page.get_by_label("Parola").fill(AGENT_PASSWORD)
    page.get_by_role("button", name="Giriş yap").click()
    expect(page.get_by_role("heading", name="Yeni teklif")).to_be_visible()


def fill_trafik_form(page: Page) -> None:
    page.get_by_label("Plaka").fill("34 ABC 123")
    page.get_by_label("T.C. Kimlik / Vergi No").fill("10000000146")
    page.get_by_label("Ruhsat seri no").fill("AB123456")
    page.get_by_label("Kullanım tarzı").select_option(label="Hususi")


def wait_for_every_answer(page: Page) -> None:
    expect(page.locator("#results")).to_have_attribute("data-complete", "true")


def premiums_on_page(page: Page) -> list[Decimal]:
    return [
        Decimal(p)
        for p in page.locator("tr.result[data-premium]").evaluate_all("rows => rows.map(r => r.dataset.premium)")
    ]


def request_trafik_quotes(page: Page) -> QuoteRequest:
    page.goto("/")
    fill_trafik_form(page)
    page.get_by_role("button", name="Teklif al").click()
    expect(page).to_have_url(re.compile(r"/talepler/[0-9a-f-]{36}/$"))
    public_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    return QuoteRequest.objects.get(public_id=public_id)


def open_cheapest_confirm(page: Page) -> InsurerQuote:
    first = page.locator("tr.result").first
    expect(first).to_have_attribute("data-state", "SUCCEEDED")
    first.get_by_role("link", name="Poliçeleştir").click()
    expect(page.get_by_role("heading", name="Poliçeleştirme onayı")).to_be_visible()
    found = re.search(r"/teklifler/(\d+)/policelestir/", page.url)
    assert found, page.url
    quote_pk = found.group(1)
    return InsurerQuote.objects.select_related("insurer").get(pk=quote_pk)


def test_agent_requests_trafik_and_issues_the_cheapest(page, shot, sandbox, desk_agent):
    """Quotes arrive live (one refusal, one throttled then answered), cheapest first; the cheapest is issued."""
    sandbox["bogazici"].state.add_faults([REFUSE_BOGAZICI])
    sandbox["anka"].state.add_faults([THROTTLE_ANKA_ONCE])

    log_in(page, desk_agent.username)
    shot(page, "logged-in")
    fill_trafik_form(page)
    page.get_by_label("Plaka").fill("34 ÇÇ 1")
    page.get_by_role("button", name="Teklif al").click()
    expect(page.locator("#id_plate_error")).to_have_text("Geçerli bir plaka girin (ör. 34 ABC 123).")
    shot(page, "plate-error")
    assert QuoteRequest.objects.count() == 0

    fill_trafik_form(page)
    shot(page, "trafik-form")
    page.get_by_role("button", name="Teklif al").click()
    expect(page).to_have_url(re.compile(r"/talepler/[0-9a-f-]{36}/$"))
    results = page.locator("#results")

    # Anka waits out its throttle (about a second) before answering: catch it retrying if we can.
    anka = page.locator('tr[data-insurer="anka"]')
    expect(anka).to_have_attribute("data-state", re.compile("RETRYING|SUCCEEDED"))
    if anka.get_attribute("data-state") == "RETRYING":
        expect(anka).to_contain_text(re.compile(r"Tekrar deneniyor \(\d/\d\)"))
        shot(page, "anka-retrying")

    wait_for_every_answer(page)
    shot(page, "all-answers")
    answered = len(registered_codes()) - 1  # every insurer but Boğaziçi, which refuses
    expect(results.locator('tr[data-state="SUCCEEDED"]')).to_have_count(answered)
    expect(page.locator('tr[data-insurer="bogazici"]')).to_contain_text("Araç teminata uygun değil")
    expect(anka).to_have_attribute("data-state", "SUCCEEDED")
    assert sandbox["anka"].state.counts()["received"]["trafik_quote"] == 2  # throttled once, then answered

    premiums = premiums_on_page(page)
    assert premiums == sorted(premiums) and len(premiums) == answered
    expect(page.locator("tr.result").first).to_contain_text("₺")

    quote = open_cheapest_confirm(page)
    assert quote.premium == premiums[0]
    expect(page.get_by_label("Ödeme belirteci")).to_have_value("tok_demo_4242")
    shot(page, "confirm")
    page.get_by_role("button", name="Onayla ve poliçeleştir").click()

    policy_no = page.locator(".policy-no")
    expect(policy_no).to_have_text(re.compile(r"\S+"))
    expect(page.get_by_text("Poliçe no:")).to_be_visible()
    shot(page, "policy-issued")
    issuance = Issuance.objects.get(insurer_quote=quote)
    assert issuance.state == "SUBMITTED" and policy_no.inner_text() == issuance.policy_no
    assert sandbox[quote.insurer.code].state.counts()["policies_by_quote"][quote.quote_no] == [issuance.policy_no]

    page.get_by_role("link", name="Poliçeler").first.click()
    expect(page.locator("main")).to_contain_text(issuance.policy_no)
    expect(page.locator("main")).to_contain_text("100******46")
    shot(page, "policy-list")
    page.get_by_role("link", name="Talepler").click()
    page.get_by_role("searchbox").fill("34 abc 123")
    page.get_by_role("button", name="Ara").click()
    expect(page.locator("main tbody tr")).to_have_count(1)
    expect(page.locator("main")).not_to_contain_text("10000000146")
    shot(page, "request-search")


def test_double_click_on_issue_makes_one_policy(page, shot, sandbox, desk_agent):
    """A double click on the final confirm button issues exactly one policy at the insurer."""
    log_in(page, desk_agent.username)
    request_trafik_quotes(page)
    wait_for_every_answer(page)
    quote = open_cheapest_confirm(page)
    shot(page, "confirm")

    page.get_by_role("button", name="Onayla ve poliçeleştir").dblclick()
    expect(page.locator(".policy-no")).to_have_text(re.compile(r"\S+"))
    shot(page, "policy-issued")

    issuance = Issuance.objects.get()
    assert issuance.insurer_quote_id == quote.pk
    assert sum(server.state.counts()["issued_total"] for server in sandbox.values()) == 1
    assert sandbox[quote.insurer.code].state.counts()["policies_by_quote"][quote.quote_no] == [issuance.policy_no]


def test_confirming_from_two_tabs_makes_one_policy(browser_context, page, shot, sandbox, desk_agent):
    """The confirm page open in two tabs, both submitted: one policy, and both tabs show its number."""
    log_in(page, desk_agent.username)
    request_trafik_quotes(page)
    wait_for_every_answer(page)
    quote = open_cheapest_confirm(page)
    second_tab = browser_context.new_page()
    second_tab.goto(page.url)
    confirm = "Onayla ve poliçeleştir"
    expect(second_tab.get_by_role("button", name=confirm)).to_be_enabled()

    page.get_by_role("button", name=confirm).click()
    second_tab.get_by_role("button", name=confirm).click()
    for tab in (page, second_tab):
        expect(tab.locator(".policy-no")).to_have_text(re.compile(r"\S+"))
    shot(second_tab, "second-tab")

    issuance = Issuance.objects.get()
    assert page.url == second_tab.url
    assert (
        page.locator(".policy-no").inner_text() == second_tab.locator(".policy-no").inner_text() == issuance.policy_no
    )
    assert sandbox[quote.insurer.code].state.counts()["issued_total"] == 1
    second_tab.close()


def test_silent_insurer_is_shown_as_no_answer_within_the_deadline(page, shot, sandbox, desk_agent):
    """An insurer that never answers does not hold the agent: the others show at once, it ends as "Yanıt alınamadı"."""
    sandbox["deniz"].state.add_faults([{"operation": "trafik_quote", "fault": "hang", "seconds": 7, "times": 5}])
    log_in(page, desk_agent.username)
    quote_request = request_trafik_quotes(page)
    expect(page.locator('tr[data-state="SUCCEEDED"]')).to_have_count(len(registered_codes()) - 1)
    expect(page.locator('tr[data-insurer="deniz"]')).to_contain_text(re.compile("Soruluyor|Tekrar deneniyor"))
    shot(page, "three-answers-deniz-waiting")

    wait_for_every_answer(page)
    finished_at = timezone.now()
    expect(page.locator('tr[data-insurer="deniz"]')).to_contain_text("Yanıt alınamadı")
    shot(page, "deniz-no-answer")
    # The deadline, plus at most one poll interval and a little rendering slack.
    assert finished_at <= quote_request.deadline_at + timedelta(seconds=2)
