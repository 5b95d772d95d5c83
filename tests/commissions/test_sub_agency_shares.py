"""Sub-agency shares: the rule and its one rounding, the share credited when a sub-agency's agent
issues a real policy (and split again on its reversal), who may enter one, the desk and the API."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from agencies.models import Agency, AgentProfile, SubAgency
from commissions.models import CommissionAgreement, CommissionBase, PolicyCommission, SubAgencyShare
from commissions.services import (
    commission_figures,
    commission_reversal_figures,
    kurus,
    sub_agency_part,
    sub_agency_share_create,
)
from insurehub.errors import Forbidden, Invalid
from integrations.models import AdminChange
from policies.services import cancellations as cancellation_service
from tests.conftest import AGENT_PASSWORD
from tests.policies.conftest import run_to_the_end

from .conftest import agreement, issued_by, share

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --- the rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "rate", "part"),
    [
        (Decimal("100.00"), Decimal("60.00"), Decimal("60.00")),
        (Decimal("10.01"), Decimal("50.00"), Decimal("5.01")),  # 5.005: half-up, never to even
        (Decimal("10.03"), Decimal("33.33"), Decimal("3.34")),  # 3.342999 → 3.34
        (Decimal("-10.01"), Decimal("50.00"), Decimal("-5.01")),  # a reversal mirrors an accrual
        (Decimal("0.01"), Decimal("40.00"), Decimal("0.00")),
        (Decimal("77.77"), Decimal("100.00"), Decimal("77.77")),
    ],
)
def test_the_sub_agencys_part_is_rounded_once_half_up_away_from_zero(amount, rate, part):
    assert sub_agency_part(amount=amount, share_rate=rate) == part
    assert sub_agency_part(amount=amount, share_rate=None) == Decimal("0.00")


def test_the_part_is_split_from_the_commission_and_the_agency_keeps_the_rest():
    rule = CommissionAgreement(rate=Decimal("12.50"), base=CommissionBase.NET)
    figures = commission_figures(
        agreement=rule, product="kasko", premium=Decimal("4321.09"), share_rate=Decimal("60.00")
    )
    assert figures.base_amount == kurus(Decimal("4321.09") / Decimal("1.05")) == Decimal("4115.32")
    assert figures.amount == kurus(Decimal("4115.32") * Decimal("0.125")) == Decimal("514.42")
    assert figures.sub_agency_amount == kurus(Decimal("514.42") * Decimal("0.60")) == Decimal("308.65")
    assert figures.amount - figures.sub_agency_amount == Decimal("205.77")


def test_a_reversals_part_is_reckoned_from_the_reversal_itself():
    reversal = commission_reversal_figures(
        commission=Decimal("514.42"),
        premium=Decimal("4321.09"),
        refund=Decimal("1000.00"),
        starts_on=None,
        ends_on=None,
        cancelled_on=None,
        share_rate=Decimal("60.00"),
    )
    assert reversal.amount == -kurus(Decimal("514.42") * Decimal("1000.00") / Decimal("4321.09")) == Decimal("-119.05")
    assert reversal.sub_agency_amount == -kurus(Decimal("119.05") * Decimal("0.60")) == Decimal("-71.43")


# --- a real policy -------------------------------------------------------------------------------


def test_a_sub_agents_policy_credits_the_share_in_force_on_its_issue_day(
    agents, sandbox, quick_cancel_policy, sub_agency, sub_agent
):
    agreement(insurer="anka", rate="10.00")
    in_force = share(sub_agency, "60.00", date(2020, 1, 1))
    share(sub_agency, "80.00", timezone.localdate() + timedelta(days=1))  # not yet
    policy = issued_by(sub_agent, "anka")
    assert (policy.sub_agency, policy.sold_by) == (sub_agency, sub_agent)
    accrual = PolicyCommission.objects.get(policy=policy, kind="accrual")
    assert accrual.amount == kurus(policy.premium * Decimal("0.10"))
    assert (accrual.sub_agency, accrual.sub_agency_share, accrual.sub_agency_rate) == (
        sub_agency,
        in_force,
        Decimal("60.00"),
    )
    assert accrual.sub_agency_amount == kurus(accrual.amount * Decimal("0.60"))

    started = cancellation_service.cancellation_start(
        user=sub_agent,
        policy_id=policy.pk,
        reason="customer_request",
        effective_on=policy.starts_on + timedelta(days=100),
    )
    run_to_the_end(started)
    reversal = PolicyCommission.objects.get(policy=policy, kind="reversal")
    assert reversal.sub_agency_rate == Decimal("60.00") and reversal.sub_agency == sub_agency
    assert reversal.sub_agency_amount == -kurus(-reversal.amount * Decimal("0.60"))


def test_an_agency_agents_policy_has_no_sub_agency_part(agents, sandbox, quick_cancel_policy, sub_agency):
    agreement(insurer="cinar", rate="10.00")
    share(sub_agency, "60.00")
    policy = issued_by(agents["ACENTE1"], "cinar")
    accrual = PolicyCommission.objects.get(policy=policy, kind="accrual")
    assert policy.sub_agency is None
    assert (accrual.sub_agency, accrual.sub_agency_rate, accrual.sub_agency_amount) == (None, None, Decimal("0.00"))


def test_a_sub_agency_without_a_share_earns_no_part_until_one_is_entered_and_recomputed(
    agents, sandbox, quick_cancel_policy, sub_agency, sub_agent
):
    from django.core.management import call_command

    agreement(insurer="deniz", rate="10.00")
    policy = issued_by(sub_agent, "deniz")
    accrual = PolicyCommission.objects.get(policy=policy, kind="accrual")
    assert (accrual.sub_agency, accrual.sub_agency_amount) == (sub_agency, Decimal("0.00"))
    share(sub_agency, "50.00")
    call_command("recompute_commissions", since=timezone.localdate().isoformat())
    accrual.refresh_from_db()
    assert accrual.sub_agency_amount == kurus(accrual.amount / 2)


# --- who enters one ------------------------------------------------------------------------------


def test_only_the_agencys_own_admin_enters_a_share_and_it_is_audited(agents, owner, sub_agency):
    with pytest.raises(Forbidden):
        sub_agency_share_create(
            user=agents["ACENTE1"], sub_agency_id=sub_agency.pk, rate="60", effective_from=date.today()
        )
    sub_admin = get_user_model().objects.create_user("tali-patron", password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=sub_admin, agency=sub_agency.agency, sub_agency=sub_agency)
    with pytest.raises(Forbidden):
        sub_agency_share_create(user=sub_admin, sub_agency_id=sub_agency.pk, rate="60", effective_from=date.today())
    created = sub_agency_share_create(
        user=owner, sub_agency_id=sub_agency.pk, rate=Decimal("60.00"), effective_from=date(2026, 1, 1)
    )
    assert created.created_by == owner
    change = AdminChange.objects.filter(object_id=str(created.pk)).latest("pk")
    assert change.user == owner and "60" in str(change.changes)


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"rate": "0"}, "rate", "Pay oranı 0'dan büyük, en fazla 100 olmalıdır."),
        ({"rate": "100.01"}, "rate", "Pay oranı 0'dan büyük, en fazla 100 olmalıdır."),
        ({"rate": "12.345"}, "rate", "Pay oranı en fazla iki ondalık basamak içerebilir."),
        ({"rate": "on iki"}, "rate", "Pay oranını sayı olarak girin (ör. 60)."),
        ({"effective_from": None}, "effective_from", "Geçerlilik başlangıcını girin."),
    ],
)
def test_a_bad_share_is_refused_naming_the_field(owner, sub_agency, fields, field, message):
    values = {"sub_agency_id": sub_agency.pk, "rate": "60", "effective_from": date(2026, 1, 1), **fields}
    with pytest.raises(Invalid) as refused:
        sub_agency_share_create(user=owner, **values)
    assert refused.value.errors == {field: message}


def test_another_agencys_sub_agency_and_a_second_share_on_one_day_are_refused(owner, sub_agency):
    other = SubAgency.objects.create(agency=Agency.objects.get(code="ACENTE2"), code="x", name="Başka Tali")
    with pytest.raises(Invalid) as refused:
        sub_agency_share_create(user=owner, sub_agency_id=other.pk, rate="60", effective_from=date(2026, 1, 1))
    assert refused.value.errors == {"sub_agency": "Böyle bir tali acente yok."}
    sub_agency_share_create(user=owner, sub_agency_id=sub_agency.pk, rate="60", effective_from=date(2026, 1, 1))
    with pytest.raises(Invalid) as refused:
        sub_agency_share_create(user=owner, sub_agency_id=sub_agency.pk, rate="70", effective_from=date(2026, 1, 1))
    assert refused.value.errors == {"effective_from": "Bu tali acente için bu tarihte başlayan bir pay zaten var."}


# --- the desk and the API ------------------------------------------------------------------------


def test_the_manager_sets_a_share_on_the_commissions_page(owner, sub_agency):
    client = logged_in(owner)
    page = client.get("/acente/komisyonlar/").content.decode()
    assert "Tali acente payları" in page and 'name="pay-sub_agency"' in page
    response = client.post(
        "/acente/komisyonlar/",
        {"form": "share", "pay-sub_agency": sub_agency.pk, "pay-rate": "60,5", "pay-effective_from": "2026-01-01"},
    )
    assert response.status_code == 302
    assert SubAgencyShare.objects.get().rate == Decimal("60.50")
    refused = client.post(
        "/acente/komisyonlar/",
        {"form": "share", "pay-sub_agency": sub_agency.pk, "pay-rate": "101", "pay-effective_from": "2026-02-01"},
    )
    assert refused.status_code == 400 and "Pay oranı 0&#x27;dan büyük" in refused.content.decode()
    assert "%60,50" in client.get("/acente/komisyonlar/").content.decode()


def test_a_plain_agent_and_a_sub_agencys_admin_do_not_get_the_commissions_page(agents, sub_agency):
    assert logged_in(agents["ACENTE1"]).get("/acente/komisyonlar/").status_code == 403
    sub_admin = get_user_model().objects.create_user("tali-patron", password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=sub_admin, agency=sub_agency.agency, sub_agency=sub_agency)
    assert logged_in(sub_admin).get("/acente/komisyonlar/").status_code == 403


def test_shares_over_the_api(agents, owner, sub_agency):
    client = logged_in(owner)
    created = client.post(
        "/api/sub-agency-shares/",
        {"sub_agency": sub_agency.pk, "rate": "60.00", "effective_from": "2026-01-01"},
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["sub_agency"], body["rate"], body["in_force"]) == (sub_agency.pk, "60.00", True)
    unknown = client.post(
        "/api/sub-agency-shares/",
        {"sub_agency": sub_agency.pk, "rate": "60", "effective_from": "2026-02-01", "agency": "ACENTE2"},
        content_type="application/json",
    )
    assert unknown.status_code == 400 and "agency" in unknown.json()
    assert client.get(f"/api/sub-agency-shares/{body['id']}/").json()["rate"] == "60.00"
    assert [row["id"] for row in client.get("/api/sub-agency-shares/").json()["results"]] == [body["id"]]
    agent = logged_in(agents["ACENTE1"])
    refused = agent.post(
        "/api/sub-agency-shares/",
        {"sub_agency": sub_agency.pk, "rate": "60", "effective_from": "2026-03-01"},
        content_type="application/json",
    )
    assert refused.status_code == 403
    assert logged_in(agents["ACENTE2"]).get(f"/api/sub-agency-shares/{body['id']}/").status_code == 404


def test_platform_staff_enter_a_share_in_the_admin_under_the_same_rules(admin_client, sub_agency):
    from django.urls import reverse

    add = reverse("admin:commissions_subagencyshare_add")
    form = {"sub_agency": sub_agency.pk, "rate": "55.00", "effective_from": "2026-01-01"}
    assert admin_client.post(add, form).status_code == 302
    stored = SubAgencyShare.objects.get()
    assert AdminChange.objects.filter(object_id=str(stored.pk)).exists()
    again = admin_client.post(add, {**form, "rate": "65.00"})
    assert again.status_code == 200
    assert "Bu tali acente için bu tarihte başlayan bir pay zaten var." in again.content.decode()
    assert admin_client.get(reverse("admin:commissions_subagencyshare_changelist")).status_code == 200


def test_the_policy_page_shows_the_sub_agencys_part(agents, sandbox, quick_cancel_policy, owner, sub_agency, sub_agent):
    from insurehub.money import turkish_amount

    agreement(insurer="anka", rate="10.00")
    share(sub_agency, "60.00")
    policy = issued_by(sub_agent, "anka")
    accrual = PolicyCommission.objects.get(policy=policy, kind="accrual")
    page = logged_in(owner).get(f"/policeler/{policy.pk}/").content.decode()
    assert f"Tali acente payı {turkish_amount(accrual.sub_agency_amount)} ₺" in page


def test_a_sub_agency_user_sees_their_part_and_not_the_agencys_rate(
    agents, sandbox, quick_cancel_policy, sub_agency, sub_agent
):
    """The policy is theirs to see; the agency's rate and part are the agency's business."""
    from insurehub.money import turkish_amount

    agreement(insurer="anka", rate="10.00")
    share(sub_agency, "60.00")
    policy = issued_by(sub_agent, "anka")
    accrual = PolicyCommission.objects.get(policy=policy, kind="accrual")
    client = logged_in(sub_agent)
    page = client.get(f"/policeler/{policy.pk}/").content.decode()
    assert f"Tali acente payınız {turkish_amount(accrual.sub_agency_amount)} ₺" in page
    assert "%10.00" not in page and turkish_amount(accrual.amount) + " ₺" not in page
    api = client.get(f"/api/policies/{policy.pk}/commission/")
    assert api.status_code == 403 and "acente yöneticisine" in api.json()["detail"]
