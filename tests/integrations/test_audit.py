"""The audit trail: every add, change and delete of what decides access or money, with who, when and from → to."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse

from agencies.models import Agency, AgentProfile
from integrations.admin import POLICY_TUNABLES
from integrations.audit import SYSTEM_ACTOR, error_mapping_classify
from integrations.models import AdminChange, ErrorMapping, Insurer, InsurerAccount, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from sandbox import DEFAULT_ACCOUNTS
from tests.fifth_insurer import only_shipped_adapters

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_policy_cache():
    clear_policy_cache()
    yield
    clear_policy_cache()


@pytest.fixture
def policies(seeded_accounts) -> list[OperationPolicy]:
    anka = Insurer.objects.get(code="anka")
    common = {"base_delay": 0.25, "max_delay": 1.5, "deadline": 10.0, "attempt_timeout": 6.0}
    return [
        OperationPolicy.objects.create(insurer=anka, operation="trafik_quote", max_attempts=3, **common),
        OperationPolicy.objects.create(insurer=anka, operation="kasko_quote", max_attempts=4, **common),
    ]


def change_url(obj) -> str:
    return reverse(f"admin:integrations_{obj._meta.model_name}_change", args=[obj.pk])


def people_entries():
    """Entries made by someone: the fixtures' own setup is recorded too, as the system's."""
    return AdminChange.objects.exclude(username=SYSTEM_ACTOR)


def entries_for(obj) -> list[AdminChange]:
    return list(people_entries().filter(model_name=obj._meta.model_name, object_id=str(obj.pk)).order_by("id"))


def test_change_form_records_who_and_each_field_from_and_to(admin_client, admin_user, policies):
    """Saving a policy writes one entry naming the admin and exactly the fields that changed."""
    policy = policies[0]
    data = {name: getattr(policy, name) for name in [*POLICY_TUNABLES, "throttle_spread"]}
    data.update(insurer=policy.insurer_id, operation=policy.operation, max_attempts=1, deadline=8.0, _save="Kaydet")
    assert admin_client.post(change_url(policy), data).status_code == 302
    (entry,) = entries_for(policy)
    assert (entry.user, entry.username, entry.action) == (admin_user, admin_user.username, "change")
    assert (entry.object_repr, entry.insurer_code) == ("anka / trafik_quote", "anka")
    assert entry.changes == [
        {"field": "max_attempts", "label": "en fazla deneme", "from": 3, "to": 1},
        {"field": "deadline", "label": "toplam süre sınırı (sn)", "from": 10.0, "to": 8.0},
    ]
    assert entry.at is not None


def test_list_view_edits_are_recorded_row_by_row(admin_client, policies):
    """Inline edits in the policy list write one entry per changed row; untouched rows write none."""
    data: dict[str, Any] = {
        "form-TOTAL_FORMS": 2,
        "form-INITIAL_FORMS": 2,
        "form-MIN_NUM_FORMS": 0,
        "form-MAX_NUM_FORMS": 1000,
        "_save": "Kaydet",
    }
    for i, policy in enumerate(policies):
        data[f"form-{i}-id"] = policy.pk
        for name in POLICY_TUNABLES:
            data[f"form-{i}-{name}"] = getattr(policy, name)
    data["form-1-rate_ceiling"] = 12.0
    response = admin_client.post(reverse("admin:integrations_operationpolicy_changelist"), data)
    assert response.status_code == 302
    assert entries_for(policies[0]) == []
    (entry,) = entries_for(policies[1])
    assert entry.changes == [{"field": "rate_ceiling", "label": "en yüksek hız (istek/sn)", "from": 50.0, "to": 12.0}]


def test_add_records_every_value(admin_client, seeded_accounts):
    """A new error mapping's entry lists each field it was created with."""
    bogazici = Insurer.objects.get(code="bogazici")
    admin_client.post(
        reverse("admin:integrations_errormapping_add"),
        {"insurer": bogazici.pk, "provider_code": "BS-950", "kind": "unavailable", "note": "bakım penceresi"},
    )
    mapping = ErrorMapping.objects.get(provider_code="BS-950")
    (entry,) = entries_for(mapping)
    assert entry.action == "add" and entry.insurer_code == "bogazici"
    assert {(c["field"], c["from"], c["to"]) for c in entry.changes} == {
        ("insurer", None, "Boğaziçi Sigorta"),
        ("provider_code", None, "BS-950"),
        ("kind", None, "unavailable"),
        ("note", None, "bakım penceresi"),
    }


