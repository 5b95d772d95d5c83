"""The production report: its numbers agree with the policy list and the cancellations to the
kuruş (page, Excel file and API alike), the renewal rate, the filters, and who may read it."""

from __future__ import annotations

import io
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone
from openpyxl import load_workbook

from agencies.models import Agency, AgentProfile
from commissions import production_report as report_service
from commissions.models import PolicyCommission
from insurehub.errors import Invalid
from insurehub.money import turkish_amount
from policies.models import Cancellation, Policy
from policies.services import cancellations as cancellation_service
from policies.services.imports import policies_import
from quotes import selectors as quote_selectors
from tests import samples
from tests.conftest import AGENT_PASSWORD
from tests.policies.conftest import run_to_the_end
from work.item import WorkState

from .conftest import agreement, issued_by, share

pytestmark = pytest.mark.django_db

ZERO = Decimal("0.00")


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def period() -> tuple[date, date]:
    """This month from its first day, and 40 days on: today's issues and the renewals they make."""
    today = timezone.localdate()
    return today.replace(day=1), today + timedelta(days=40)


@pytest.fixture
def month(agents, sandbox, quick_cancel_policy, owner, sub_agency, sub_agent):
    """A month of ACENTE1: two insurers' agreements and a sub-agency share; policies issued by an
    agent and by the sub-agency's agent, one cancelled with a refund; two imported, ending in the
    period, one of them renewed here (same plate, starting the day it ends); and another agency's
    policy that must not count."""
    agreement(insurer="anka", rate="10.00")
    agreement(insurer="cinar", rate="12.50", base="net")
    share(sub_agency, "60.00")
    agent = agents["ACENTE1"]
    renewal_data = samples.trafik_on_a_new_plate()
    kept = issued_by(agent, "anka", data=renewal_data)
    by_sub = issued_by(sub_agent, "cinar")
    cancelled = issued_by(sub_agent, "anka")
    started = cancellation_service.cancellation_start(
        user=sub_agent,
        policy_id=cancelled.pk,
        reason="customer_request",
        effective_on=cancelled.starts_on + timedelta(days=100),
    )
    cancellation = run_to_the_end(started)
    assert cancellation.state == WorkState.SUBMITTED and cancellation.refund > 0
    issued_by(agents["ACENTE2"], "anka")
    ends, owner_id = kept.starts_on, samples.TRAFIK["owner_id"]
    rows = [
        "insurer,policy_no,product,plate,owner_id,status,starts_on,ends_on",
        f"anka,AK-ESKI-1,trafik,{kept.plate},{owner_id},ACTIVE,{ends.replace(year=ends.year - 1)},{ends}",
        f"cinar,CN-ESKI-2,trafik,34ZZ999,{owner_id},ACTIVE,2025-12-10,{ends + timedelta(days=5)}",
    ]
    report = policies_import(lines=rows, agency=Agency.objects.get(code="ACENTE1"))
    assert not report.errors, report.errors
    return {"kept": kept, "by_sub": by_sub, "cancelled": cancelled, "cancellation": cancellation}


def list_sums(user, date_from: date, date_to: date) -> dict[str, Decimal | int]:
    """What the policy list holds for the same policies, summed: premiums, refunds, commission."""
    policies = [
        policy
        for policy in quote_selectors.policy_list(user=user)
        if date_from <= timezone.localtime(policy.issued_at).date() <= date_to
    ]
    ids = [policy.pk for policy in policies]
    refunds = Cancellation.objects.filter(policy_id__in=ids, state=WorkState.SUBMITTED).values_list("refund", flat=True)
    entries = PolicyCommission.objects.filter(policy_id__in=ids)
    return {
        "policies": len(policies),
        "premium": sum((policy.premium or ZERO for policy in policies), ZERO),
        "refunds": sum((refund or ZERO for refund in refunds), ZERO),
        "cancellations": sum(policy.status == "CANCELLED" for policy in policies),
        "commission": sum((e.amount for e in entries if e.kind == "accrual"), ZERO),
        "sub_agency_commission": sum((e.sub_agency_amount for e in entries if e.kind == "accrual"), ZERO),
        "commission_reversed": sum((e.amount for e in entries if e.kind == "reversal"), ZERO),
    }


