"""An agent's day in a real browser, through the pages only: a new customer, kasko quotes from
every insurer, the comparison and its PDF, issuing the cheapest, the policy's PDF fetched in the
background and downloaded, the notifications, and the renewal re-quote when the policy ends soon.

The worker is the real django-q2 cluster (`qcluster`): it asks the insurers, issues, and fetches
the document (sent by the issuance after its commit); nothing here calls a service except the
setup (agency, agent, insurer accounts) and moving the policy's end date near, which only time
would do otherwise.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django_q.tasks import async_task, result
from playwright.sync_api import Download, Page, expect

from customers.models import Customer
from policies import periods
from policies.models import Policy
from quotes.models import QuoteRequest
from tests import samples

from .test_quote_desk import log_in, premiums_on_page, wait_for_every_answer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]

CUSTOMER_NAME = "Mehmet Kaya"
CUSTOMER_TCKN = samples.TRAFIK["owner_id"]
RESULTS_URL = re.compile(r"/talepler/[0-9a-f-]{36}/$")
# Insurers print the PDF a little after issuing: the first fetch hears "not ready yet" and the
# record waits for the work pump, as in production.
DOCUMENT_DELAY_SECONDS = 4
# One run of the pump task the "İş pompası" schedule starts every minute, shortened: long enough
# for the wait to pass, short enough not to hold a test worker much past this test.
PUMP_SECONDS = 15


@pytest.fixture
def start_pump() -> Iterator[Callable[[], str]]:
    """Starts the pump on the session's qcluster; the test ends only once it has ended.

    A pump left running works the next tests' records: in CI it re-sent the dispatch of
    test_live_results.py's request, whose answers that test stores itself.
    """
    started: list[str] = []

    def start() -> str:
        started.append(async_task("work.tasks.work_pump", PUMP_SECONDS))
        return started[-1]

    yield start
    for task_id in started:
        assert result(task_id, wait=(PUMP_SECONDS + 30) * 1000) is not None, f"pump task {task_id} did not end"


def downloaded_bytes(download: Download) -> bytes:
    return Path(download.path()).read_bytes()


def request_of(page: Page) -> QuoteRequest:
    return QuoteRequest.objects.get(public_id=page.url.rstrip("/").rsplit("/", 1)[-1])


def add_customer(page: Page) -> Customer:
    page.get_by_role("link", name="Müşteriler").first.click()
    page.get_by_role("link", name="Yeni müşteri", exact=True).click()
    expect(page).to_have_url(re.compile(r"/musteriler/yeni/$"))
    page.get_by_label("Ad soyad / unvan").fill(CUSTOMER_NAME)
    page.get_by_label("T.C. Kimlik / Vergi No").fill(CUSTOMER_TCKN)
    page.get_by_label("Telefon").fill("0533 765 43 21")
    page.get_by_label("KVKK onay zamanı").fill("2026-01-15T10:30")
    page.get_by_label("KVKK onay şekli").select_option(label="Islak imzalı form")
    page.get_by_role("button", name="Kaydet").click()
    expect(page.get_by_role("heading", name=CUSTOMER_NAME)).to_be_visible()
    return Customer.objects.get(identity_no=CUSTOMER_TCKN)


def request_kasko_for_customer(page: Page, customer: Customer) -> QuoteRequest:
    page.get_by_role("link", name="Kasko teklifi al").click()
    expect(page.locator("#id_customer")).to_have_value(str(customer.pk))
    expect(page.get_by_label("Müşteri", exact=True)).to_have_value(f"{CUSTOMER_NAME} · 100******46")
    expect(page.get_by_label("T.C. Kimlik / Vergi No")).to_have_value(CUSTOMER_TCKN)
    page.get_by_label("Plaka").fill("34 ABC 123")
    page.get_by_label("Ruhsat seri no").fill(samples.KASKO["registration_serial"])
    page.get_by_label("Kullanım tarzı").select_option(label="Hususi")
    page.get_by_label("Model yılı").fill(str(samples.KASKO["model_year"]))
    page.get_by_label("Marka kodu").fill(samples.KASKO["brand_code"])
    page.get_by_label("Tip kodu").fill(samples.KASKO["model_code"])
    page.get_by_role("button", name="Teklif al").click()
    expect(page).to_have_url(RESULTS_URL)
    return request_of(page)


def sandbox_pdf(sandbox: dict, policy: Policy) -> bytes:
    """The PDF the insurer's sandbox serves for this policy, read from its ledger directly."""
    server = sandbox[policy.insurer.code]
    return server.state.ledger.document(
        {"policy_no": policy.policy_no},
        agency=policy.agency.code,
        known_only=True,
        insurer_name=server.insurer.document_name,
    )


