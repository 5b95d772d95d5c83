"""The scope rule (`agencies.scope`): who sees and acts on which record, and the roles around it.

One agency with two sub-agencies (tali acente) and its own staff, a second agency, a head-office
reader: each sees exactly what the rule says, through the one function every selector uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import IntegrityError, transaction
from django.test import Client

from agencies.backends import agency_allows
from agencies.models import Agency, AgentProfile, SubAgency
from agencies.scope import is_agency_manager, may_act_on, scope_q, scoped
from agencies.services import (
    SUB_AGENCY_ADMIN_MESSAGE,
    SubAgencyInvalid,
    agent_role_problems,
    managed_agents,
    sub_agency_create,
)
from customers.models import Customer
from notifications.services import agency_people
from policies.services.imports import policies_import

pytestmark = pytest.mark.django_db

PASSWORD = "test-pass-123"


@dataclass
class People:
    agency: Agency
    a1: SubAgency
    a2: SubAgency
    staff: object  # the agency's own agent
    manager: object  # the agency's manager (is_agency_admin, no sub-agency)
    a1_user: object
    a2_user: object
    other_agency_user: object
    customers: dict[str, Customer]  # "HQ", "A1", "A2", "OTHER"


def _user(username: str, agency: Agency, **profile) -> object:
    user = get_user_model().objects.create_user(username, password=PASSWORD)
    AgentProfile.objects.create(user=user, agency=agency, **profile)
    return user


@pytest.fixture
def people(seeded_accounts) -> People:
    agency, other = Agency.objects.get(code="ACENTE1"), Agency.objects.get(code="ACENTE2")
    a1 = SubAgency.objects.create(agency=agency, code="a1", name="Tali Bir")
    a2 = SubAgency.objects.create(agency=agency, code="a2", name="Tali İki")
    found = People(
        agency=agency,
        a1=a1,
        a2=a2,
        staff=_user("merkez", agency),
        manager=_user("yonetici", agency, is_agency_admin=True),
        a1_user=_user("tali-bir", agency, sub_agency=a1),
        a2_user=_user("tali-iki", agency, sub_agency=a2),
        other_agency_user=_user("oteki", other),
        customers={},
    )
    for key, owner_agency, sub_agency, identity_no in (
        ("HQ", agency, None, "10000000146"),
        ("A1", agency, a1, "12345678950"),
        ("A2", agency, a2, "17291716060"),
        ("OTHER", other, None, "10000000146"),
    ):
        found.customers[key] = Customer.objects.create(
            agency=owner_agency, sub_agency=sub_agency, name=f"Müşteri {key}", identity_no=identity_no
        )
    return found


def visible(user, *, acting: bool = False) -> set[str]:
    rows = scoped(Customer.objects.all(), user=user, acting=acting)
    return {customer.name.removeprefix("Müşteri ") for customer in rows}


def test_agency_staff_see_the_whole_agency_with_every_sub_agency(people):
    """The agency's own staff (no sub-agency) see their own and every sub-agency's records, no other agency's."""
    assert visible(people.staff) == {"HQ", "A1", "A2"}
    assert visible(people.manager) == {"HQ", "A1", "A2"}


def test_sub_agency_user_sees_only_their_sub_agencys_records(people):
    """A1's user sees A1's customer only: neither the agency's own nor A2's nor another agency's."""
    assert visible(people.a1_user) == {"A1"}
    assert visible(people.a2_user) == {"A2"}
    assert visible(people.other_agency_user) == {"OTHER"}


def test_nobody_without_an_agency_sees_anything(people):
    stranger = get_user_model().objects.create_user("yabanci", password=PASSWORD, is_staff=True)
    assert visible(stranger) == set()