def test_unchanged_save_records_nothing(admin_client, seeded_accounts):
    """Pressing save without changing anything is not a change."""
    insurer = Insurer.objects.get(code="cinar")
    data = {
        "code": insurer.code,
        "name": insurer.name,
        "base_url": insurer.base_url,
        "is_active": "on",
        "products": insurer.products,
        "_save": "Kaydet",
    }
    assert admin_client.post(change_url(insurer), data).status_code == 302
    assert entries_for(insurer) == []


def test_insurer_list_toggle_is_recorded(admin_client, seeded_accounts):
    """Switching an insurer off in the list view is audited like any change."""
    insurers = list(Insurer.objects.order_by("code"))  # the list's default order
    data: dict[str, Any] = {
        "form-TOTAL_FORMS": len(insurers),
        "form-INITIAL_FORMS": len(insurers),
        "form-MIN_NUM_FORMS": 0,
        "form-MAX_NUM_FORMS": 1000,
        "_save": "Kaydet",
    }
    for i, insurer in enumerate(insurers):
        data[f"form-{i}-id"] = insurer.pk
        if insurer.code != "deniz":
            data[f"form-{i}-is_active"] = "on"
    assert admin_client.post(reverse("admin:integrations_insurer_changelist"), data).status_code == 302
    (entry,) = people_entries()
    assert entry.object_repr == "Deniz Sigorta"
    assert entry.changes == [{"field": "is_active", "label": "aktif", "from": True, "to": False}]


def test_delete_records_the_row_and_everything_it_takes_with_it(admin_client, policies):
    """Deleting an insurer records it, its policies, its mappings and its accounts, with their last values."""
    anka = Insurer.objects.get(code="anka")
    ErrorMapping.objects.create(insurer=anka, provider_code="X-1", kind="timeout")
    response = admin_client.post(reverse("admin:integrations_insurer_delete", args=[anka.pk]), {"post": "yes"})
    assert response.status_code == 302 and not Insurer.objects.filter(code="anka").exists()
    deleted = AdminChange.objects.filter(action="delete", insurer_code="anka")
    assert sorted(deleted.values_list("model_name", flat=True)) == [
        "errormapping",
        "insurer",
        "insureraccount",
        "insureraccount",
        "operationpolicy",
        "operationpolicy",
    ]
    kasko = deleted.get(model_name="operationpolicy", object_repr="anka / kasko_quote")
    assert {"field": "max_attempts", "label": "en fazla deneme", "from": 4, "to": None} in kasko.changes


def test_bulk_delete_action_is_recorded(admin_client, seeded_accounts):
    """The list's "delete selected" action writes an entry per deleted row."""
    deniz = Insurer.objects.get(code="deniz")
    mappings = [ErrorMapping.objects.create(insurer=deniz, provider_code=f"D-{i}", kind="timeout") for i in range(2)]
    admin_client.post(
        reverse("admin:integrations_errormapping_changelist"),
        {"action": "delete_selected", "_selected_action": [m.pk for m in mappings], "post": "yes"},
    )
    assert not ErrorMapping.objects.exists()
    assert AdminChange.objects.filter(action="delete", model_name="errormapping").count() == 2


def test_credentials_are_recorded_as_changed_never_by_value(admin_client, seeded_accounts, caplog):
    """A credentials change is audited as "changed": no value, no ciphertext, not in logs either."""
    secret = "cok-gizli-anahtar-7781"
    account = InsurerAccount.objects.get(insurer__code="anka", agency__code="ACENTE1")
    form = {
        "agency": account.agency_id,
        "insurer": account.insurer_id,
        "agency_code": account.agency_code,
        "contracted_rate": 15.0,
        "is_active": "on",
        "new_credentials": json.dumps({"api_key": secret}),
        "_save": "Kaydet",
    }
    with caplog.at_level(logging.DEBUG):
        assert admin_client.post(change_url(account), form).status_code == 302
    account.refresh_from_db()
    (entry,) = entries_for(account)
    assert entry.changes == [  # in the model's field order
        {"field": "credentials", "label": "kimlik bilgileri", "secret": True},
        {"field": "contracted_rate", "label": "sözleşmeli istek hızı (istek/sn)", "from": 20.0, "to": 15.0},
    ]
    stored = json.dumps(list(AdminChange.objects.values()), default=str)
    assert secret not in stored and account.credentials_encrypted not in stored
    assert secret not in caplog.text
    page = admin_client.get(reverse("admin:integrations_adminchange_change", args=[entry.pk])).content.decode()
    assert "kimlik bilgileri" in page and secret not in page