def test_agent_day_customer_quote_compare_issue_document_renewal(page, shot, sandbox, desk_agent, start_pump):
    """Customer → kasko quotes → comparison (+PDF) → issue the cheapest → policy PDF → renewal re-quote."""
    log_in(page, desk_agent.username)

    # 1. A new customer, with KVKK consent.
    customer = add_customer(page)
    assert customer.agency.code == "ACENTE1" and customer.phone == "+905337654321"
    expect(page.get_by_text("100******46")).to_be_visible()
    shot(page, "customer")

    # 2. Kasko quotes from the customer's page: every sandbox insurer answers.
    quote_request = request_kasko_for_customer(page, customer)
    assert quote_request.customer_id == customer.pk and quote_request.product == "kasko"
    wait_for_every_answer(page)
    rows = page.locator("tr.result")
    expect(rows).to_have_count(len(sandbox))
    expect(page.locator('tr.result[data-state="SUCCEEDED"]')).to_have_count(len(sandbox))
    premiums = premiums_on_page(page)
    assert premiums == sorted(premiums) and len(premiums) == len(sandbox)
    cheapest_code = rows.first.get_attribute("data-insurer")
    shot(page, "kasko-answers")

    # The comparison: the cheapest column marked, coverages side by side, and its PDF.
    page.get_by_role("link", name="Teklifleri teminatlarıyla karşılaştır").click()
    expect(page).to_have_url(re.compile(r"/karsilastir/$"))
    expect(page.get_by_role("heading", name="Kasko teklif karşılaştırması")).to_be_visible()
    expect(page.locator(".card").first).to_contain_text(CUSTOMER_NAME)
    columns = page.locator("table.compare thead th[data-insurer]")
    expect(columns).to_have_count(len(sandbox))
    marked = page.locator("table.compare thead th.cheapest")
    expect(marked).to_have_count(1)
    expect(marked).to_contain_text("En uygun")
    expect(marked).to_have_attribute("data-insurer", cheapest_code)
    collision = page.locator('tr.coverage[data-coverage="collision"]')
    expect(collision.locator("th")).to_have_text("Çarpışma")
    shot(page, "comparison")
    with page.expect_download() as pdf_download:
        page.get_by_role("link", name="PDF indir").click()
    comparison_pdf = downloaded_bytes(pdf_download.value)
    assert comparison_pdf.startswith(b"%PDF"), comparison_pdf[:40]
    assert pdf_download.value.suggested_filename.endswith(".pdf")

    # 3. Issue the cheapest, from its column on the comparison.
    for server in sandbox.values():
        server.state.configure(document_delay_seconds=DOCUMENT_DELAY_SECONDS)
    codes = columns.evaluate_all("cells => cells.map(c => c.dataset.insurer)")
    issue_cells = page.locator("table.compare tr.no-print td")
    issue_cells.nth(codes.index(cheapest_code)).get_by_role("link", name="Poliçeleştir").click()
    expect(page.get_by_role("heading", name="Poliçeleştirme onayı")).to_be_visible()
    expect(page.locator("dd.premium")).to_contain_text("₺")
    token = page.get_by_label("Ödeme belirteci")
    if not token.input_value():
        token.fill(samples.PAYMENT_TOKEN)
    shot(page, "confirm")
    page.get_by_role("button", name="Onayla ve poliçeleştir").click()
    policy_no_shown = page.locator(".policy-no")
    expect(policy_no_shown).to_have_text(re.compile(r"\S+"))
    policy_no = policy_no_shown.inner_text().strip()
    shot(page, "issued")
    policy = Policy.objects.select_related("insurer", "agency").get(policy_no=policy_no)
    assert policy.insurer.code == cheapest_code and policy.customer_id == customer.pk
    assert policy.premium == Decimal(premiums[0])
    assert sandbox[cheapest_code].state.counts()["issued_total"] == 1

    # 4. The policy's page: the PDF arrives in the background, and is the insurer's own.
    page.get_by_role("link", name="Poliçeler").first.click()
    policy_row = page.locator(f'tr.policy[data-policy-no="{policy_no}"]')
    expect(policy_row).to_contain_text(CUSTOMER_NAME)
    policy_row.get_by_role("link", name=policy_no).click()
    expect(page.get_by_role("heading", name=f"Poliçe {policy_no}")).to_be_visible()
    status = page.locator(f"#document-status-{policy.pk}")
    # Fetched once already (sent by the issuance after its commit): the insurer said "not ready".
    expect(status).to_have_attribute("data-state", "PENDING")
    expect(status).to_contain_text("Hazırlanıyor…")
    shot(page, "policy-document-preparing")
    start_pump()  # what the schedule would start within the minute
    download_link = page.get_by_role("link", name="İndir (PDF)")
    expect(download_link).to_be_visible()
    shot(page, "policy-document-ready")
    with page.expect_download() as document_download:
        download_link.click()
    document = downloaded_bytes(document_download.value)
    assert document.startswith(b"%PDF"), document[:40]
    expected = sandbox_pdf(sandbox, policy)
    assert hashlib.sha256(document).hexdigest() == hashlib.sha256(expected).hexdigest()
    assert sandbox[cheapest_code].state.counts()["received"]["policy_document"] >= 2  # "not ready", then the PDF

    page.get_by_role("link", name=re.compile("^Bildirimler")).click()
    expect(page.get_by_role("heading", name="Bildirimler")).to_be_visible()
    notifications = page.locator("tr.notification")
    expect(notifications.filter(has_text=f"poliçesi düzenlendi: {policy_no}")).to_have_count(1)
    expect(notifications.filter(has_text=f"Poliçe belgesi hazır: {policy_no}")).to_have_count(1)
    shot(page, "notifications")

    # 5. A year on (setup: only time would do this): the policy ends in ten days.
    ends_on = periods.today() + timedelta(days=10)
    Policy.objects.filter(pk=policy.pk).update(ends_on=ends_on)
    page.get_by_role("link", name="Yenilemeler").first.click()
    expect(page.get_by_role("heading", name="Yenilemesi yaklaşanlar")).to_be_visible()
    renewal = page.locator(f'tr.renewal[data-policy-no="{policy_no}"]')
    expect(renewal).to_contain_text("10 gün")
    expect(renewal).to_contain_text(CUSTOMER_NAME)
    shot(page, "renewals")
    renewal.get_by_role("button", name="Yeniden teklif al").click()
    expect(page).to_have_url(RESULTS_URL)
    renewed = request_of(page)
    assert renewed.pk != quote_request.pk
    expect(page.get_by_role("heading", name="Kasko teklifleri")).to_be_visible()
    expect(page.locator('tr.result[data-state="SUCCEEDED"]').first).to_be_visible()
    wait_for_every_answer(page)
    expect(page.locator('tr.result[data-state="SUCCEEDED"]')).to_have_count(len(sandbox))
    shot(page, "renewal-answers")
    assert renewed.customer_id == customer.pk and renewed.starts_on == ends_on  # starts as the old one ends
    assert renewed.input_data == {**quote_request.input_data, "starts_on": ends_on.isoformat()}
    page.get_by_role("link", name="Teklifleri teminatlarıyla karşılaştır").click()
    expect(page.locator(".card").first).to_contain_text(CUSTOMER_NAME)
    page.get_by_role("link", name="Müşteriler").first.click()
    page.locator("tr", has_text=CUSTOMER_NAME).get_by_role("link", name="Aç").click()
    expect(page.locator("#quote-requests tbody tr")).to_have_count(2)
    expect(page.locator("#renewals")).to_contain_text(policy_no)
    shot(page, "customer-end-of-day")