def test_head_office_reader_reads_all_and_acts_on_none(people):
    """`quotes.view_all_agencies` widens reading only; acting stays with the user's own scope (none)."""
    reader = get_user_model().objects.create_user("merkez-okuyucu", password=PASSWORD)
    reader.user_permissions.add(Permission.objects.get(content_type__app_label="quotes", codename="view_all_agencies"))
    reader = get_user_model().objects.get(pk=reader.pk)  # permissions are cached per instance
    assert visible(reader) == {"HQ", "A1", "A2", "OTHER"}
    assert visible(reader, acting=True) == set()


def test_the_paths_to_agency_and_sub_agency_are_the_callers(people):
    """The rule follows whatever path the queryset gives: here a profile's own agency and sub-agency."""
    profiles = AgentProfile.objects.filter(scope_q(people.a1_user, agency="agency", sub_agency="sub_agency"))
    assert {profile.user.username for profile in profiles} == {"tali-bir"}


def test_a_record_no_sub_agency_can_own_is_the_agency_staffs_only(people):
    """`sub_agency=None` (a commission agreement): the staff see the agency's, sub-agency users nothing."""
    assert Customer.objects.filter(scope_q(people.staff, sub_agency=None)).count() == 3
    assert not Customer.objects.filter(scope_q(people.a1_user, sub_agency=None)).exists()


def test_may_act_on_one_record_follows_the_same_rule(people):
    a1, hq = people.customers["A1"], people.customers["HQ"]
    assert may_act_on(people.a1_user, agency_id=a1.agency_id, sub_agency_id=a1.sub_agency_id)
    assert not may_act_on(people.a1_user, agency_id=hq.agency_id, sub_agency_id=None)
    assert not may_act_on(people.a2_user, agency_id=a1.agency_id, sub_agency_id=a1.sub_agency_id)
    assert may_act_on(people.staff, agency_id=a1.agency_id, sub_agency_id=a1.sub_agency_id)
    assert not may_act_on(people.other_agency_user, agency_id=hq.agency_id, sub_agency_id=None)


# --- roles ---------------------------------------------------------------------------------------


def test_a_sub_agency_user_is_never_an_agency_manager(people):
    """Refused by the shared check (a Turkish field error), by the database, and never treated as manager."""
    assert agent_role_problems(agency=people.agency, sub_agency=people.a1, is_agency_admin=True) == {
        "is_agency_admin": SUB_AGENCY_ADMIN_MESSAGE
    }
    assert agent_role_problems(agency=people.agency, sub_agency=None, is_agency_admin=True) == {}
    other = Agency.objects.get(code="ACENTE2")
    assert list(agent_role_problems(agency=other, sub_agency=people.a1, is_agency_admin=False)) == ["sub_agency"]
    profile = people.a1_user.agent_profile
    profile.is_agency_admin = True
    with pytest.raises(IntegrityError), transaction.atomic():
        profile.save(update_fields=["is_agency_admin"])
    assert is_agency_manager(people.manager) and not is_agency_manager(people.staff)


def test_admin_form_refuses_a_sub_agency_manager_in_turkish(people, db):
    """The Django admin's profile form names the field: "Tali acente çalışanı acente yöneticisi olamaz."."""
    superuser = get_user_model().objects.create_superuser("kok", "kok@example.com", PASSWORD)
    client = Client()
    client.force_login(superuser)
    profile = people.a1_user.agent_profile
    response = client.post(
        f"/admin/agencies/agentprofile/{profile.pk}/change/",
        {"user": profile.user_id, "agency": people.agency.pk, "sub_agency": people.a1.pk, "is_agency_admin": "on"},
    )
    assert response.status_code == 200
    assert SUB_AGENCY_ADMIN_MESSAGE in response.content.decode()
    assert not AgentProfile.objects.get(pk=profile.pk).is_agency_admin
    listing = client.get(f"/admin/agencies/subagency/?agency__id__exact={people.agency.pk}").content.decode()
    assert "Tali Bir" in listing and "Tali İki" in listing
    assert "Tali Bir" in client.get("/admin/agencies/agentprofile/").content.decode()