def test_an_invalid_change_leaves_no_entry(admin_client, policies):
    """A refused form saves nothing, so it records nothing."""
    policy = policies[0]
    data = {name: getattr(policy, name) for name in [*POLICY_TUNABLES, "throttle_spread"]}
    data.update(insurer=policy.insurer_id, operation=policy.operation, max_delay=0.01, _save="Kaydet")
    assert admin_client.post(change_url(policy), data).status_code == 200
    assert not people_entries().exists()


def test_audit_trail_is_visible_and_read_only_in_admin(admin_client, policies):
    """Admins read the trail (list and detail, with a link from each audited row); nobody edits or deletes it."""
    policy = policies[0]
    data = {name: getattr(policy, name) for name in [*POLICY_TUNABLES, "throttle_spread"]}
    data.update(insurer=policy.insurer_id, operation=policy.operation, max_attempts=2, _save="Kaydet")
    admin_client.post(change_url(policy), data)
    entry = people_entries().get()

    listing = admin_client.get(reverse("admin:integrations_adminchange_changelist")).content.decode()
    assert "en fazla deneme: 3 → 2" in listing
    trail = admin_client.get(
        reverse("admin:integrations_adminchange_changelist") + f"?model_name=operationpolicy&object_id={policy.pk}"
    )
    # Newest first: the admin's change, then the policy's creation by the fixture (the system).
    assert trail.status_code == 200
    assert [e.username for e in trail.context["cl"].result_list] == [entry.username, SYSTEM_ACTOR]
    assert entry in trail.context["cl"].result_list
    assert "Değişiklik geçmişi" in admin_client.get(change_url(policy)).content.decode()

    assert admin_client.get(reverse("admin:integrations_adminchange_add")).status_code == 403
    assert admin_client.post(reverse("admin:integrations_adminchange_delete", args=[entry.pk])).status_code == 403
    detail = admin_client.get(reverse("admin:integrations_adminchange_change", args=[entry.pk])).content.decode()
    assert 'name="_save"' not in detail


# --- Beyond the admin's own forms ---------------------------------------------------------------


@pytest.fixture
def agent(seeded_accounts):
    user = get_user_model().objects.create_user("ajan-denetim", password="ilk-parola-1")
    AgentProfile.objects.create(user=user, agency=Agency.objects.get(code="ACENTE1"))
    return user


def test_agency_and_agent_profile_changes_through_the_admin_name_the_admin(admin_client, admin_user, agent):
    """Deactivating an agency and moving an agent to another agency are recorded as the admin's."""
    agency = Agency.objects.get(code="ACENTE1")
    response = admin_client.post(
        reverse("admin:agencies_agency_change", args=[agency.pk]),
        {"code": agency.code, "name": agency.name, "_save": "Kaydet"},  # "aktif" unticked
    )
    assert response.status_code == 302
    (entry,) = entries_for(agency)
    assert (entry.user, entry.action) == (admin_user, "change")
    assert entry.changes == [{"field": "is_active", "label": "aktif", "from": True, "to": False}]

    profile = agent.agent_profile
    other = Agency.objects.get(code="ACENTE2")
    response = admin_client.post(
        reverse("admin:agencies_agentprofile_change", args=[profile.pk]),
        {"user": agent.pk, "agency": other.pk, "_save": "Kaydet"},
    )
    assert response.status_code == 302
    (entry,) = entries_for(profile)
    assert entry.username == admin_user.username
    assert entry.changes == [{"field": "agency", "label": "acente", "from": str(agency), "to": str(other)}]


def test_user_staff_groups_and_permissions_changes_through_the_admin(admin_client, admin_user, agent):
    """Making an agent staff, adding a group and a permission: each recorded, the password only as changed."""
    group = Group.objects.create(name="operasyon")
    permission = Permission.objects.get(codename="change_operationpolicy")
    form = {
        "username": agent.username,
        "is_active": "on",
        "is_staff": "on",
        "groups": [group.pk],
        "user_permissions": [permission.pk],
        "date_joined_0": "2026-01-01",
        "date_joined_1": "10:00:00",
        "_save": "Kaydet",
    }
    response = admin_client.post(reverse("admin:auth_user_change", args=[agent.pk]), form)
    assert response.status_code == 302, response.context["adminform"].form.errors
    entries = entries_for(agent)
    assert {e.username for e in entries} == {admin_user.username}
    changes = [c for e in entries for c in e.changes]
    assert {"field": "is_staff", "label": "görev durumu", "from": False, "to": True} in changes
    assert {"field": "groups", "label": "gruplar", "from": [], "to": ["operasyon"]} in changes
    assert {"field": "user_permissions", "label": "kullanıcı izinleri", "from": [], "to": [str(permission)]} in changes

    password_url = reverse("admin:auth_user_password_change", args=[agent.pk])
    secret = "Yeni-Cok-Gizli-Parola-42"
    response = admin_client.post(password_url, {"password1": secret, "password2": secret, "usable_password": "true"})
    assert response.status_code == 302
    agent.refresh_from_db()
    assert {"field": "password", "label": "parola", "secret": True} in entries_for(agent)[-1].changes
    stored = json.dumps(list(AdminChange.objects.values()), default=str)
    assert secret not in stored and agent.password not in stored
    assert "ilk-parola-1" not in stored


