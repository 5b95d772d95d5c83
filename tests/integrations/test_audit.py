"""The audit trail: every admin add, change and delete of what tunes an insurer, with who, when and from → to."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.urls import reverse

from integrations.admin import POLICY_TUNABLES
from integrations.models import AdminChange, ErrorMapping, Insurer, InsurerAccount, OperationPolicy
from integrations.policies import clear_policy_cache

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


def entries_for(obj) -> list[AdminChange]:
    return list(AdminChange.objects.filter(model_name=obj._meta.model_name, object_id=str(obj.pk)).order_by("id"))


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
    (entry,) = AdminChange.objects.all()
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
    assert not AdminChange.objects.exists()


def test_audit_trail_is_visible_and_read_only_in_admin(admin_client, policies):
    """Admins read the trail (list and detail, with a link from each audited row); nobody edits or deletes it."""
    policy = policies[0]
    data = {name: getattr(policy, name) for name in [*POLICY_TUNABLES, "throttle_spread"]}
    data.update(insurer=policy.insurer_id, operation=policy.operation, max_attempts=2, _save="Kaydet")
    admin_client.post(change_url(policy), data)
    entry = AdminChange.objects.get()

    listing = admin_client.get(reverse("admin:integrations_adminchange_changelist")).content.decode()
    assert "en fazla deneme: 3 → 2" in listing
    trail = admin_client.get(
        reverse("admin:integrations_adminchange_changelist") + f"?model_name=operationpolicy&object_id={policy.pk}"
    )
    assert trail.status_code == 200 and list(trail.context["cl"].result_list) == [entry]
    assert "Değişiklik geçmişi" in admin_client.get(change_url(policy)).content.decode()

    assert admin_client.get(reverse("admin:integrations_adminchange_add")).status_code == 403
    assert admin_client.post(reverse("admin:integrations_adminchange_delete", args=[entry.pk])).status_code == 403
    detail = admin_client.get(reverse("admin:integrations_adminchange_change", args=[entry.pk])).content.decode()
    assert 'name="_save"' not in detail