def test_the_report_agrees_with_the_policy_list_to_the_kurus(month, owner):
    date_from, date_to = period()
    expected = list_sums(owner, date_from, date_to)
    report = report_service.production_report(
        report_filter=report_service.report_filter_make(
            agency=owner.agent_profile.agency, date_from=date_from, date_to=date_to
        )
    )
    total = report.total
    assert expected["policies"] == 5  # three issued here, two imported; ACENTE2's not among them
    for name, value in expected.items():
        assert getattr(total, name) == value, name
    assert total.net_premium == expected["premium"] - expected["refunds"]
    assert total.net_commission == expected["commission"] + expected["commission_reversed"]
    assert total.agency_commission + total.sub_agency_commission == total.commission
    assert total.sub_agency_commission > 0 and total.commission_reversed < 0
    # Every breakdown adds up to the total.
    for _, _, groups in report.breakdowns():
        for name in ("policies", "premium", "commission", "refunds", "commission_reversed", "net_commission"):
            assert sum((getattr(group.figures, name) for group in groups), type(getattr(total, name))()) == getattr(
                total, name
            ), name
    by_insurer = {group.label: group.figures for group in report.by_insurer}
    anka = Policy.objects.filter(agency__code="ACENTE1", insurer__code="anka")
    assert by_insurer["Anka Sigorta"].premium == sum((p.premium or ZERO for p in anka), ZERO)
    by_sub = {group.key: group.figures for group in report.by_sub_agency}
    sub_pk = str(month["by_sub"].sub_agency_id)
    assert by_sub[sub_pk].policies == 2 and by_sub[sub_pk].cancellations == 1
    assert by_sub[sub_pk].refunds == month["cancellation"].refund
    by_agent = {group.key: group.figures for group in report.by_agent}
    assert by_agent[""].policies == 2  # the imported ones: no seller
    assert report.renewals == report_service.Renewals(due=2, renewed=1)
    assert report.renewals.rate == Decimal("50.0")


def test_the_page_the_excel_file_and_the_api_show_the_same_numbers(month, owner):
    date_from, date_to = period()
    client = logged_in(owner)
    query = {"baslangic": date_from.isoformat(), "bitis": date_to.isoformat()}
    expected = list_sums(owner, date_from, date_to)

    page = client.get("/acente/uretim-raporu/", query)
    assert page.status_code == 200
    html = page.content.decode()
    total = html[html.index('id="report-total"') :]
    for name in ("premium", "refunds", "commission", "commission_reversed"):
        assert f'data-figure="{name}">{turkish_amount(expected[name])} ₺<' in total, name
    assert html.count('<svg class="chart"') == 2 and "Anka Sigorta" in html
    assert 'data-figure="renewal_rate">%50' in html

    xlsx = client.get("/acente/uretim-raporu/", {**query, "format": "xlsx"})
    assert xlsx.status_code == 200 and xlsx["Content-Type"].startswith("application/vnd.openxmlformats")
    sheet = load_workbook(io.BytesIO(xlsx.content)).active
    header = [cell.value for cell in sheet[1]]
    rows = {(row[0], row[1]): row for row in sheet.iter_rows(min_row=2, values_only=True)}
    (toplam,) = [row for key, row in rows.items() if key[0] == "Toplam"]
    cell = dict(zip(header, toplam, strict=True))

    def money(value) -> Decimal:
        return Decimal(str(value)).quantize(Decimal("0.01"))

    assert cell["Poliçe"] == expected["policies"]
    assert money(cell["Brüt prim (TL)"]) == expected["premium"]
    assert money(cell["İade primi (TL)"]) == expected["refunds"]
    assert money(cell["Komisyon (TL)"]) == expected["commission"]
    assert money(cell["Tali acente komisyonu (TL)"]) == expected["sub_agency_commission"]
    assert money(cell["Komisyon iadesi (TL)"]) == expected["commission_reversed"]
    assert money(cell["Net prim (TL)"]) == expected["premium"] - expected["refunds"]
    assert ("Yenileme oranı", "%50,0 (1 / 2)") in rows

    api = client.get("/api/production-report/", {"date_from": date_from, "date_to": date_to})
    assert api.status_code == 200
    body = api.json()
    assert body["total"]["premium"] == str(expected["premium"])
    assert body["total"]["refunds"] == str(expected["refunds"])
    assert body["total"]["commission"] == str(expected["commission"])
    assert body["renewals"] == {"due": 2, "renewed": 1, "rate": "50.0"}
    assert sum(Decimal(g["figures"]["premium"]) for g in body["insurer"]) == expected["premium"]