def test_a_deactivated_sub_agencys_users_are_refused(people):
    """Switching a sub-agency off stops its users' logins and sessions, not the agency's other users."""
    people.a1.is_active = False
    people.a1.save()
    a1_user = get_user_model().objects.get(pk=people.a1_user.pk)
    assert not agency_allows(a1_user)
    assert agency_allows(get_user_model().objects.get(pk=people.a2_user.pk))
    client = Client()
    assert not client.login(username="tali-bir", password=PASSWORD)
    assert client.login(username="tali-iki", password=PASSWORD)


# --- the manager's page --------------------------------------------------------------------------


def test_manager_creates_a_sub_agency_adds_a_user_to_it_and_switches_it_off(people):
    client = Client()
    client.force_login(people.manager)
    response = client.post("/acente/tali-acenteler/", {"code": "kadikoy", "name": "Kadıköy Şubesi"})
    assert response.status_code == 302
    created = SubAgency.objects.get(agency=people.agency, code="kadikoy")
    page = client.get("/acente/calisanlar/").content.decode()
    assert "Kadıköy Şubesi" in page and "Tali Bir" in page
    response = client.post(
        "/acente/calisanlar/",
        {"username": "kadikoy-ajan", "password": "uzun-ve-zor-parola-42", "sub_agency_id": str(created.pk)},
    )
    assert response.status_code == 302
    assert AgentProfile.objects.get(user__username="kadikoy-ajan").sub_agency == created
    assert client.post(f"/acente/tali-acenteler/{created.pk}/durum/", {"aktif": "0"}).status_code == 302
    assert not SubAgency.objects.get(pk=created.pk).is_active
    # A switched-off sub-agency takes no new users.
    response = client.post(
        "/acente/calisanlar/",
        {"username": "kadikoy-iki", "password": "uzun-ve-zor-parola-42", "sub_agency_id": str(created.pk)},
    )
    assert response.status_code == 400 and not AgentProfile.objects.filter(user__username="kadikoy-iki").exists()


def test_manager_moves_an_agent_into_a_sub_agency_and_back(people):
    """The row's "Taşı": into an active sub-agency of the agency, back with the blank choice;
    another agency's sub-agency or agent is refused and nothing moves."""
    client = Client()
    client.force_login(people.manager)
    staff = people.staff.agent_profile
    move = f"/acente/calisanlar/{staff.pk}/tali-acente/"
    assert client.post(move, {"sub_agency_id": people.a2.pk}).status_code == 302
    assert AgentProfile.objects.get(pk=staff.pk).sub_agency == people.a2
    assert visible(get_user_model().objects.get(pk=people.staff.pk)) == {"A2"}
    assert client.post(move, {"sub_agency_id": ""}).status_code == 302
    assert AgentProfile.objects.get(pk=staff.pk).sub_agency is None
    other = SubAgency.objects.create(agency=Agency.objects.get(code="ACENTE2"), code="x", name="Öteki Tali")
    response = client.post(move, {"sub_agency_id": other.pk}, follow=True)
    assert "Geçersiz tali acente seçimi." in response.content.decode()
    assert AgentProfile.objects.get(pk=staff.pk).sub_agency is None
    outsider = people.other_agency_user.agent_profile
    response = client.post(f"/acente/calisanlar/{outsider.pk}/tali-acente/", {"sub_agency_id": ""})
    assert response.status_code == 404


def test_sub_agency_input_errors_are_turkish_field_errors(people):
    client = Client()
    client.force_login(people.manager)
    response = client.post("/acente/tali-acenteler/", {"code": "a1", "name": ""})
    assert response.status_code == 400
    text = response.content.decode()
    assert "Bu kodla bir tali acenteniz zaten var." in text and "Tali acente adı zorunludur." in text
    with pytest.raises(SubAgencyInvalid) as refused:
        sub_agency_create(admin=people.manager, code="şube 1", name="Şube")
    assert list(refused.value.field_errors) == ["code"]


