"""A manager's month in a real browser: the agency's agreements and a sub-agency's share set on
the commissions page, a policy issued through the desk by an agent and one by the sub-agency's
agent (credited to the sub-agency), the latter cancelled with the insurer's refund, and the
production report page and its Excel file showing the same numbers as the records.

Every insurer call is real HTTP to the sandbox; the session's qcluster issues and cancels.
One step goes around the pages: until the request services credit a request to its creator's
sub-agency themselves (the sub-agency scoping is built beside this), the sub-agency agent's
request is credited here from the profile, and only when it is not already.
"""

from __future__ import annotations

import io
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from openpyxl import load_workbook
from playwright.sync_api import Page, expect

from agencies.models import Agency, AgentProfile, SubAgency
from commissions.models import CommissionAgreement, PolicyCommission, SubAgencyShare
from integrations.adapters.registry import registered_codes
from policies import periods
from policies.models import Cancellation
from quotes.models import QuoteRequest
from quotes.templatetags.desk import try_money
from tests.conftest import AGENT_PASSWORD

from .test_policy_life import RESULTS_URL, policy_on_page, wait_for_cancellation
from .test_quote_desk import fill_trafik_form, log_in, open_cheapest_confirm, wait_for_every_answer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]

ZERO = Decimal("0.00")


@pytest.fixture
def people(desk_agent):
    """ACENTE1's manager, its agent (`desk_agent`), and a sub-agency with an agent of its own."""
    agency = Agency.objects.get(code="ACENTE1")
    manager = get_user_model().objects.create_user("patron-tarayici", password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=manager, agency=agency, is_agency_admin=True)
    sub_agency = SubAgency.objects.create(agency=agency, code="moda", name="Moda Tali Acente")
    sub_agent = get_user_model().objects.create_user("tali-tarayici", password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=sub_agent, agency=agency, sub_agency=sub_agency)
    return {"manager": manager, "agent": desk_agent, "sub_agent": sub_agent, "sub_agency": sub_agency}


def log_out(page: Page) -> None:
    page.get_by_role("button", name="Çıkış").click()
    page.context.clear_cookies()


def issue_trafik(page: Page, plate: str, *, credit_to: SubAgency | None = None):
    page.goto("/")
    fill_trafik_form(page)
    page.get_by_label("Plaka").fill(plate)
    page.get_by_role("button", name="Teklif al").click()
    expect(page).to_have_url(RESULTS_URL)
    if credit_to is not None:
        found = re.search(r"/talepler/([0-9a-f-]{36})/", page.url)
        assert found, page.url
        public_id = found.group(1)
        QuoteRequest.objects.filter(public_id=public_id, sub_agency__isnull=True).update(sub_agency=credit_to)
    wait_for_every_answer(page)
    open_cheapest_confirm(page)
    page.get_by_role("button", name="Onayla ve poliçeleştir").click()
    return policy_on_page(page)


def figure(page: Page, name: str):
    return page.locator(f'#report-total [data-figure="{name}"]')