def test_the_filters_narrow_every_figure(month, owner, sub_agent):
    date_from, date_to = period()
    agency = owner.agent_profile.agency

    def total(**filters) -> report_service.Figures:
        made = report_service.report_filter_make(agency=agency, date_from=date_from, date_to=date_to, **filters)
        return report_service.production_report(report_filter=made).total

    assert total(insurer="cinar").premium == month["by_sub"].premium
    assert total(sold_by_id=sub_agent.pk).policies == 2
    assert total(sub_agency=report_service.OWN_SALES).sub_agency_commission == ZERO
    assert total(sub_agency=str(month["by_sub"].sub_agency_id)).refunds == month["cancellation"].refund
    assert total(product="dask").policies == 0
    client = logged_in(owner)
    narrowed = client.get("/acente/uretim-raporu/", {"sirket": "cinar", "baslangic": date_from, "bitis": date_to})
    assert f"{turkish_amount(month['by_sub'].premium)} ₺" in narrowed.content.decode()


def test_a_bad_filter_is_a_turkish_field_error_never_a_500(month, owner):
    client = logged_in(owner)
    reversed_range = client.get("/acente/uretim-raporu/", {"baslangic": "2026-05-10", "bitis": "2026-05-01"})
    assert reversed_range.status_code == 400
    assert "Bitiş tarihi başlangıçtan önce olamaz." in reversed_range.content.decode()
    unknown = client.get("/acente/uretim-raporu/", {"sirket": "yok", "baslangic": "yarın"})
    assert unknown.status_code == 400 and "Geçerli bir tarih girin" in unknown.content.decode()
    assert client.get("/acente/uretim-raporu/", {"sirket": "yok", "format": "xlsx"}).status_code == 400
    api = client.get("/api/production-report/", {"date_from": "2026-05-10", "date_to": "2026-05-01"})
    assert api.status_code == 400 and api.json() == {"date_to": ["Bitiş tarihi başlangıçtan önce olamaz."]}
    assert client.get("/api/production-report/", {"sub_agency": "999999"}).status_code == 400
    with pytest.raises(Invalid):
        report_service.report_filter_make(
            agency=owner.agent_profile.agency, date_from=date(2020, 1, 1), date_to=date(2026, 1, 1)
        )


def test_only_managers_and_head_office_read_it(month, agents, owner, sub_agency):
    assert logged_in(agents["ACENTE1"]).get("/acente/uretim-raporu/").status_code == 403
    assert logged_in(agents["ACENTE1"]).get("/api/production-report/").status_code == 403
    sub_admin = get_user_model().objects.create_user("tali-patron", password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=sub_admin, agency=sub_agency.agency, sub_agency=sub_agency)
    assert logged_in(sub_admin).get("/acente/uretim-raporu/").status_code == 403
    assert Client().get("/acente/uretim-raporu/")["Location"].startswith("/giris/")

    other_manager = get_user_model().objects.create_user("patron-acente2", password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=other_manager, agency=Agency.objects.get(code="ACENTE2"), is_agency_admin=True)
    other = logged_in(other_manager)
    assert other.get("/acente/uretim-raporu/", {"acente": "ACENTE1"}).status_code == 404
    assert other.get("/api/production-report/", {"agency": "ACENTE1"}).status_code == 404
    own = other.get("/api/production-report/").json()
    assert own["agency"] == "ACENTE2" and own["total"]["policies"] == 1

    head_office = get_user_model().objects.create_user("genel-mudurluk", password=AGENT_PASSWORD)
    head_office.user_permissions.add(Permission.objects.get(codename="view_all_agencies"))
    reader = logged_in(head_office)
    date_from, date_to = period()
    theirs = reader.get("/api/production-report/", {"agency": "ACENTE1", "date_from": date_from, "date_to": date_to})
    ours = logged_in(owner).get("/api/production-report/", {"date_from": date_from, "date_to": date_to})
    assert theirs.status_code == 200 and theirs.json() == ours.json()
    page = reader.get("/acente/uretim-raporu/", {"acente": "ACENTE1"})
    assert page.status_code == 200 and 'name="acente"' in page.content.decode()
    assert reader.get("/acente/uretim-raporu/", {"acente": "YOK"}).status_code == 404