def test_group_membership_changed_from_the_groups_side_is_recorded_on_the_user(agent):
    """`group.user_set.add(user)` changes the user's access as much as `user.groups.add`: same entry."""
    group = Group.objects.create(name="yetkili")
    group.user_set.add(agent)
    group.user_set.clear()
    entries = [e for e in AdminChange.objects.filter(model_name="user", object_id=str(agent.pk)) if e.changes]
    groups = [c for e in entries for c in e.changes if c["field"] == "groups"]
    assert [(g["from"], g["to"]) for g in reversed(groups)] == [([], ["yetkili"]), (["yetkili"], [])]


def test_service_call_is_recorded_as_the_user_it_acts_for(admin_user, seeded_accounts):
    """A service handed a user (the dashboard's "classify as") records that user, even outside a request."""
    mapping = error_mapping_classify(user=admin_user, insurer_code="anka", provider_code="AN-77", kind="timeout")
    (entry,) = entries_for(mapping)
    assert (entry.user, entry.action) == (admin_user, "add")


def test_orm_changes_outside_a_request_are_the_systems(seeded_accounts):
    """A shell or a command changing rows through the ORM is recorded, naming the system."""
    agency = Agency.objects.get(code="ACENTE2")
    agency.name = "Yeni Acente Adı"
    agency.save()
    entry = AdminChange.objects.filter(model_name="agency", object_id=str(agency.pk)).latest("id")
    assert (entry.user, entry.username, entry.action) == (None, SYSTEM_ACTOR, "change")
    assert entry.changes[0]["to"] == "Yeni Acente Adı"
    common = {"base_delay": 0.25, "max_delay": 1.5, "deadline": 10.0, "attempt_timeout": 6.0}
    policy = OperationPolicy.objects.create(
        insurer=Insurer.objects.get(code="anka"), operation="trafik_quote", max_attempts=2, **common
    )
    policy.delete()
    actions = list(AdminChange.objects.filter(model_name="operationpolicy").values_list("action", "username"))
    assert actions == [("delete", SYSTEM_ACTOR), ("add", SYSTEM_ACTOR)]


def test_management_command_changes_are_recorded_without_secrets(db, monkeypatch):
    """`createsuperuser` and `seed_demo` write audited rows: recorded as the system's, no password, no credentials."""
    secret = "komut-satiri-parolasi-9"
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", secret)
    call_command("createsuperuser", "--noinput", "--username", "kok", "--email", "kok@example.com")
    user = get_user_model().objects.get(username="kok")
    (entry,) = AdminChange.objects.filter(model_name="user", object_id=str(user.pk))
    assert (entry.action, entry.username, entry.user) == ("add", SYSTEM_ACTOR, None)
    assert {"field": "is_superuser", "label": "süper kullanıcı durumu", "from": None, "to": True} in entry.changes
    assert {"field": "password", "label": "parola", "secret": True} in entry.changes

    only_shipped_adapters(monkeypatch)  # seed_demo asks a sandbox process of its own, without a test-only insurer
    call_command("seed_demo", stdout=io.StringIO())
    account = InsurerAccount.objects.first()
    entry = AdminChange.objects.filter(model_name="insureraccount", object_id=str(account.pk)).latest("id")
    assert entry.username == SYSTEM_ACTOR
    stored = json.dumps(list(AdminChange.objects.values()), default=str)
    assert secret not in stored and user.password not in stored and account.credentials_encrypted not in stored
    for credentials in DEFAULT_ACCOUNTS.get(account.insurer.code, []):
        for value in credentials["credentials"].values():
            assert str(value) not in stored


def test_a_change_that_rolls_back_leaves_no_entry(seeded_accounts):
    """Entries are written in the caller's transaction."""
    agency = Agency.objects.get(code="ACENTE1")
    before = AdminChange.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic():
        agency.is_active = False
        agency.save()
        raise RuntimeError
    assert AdminChange.objects.count() == before


def test_a_login_writes_no_entry(client, agent):
    """Every login updates last_login: not a decision, not recorded."""
    before = AdminChange.objects.count()
    assert client.login(username="ajan-denetim", password="ilk-parola-1")
    assert AdminChange.objects.count() == before