def test_a_managers_month_agreements_sales_a_cancellation_and_the_report(page, shot, sandbox, people):
    today = periods.today()
    manager, agent, sub_agent, sub_agency = (people[k] for k in ("manager", "agent", "sub_agent", "sub_agency"))

    # 1. The manager sets the agreements (10 % of the gross trafik premium, every insurer) and the
    # sub-agency's share (60 % of the agency's commission) on the commissions page.
    log_in(page, manager.username)
    page.get_by_role("link", name="Komisyonlar").click()
    agreement_form = page.locator("#agreement-form")
    for code in registered_codes():
        agreement_form.get_by_label("Sigorta şirketi").select_option(code)
        agreement_form.get_by_label("Ürün").select_option("trafik")
        agreement_form.get_by_label("Komisyon oranı (%)").fill("10")
        agreement_form.get_by_label("Hesap tabanı").select_option("gross")
        agreement_form.get_by_label("Geçerlilik başlangıcı").fill(today.replace(day=1).isoformat())
        agreement_form.get_by_role("button", name="Kaydet").click()
        expect(page.locator("p.success")).to_contain_text("anlaşması kaydedildi")
    share_form = page.locator("#share-form")
    share_form.get_by_label("Tali acente").select_option(label="Moda Tali Acente")
    share_form.get_by_label("Pay oranı (acente komisyonunun %)").fill("60")
    share_form.get_by_label("Geçerlilik başlangıcı").fill(today.replace(day=1).isoformat())
    share_form.get_by_role("button", name="Payı kaydet").click()
    expect(page.locator("p.success")).to_contain_text("Moda Tali Acente payı kaydedildi")
    expect(page.locator("tr[data-share-id]")).to_contain_text("%60,00")
    shot(page, "agreements-and-share")
    assert CommissionAgreement.objects.count() == len(registered_codes())
    assert SubAgencyShare.objects.get().created_by == manager
    log_out(page)

    # 2. The agency's agent and the sub-agency's agent each issue a trafik policy on the desk.
    log_in(page, agent.username)
    own = issue_trafik(page, "34 URT 101")
    log_out(page)
    log_in(page, sub_agent.username)
    sold = issue_trafik(page, "34 URT 202", credit_to=sub_agency)
    assert (own.sold_by, own.sub_agency) == (agent, None)
    assert (sold.sold_by, sold.sub_agency) == (sub_agent, sub_agency)
    sold_accrual = PolicyCommission.objects.get(policy=sold, kind="accrual")
    assert sold_accrual.sub_agency_rate == Decimal("60.00") and sold_accrual.sub_agency_amount > 0

    # 3. The sub-agency's agent cancels theirs 91 days into its period; the insurer refunds.
    page.goto(f"/policeler/{sold.pk}/")
    page.get_by_role("link", name="Poliçeyi iptal et").click()
    page.get_by_label("İptal nedeni").select_option(label="Sigortalı talebi")
    page.get_by_label("İptal tarihi").fill((sold.starts_on + timedelta(days=91)).isoformat())
    page.get_by_role("button", name="İadeyi hesapla").click()
    expect(page.locator("p.refund-estimate")).to_be_visible()
    page.get_by_role("button", name="Poliçeyi iptal et").click()
    expect(page).to_have_url(re.compile(r"/iptaller/\d+/$"))
    cancellation = wait_for_cancellation(page, Cancellation.objects.get(policy=sold))
    log_out(page)

    # 4. The manager's report for the month: the records' numbers, the charts, the same Excel.
    log_in(page, manager.username)
    page.get_by_role("link", name="Üretim raporu").click()
    expect(page.get_by_role("heading", name=re.compile("Üretim raporu"))).to_be_visible()
    entries = list(PolicyCommission.objects.filter(policy__in=[own, sold]))
    premium = own.premium + sold.premium
    commission = sum((e.amount for e in entries if e.kind == "accrual"), ZERO)
    sub_part = sum((e.sub_agency_amount for e in entries if e.kind == "accrual"), ZERO)
    reversed_ = sum((e.amount for e in entries if e.kind == "reversal"), ZERO)
    assert reversed_ < 0
    expect(figure(page, "policies")).to_have_text("2")
    expect(figure(page, "premium")).to_have_text(try_money(premium))
    expect(figure(page, "commission")).to_have_text(try_money(commission))
    expect(figure(page, "sub_agency_commission")).to_have_text(try_money(sub_part))
    expect(figure(page, "agency_commission")).to_have_text(try_money(commission - sub_part))
    expect(figure(page, "cancellations")).to_have_text("1")
    expect(figure(page, "refunds")).to_have_text(try_money(cancellation.refund))
    expect(figure(page, "commission_reversed")).to_have_text(try_money(reversed_))
    expect(figure(page, "net_premium")).to_have_text(try_money(premium - cancellation.refund))
    expect(page.locator("svg.chart")).to_have_count(2)
    expect(page.locator("svg.chart rect.chart-bar").first).to_be_visible()
    sub_row = page.locator(f'table[data-breakdown="sub_agency"] tr[data-key="{sub_agency.pk}"]')
    expect(sub_row).to_contain_text("Moda Tali Acente")
    expect(sub_row.locator('[data-figure="premium"]')).to_have_text(try_money(sold.premium))
    expect(sub_row.locator('[data-figure="refunds"]')).to_have_text(try_money(cancellation.refund))
    agent_row = page.locator(f'table[data-breakdown="agent"] tr[data-key="{agent.pk}"]')
    expect(agent_row.locator('[data-figure="premium"]')).to_have_text(try_money(own.premium))
    shot(page, "report")

    with page.expect_download() as download_info:
        page.locator("#report-export").click()
    download = download_info.value
    assert download.suggested_filename.startswith("uretim-raporu-ACENTE1-")
    sheet = load_workbook(io.BytesIO(download.path().read_bytes())).active
    header = [cell.value for cell in sheet[1]]
    rows = [dict(zip(header, row, strict=False)) for row in sheet.iter_rows(min_row=2, values_only=True)]
    (total,) = [row for row in rows if row["Kırılım"] == "Toplam"]

    def money(value) -> Decimal:
        return Decimal(str(value)).quantize(Decimal("0.01"))

    assert total["Poliçe"] == 2 and total["İptal"] == 1
    assert money(total["Brüt prim (TL)"]) == premium
    assert money(total["Komisyon (TL)"]) == commission
    assert money(total["Tali acente komisyonu (TL)"]) == sub_part
    assert money(total["İade primi (TL)"]) == cancellation.refund
    assert money(total["Komisyon iadesi (TL)"]) == reversed_
    (sub_total,) = [row for row in rows if row["Kırılım"] == "Tali acente" and row["Değer"] == "Moda Tali Acente"]
    assert money(sub_total["Brüt prim (TL)"]) == sold.premium