def test_another_agencys_sub_agency_is_unknown_to_the_manager(people):
    other = SubAgency.objects.create(agency=Agency.objects.get(code="ACENTE2"), code="x", name="Öteki Tali")
    client = Client()
    client.force_login(people.manager)
    assert client.post(f"/acente/tali-acenteler/{other.pk}/durum/", {"aktif": "0"}).status_code == 404
    assert SubAgency.objects.get(pk=other.pk).is_active
    assert "Öteki Tali" not in client.get("/acente/calisanlar/").content.decode()
    response = client.post(
        "/acente/calisanlar/",
        {"username": "sizinti", "password": "uzun-ve-zor-parola-42", "sub_agency_id": str(other.pk)},
    )
    assert response.status_code == 400 and not AgentProfile.objects.filter(user__username="sizinti").exists()


def test_sub_agency_users_and_plain_staff_cannot_open_the_managers_page(people):
    for user in (people.a1_user, people.staff):
        client = Client()
        client.force_login(user)
        assert client.get("/acente/calisanlar/").status_code == 403
        assert client.post("/acente/tali-acenteler/", {"code": "yeni", "name": "Yeni"}).status_code == 403
    assert not SubAgency.objects.filter(code="yeni").exists()
    assert {profile.user.username for profile in managed_agents(admin=people.manager)} >= {"tali-bir", "merkez"}


# --- credit of what arrives without a seller -----------------------------------------------------


def test_imported_policies_are_credited_to_their_customers_sub_agency(people):
    """A portfolio row whose owner is a sub-agency's customer is that sub-agency's; any other, the agency's."""
    lines = [
        "insurer,policy_no,product,plate,owner_id,status\n",
        "anka,IMP-1,trafik,34 ABC 123,12345678950,ACTIVE\n",  # A1's customer
        "anka,IMP-2,trafik,34 ABC 124,10000000146,ACTIVE\n",  # the agency's own customer
        "anka,IMP-3,trafik,34 ABC 125,10000000078,ACTIVE\n",  # nobody's customer
    ]
    report = policies_import(lines=lines, agency=people.agency)
    assert report.imported == 3
    from policies.models import Policy

    credit = dict(Policy.objects.filter(policy_no__startswith="IMP-").values_list("policy_no", "sub_agency_id"))
    assert credit == {"IMP-1": people.a1.pk, "IMP-2": None, "IMP-3": None}


def test_who_hears_of_a_sub_agencys_policy(people):
    """The agency's managers always; a sub-agency's users only of their own sub-agency's records."""
    assert set(agency_people(people.agency.pk)) == {people.manager}
    assert set(agency_people(people.agency.pk, sub_agency_id=people.a1.pk)) == {people.manager, people.a1_user}


def test_a_duplicate_is_a_sub_agencys_only_when_both_policies_are(people):
    """A duplicate names the policy it repeats: A1 sees one between two A1 policies, not one whose
    original is the agency's own; the staff see both."""
    from integrations.models import InsurerAccount
    from policies.models import Policy, PolicyFinding
    from policies.selectors import duplicate_findings

    account = InsurerAccount.objects.select_related("insurer").filter(agency=people.agency).first()

    def policy(number: str, sub_agency: SubAgency | None) -> Policy:
        return Policy.objects.create(
            agency=people.agency,
            insurer=account.insurer,
            account=account,
            product="trafik",
            policy_no=number,
            plate="34ABC123",
            sub_agency=sub_agency,
        )

    within = PolicyFinding.objects.create(
        kind=PolicyFinding.Kind.DUPLICATE,
        agency=people.agency,
        policy=policy("D-1", people.a1),
        original=policy("D-0", people.a1),
    )
    across = PolicyFinding.objects.create(
        kind=PolicyFinding.Kind.DUPLICATE,
        agency=people.agency,
        policy=policy("D-2", people.a1),
        original=policy("D-H", None),
    )
    assert set(duplicate_findings(user=people.a1_user)) == {within}
    assert set(duplicate_findings(user=people.a2_user)) == set()
    assert set(duplicate_findings(user=people.staff)) == {within, across}
