"""Tuning insurers in Django admin: validation, write-only credentials, and changes reaching running workers."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from integrations.adapters.registry import registered_codes
from integrations.audit import SYSTEM_ACTOR
from integrations.models import (
    AdminChange,
    ErrorMapping,
    Insurer,
    InsurerAccount,
    OperationPolicy,
    RetryBudgetState,
)
from integrations.operations import Operation
from integrations.retry_policies import (
    DEFAULT_POLICIES,
    POLICY_CACHE_SECONDS,
    clear_policy_cache,
    default_policy,
    policy_for,
)
from tests import samples
from tests.conftest import wait_until

QUICK_POLICY = {
    "max_attempts": 3,
    "base_delay": 0.05,
    "max_delay": 0.1,
    "deadline": 10.0,
    "attempt_timeout": 2.0,
    "unknown_max_attempts": 2,
    "retry_budget_ratio": 0.2,
    "rate_floor": 0.5,
    "rate_ceiling": 50.0,
    "throttle_threshold": 0.02,
    "throttle_spread": 0.2,
    "rate_burst": 5,
}


@pytest.fixture(autouse=True)
def fresh_policy_cache():
    """Policies made here must not outlive the test's database in this process's cache."""
    clear_policy_cache()
    yield
    clear_policy_cache()


def policy_form(policy: OperationPolicy, **changes: Any) -> dict[str, Any]:
    """The change form as the browser posts it: every field, some of them changed."""
    data = {name: getattr(policy, name) for name in QUICK_POLICY}
    data.update(insurer=policy.insurer_id, operation=policy.operation, _save="Kaydet")
    data.update(changes)
    return data


def change_url(obj) -> str:
    return reverse(f"admin:integrations_{obj._meta.model_name}_change", args=[obj.pk])


@pytest.fixture
def anka_policy(seeded_accounts) -> OperationPolicy:
    return OperationPolicy.objects.create(
        insurer=Insurer.objects.get(code="anka"), operation="trafik_quote", **QUICK_POLICY
    )


# --- Validation ---------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"base_delay": 2.0, "max_delay": 1.0}, "En uzun bekleme taban beklemeden küçük olamaz."),
        ({"max_attempts": 0}, "Bu değerin 1 değerinden büyük veya eşit olduğuna emin olun."),
        ({"max_attempts": 21}, "Bu değerin 20 değerinden az veya eşit olduğuna emin olun."),
        ({"deadline": 0}, "Bu değerin 0.1 değerinden büyük veya eşit olduğuna emin olun."),
        ({"rate_floor": 10.0, "rate_ceiling": 5.0}, "En yüksek hız en düşük hızdan küçük olamaz."),
        ({"attempt_timeout": 20.0, "deadline": 10.0}, "Deneme zaman aşımı toplam süre sınırını aşamaz."),
        ({"rate_burst": 0}, "Bu değerin 1 değerinden büyük veya eşit olduğuna emin olun."),
    ],
)
def test_policy_form_refuses_unsafe_values_with_a_clear_message(admin_client, anka_policy, changes, message):
    """Cap below base, attempts out of 1..20, a zero deadline...: refused, explained, nothing saved."""
    response = admin_client.post(change_url(anka_policy), policy_form(anka_policy, **changes))
    assert response.status_code == 200
    assert message in response.content.decode()
    anka_policy.refresh_from_db()
    assert anka_policy.max_attempts == 3 and anka_policy.deadline == 10.0
    assert not AdminChange.objects.exclude(username=SYSTEM_ACTOR).exists()  # the fixture's own add aside


@pytest.mark.django_db
def test_policy_list_view_edits_are_validated_too(admin_client, anka_policy):
    """An unsafe value typed into the list view is refused the same way."""
    data = changelist_form([anka_policy], max_delay=0.01)
    response = admin_client.post(reverse("admin:integrations_operationpolicy_changelist"), data)
    assert response.status_code == 200
    assert "En uzun bekleme taban beklemeden küçük olamaz." in response.content.decode()
    anka_policy.refresh_from_db()
    assert anka_policy.max_delay == 0.1


def changelist_form(policies: list[OperationPolicy], **changes: Any) -> dict[str, Any]:
    """The policy list's inline-edit formset as posted, with `changes` applied to the first row."""
    from integrations.admin import POLICY_TUNABLES

    data: dict[str, Any] = {
        "form-TOTAL_FORMS": len(policies),
        "form-INITIAL_FORMS": len(policies),
        "form-MIN_NUM_FORMS": 0,
        "form-MAX_NUM_FORMS": 1000,
        "_save": "Kaydet",
    }
    for i, policy in enumerate(policies):
        data[f"form-{i}-id"] = policy.pk
        for name in POLICY_TUNABLES:
            data[f"form-{i}-{name}"] = changes.get(name, getattr(policy, name)) if i == 0 else getattr(policy, name)
    return data


@pytest.mark.django_db
def test_new_policy_form_starts_from_the_operations_defaults(admin_client):
    """Adding a kasko policy pre-fills kasko's defaults, so an admin changes only what must change."""
    response = admin_client.get(reverse("admin:integrations_operationpolicy_add") + "?operation=kasko_quote")
    form = response.context["adminform"].form
    assert form.initial["max_attempts"] == 4 and form.initial["max_delay"] == 4.0


# --- Every policy in force, defaults included ---------------------------------------------------


def policies_in_effect(client, **filters: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The policy list page's "in effect" rows, by (insurer code, operation)."""
    response = client.get(reverse("admin:integrations_operationpolicy_changelist"), filters)
    assert response.status_code == 200
    return {
        (row["pair"].insurer.code, row["pair"].operation.value): row for row in response.context["policies_in_effect"]
    }


@pytest.mark.django_db
def test_fresh_install_lists_every_insurer_and_operation_with_its_defaults(admin_client, seeded_accounts):
    """No policy rows yet: every pair is listed with the values workers apply, Boğaziçi's 30 s settling too."""
    assert not OperationPolicy.objects.exists()
    rows = policies_in_effect(admin_client)

    codes = set(Insurer.objects.values_list("code", flat=True))
    assert codes == set(registered_codes())
    assert set(rows) == {(code, op.value) for code in codes for op in Operation}
    for (code, operation), row in rows.items():
        assert row["pair"].override is None
        assert row["pair"].policy == default_policy(operation, code) == policy_for(code, operation)
    assert rows[("bogazici", "issue_policy")]["pair"].policy.settling_seconds == 30.0
    assert rows[("anka", "issue_policy")]["pair"].policy.settling_seconds == 0.0

    page = admin_client.get(reverse("admin:integrations_operationpolicy_changelist")).content.decode()
    bogazici_issue = page.split('data-insurer="bogazici" data-operation="issue_policy"')[1].split("</tr>")[0]
    assert "varsayılan" in bogazici_issue and "<td>30</td>" in bogazici_issue and "Özelleştir" in bogazici_issue


@pytest.mark.django_db
def test_customizing_a_default_from_the_list_changes_only_that_pair(admin_client, admin_user, seeded_accounts):
    """ "Özelleştir" opens the pair's defaults; the first save creates its row, audited, and only it changes."""
    row = policies_in_effect(admin_client)[("bogazici", "issue_policy")]
    form = admin_client.get(row["edit_url"]).context["adminform"].form
    assert form.initial["max_attempts"] == 5 and form.initial.get("settling_seconds") is None
    data = {name: form.initial[name] for name in QUICK_POLICY}
    data.update(insurer=form.initial["insurer"], operation="issue_policy", _save="Kaydet")
    data.update(max_attempts=2, settling_seconds=45)

    assert admin_client.post(row["edit_url"], data).status_code == 302

    clear_policy_cache()
    assert policy_for("bogazici", "issue_policy").max_attempts == 2
    assert policy_for("bogazici", "issue_policy").settling_seconds == 45.0
    assert policy_for("bogazici", "kasko_quote") == default_policy("kasko_quote", "bogazici")
    assert policy_for("anka", "issue_policy") == default_policy("issue_policy", "anka")
    entry = AdminChange.objects.get(model_name="operationpolicy")
    assert (entry.action, entry.user, entry.insurer_code) == ("add", admin_user, "bogazici")
    rows = policies_in_effect(admin_client)
    customized = [key for key, row in rows.items() if row["pair"].override is not None]
    assert customized == [("bogazici", "issue_policy")]
    assert rows[("bogazici", "issue_policy")]["edit_url"] == change_url(
        rows[("bogazici", "issue_policy")]["pair"].override
    )


@pytest.mark.django_db
def test_empty_settling_time_follows_the_insurers_stated_time(admin_client, seeded_accounts):
    """An override that leaves the settling time empty changes its other values and keeps Boğaziçi's 30 s."""
    row = policies_in_effect(admin_client)[("bogazici", "issue_policy")]
    form = admin_client.get(row["edit_url"]).context["adminform"].form
    data = {name: form.initial[name] for name in QUICK_POLICY}
    data.update(insurer=form.initial["insurer"], operation="issue_policy", deadline=90.0, _save="Kaydet")
    assert admin_client.post(row["edit_url"], data).status_code == 302

    clear_policy_cache()
    assert policy_for("bogazici", "issue_policy").deadline == 90.0
    assert policy_for("bogazici", "issue_policy").settling_seconds == 30.0


@pytest.mark.django_db
def test_settling_time_is_refused_outside_issuance(admin_client, anka_policy):
    """Only issuance reads a settling time: typed in for a quote, it is refused rather than ignored."""
    response = admin_client.post(change_url(anka_policy), policy_form(anka_policy, settling_seconds=10))
    assert response.status_code == 200
    assert "Sonuçlanma süresi yalnız poliçeleştirme (issue_policy) için girilir." in response.content.decode()


@pytest.mark.django_db
def test_a_changed_code_default_reaches_pairs_without_a_row(admin_client, anka_policy, monkeypatch):
    """Pairs nobody customized follow the code; a customized pair keeps what the admin saved."""
    changed = DEFAULT_POLICIES[Operation.TRAFIK_QUOTE].with_overrides(max_attempts=7)
    monkeypatch.setitem(DEFAULT_POLICIES, Operation.TRAFIK_QUOTE, changed)
    rows = policies_in_effect(admin_client)
    assert rows[("deniz", "trafik_quote")]["pair"].policy.max_attempts == 7
    assert rows[("anka", "trafik_quote")]["pair"].policy.max_attempts == 3
    assert rows[("anka", "trafik_quote")]["cells"][0] == {"value": "3", "default": "7", "differs": True}


@pytest.mark.django_db
def test_reset_to_default_from_the_list_removes_the_override_audited(admin_client, anka_policy):
    """ "Varsayılana dön" deletes the admin's row (recorded) and the pair is back on the defaults."""
    assert policies_in_effect(admin_client)[("anka", "trafik_quote")]["pair"].override == anka_policy
    response = admin_client.post(
        reverse("admin:integrations_operationpolicy_changelist"),
        {"action": "reset_to_default", "_selected_action": [anka_policy.pk]},
    )
    assert response.status_code == 302
    assert not OperationPolicy.objects.exists()
    clear_policy_cache()
    assert policy_for("anka", "trafik_quote") == default_policy("trafik_quote", "anka")
    assert AdminChange.objects.exclude(username=SYSTEM_ACTOR).get(model_name="operationpolicy").action == "delete"
    assert policies_in_effect(admin_client)[("anka", "trafik_quote")]["pair"].override is None


@pytest.mark.django_db
def test_insurer_link_shows_that_insurers_policies(admin_client, seeded_accounts):
    """The insurer list's "politikalar" link lists that insurer's six operations, defaults included."""
    deniz = Insurer.objects.get(code="deniz")
    rows = policies_in_effect(admin_client, insurer__id__exact=str(deniz.pk))
    assert set(rows) == {("deniz", op.value) for op in Operation}


# --- Insurers and accounts ----------------------------------------------------------------------


@pytest.mark.django_db
def test_insurer_is_added_with_its_products(admin_client):
    """Name, code, address, active flag and products sold, ticked as checkboxes."""
    response = admin_client.post(
        reverse("admin:integrations_insurer_add"),
        {
            "code": "ege",
            "name": "Ege Sigorta",
            "base_url": "http://127.0.0.1:9999",
            "is_active": "on",
            "products": ["trafik", "dask"],
        },
    )
    assert response.status_code == 302
    insurer = Insurer.objects.get(code="ege")
    assert insurer.products == ["trafik", "dask"] and insurer.is_active


@pytest.mark.django_db
def test_credentials_are_write_only_and_encrypted(admin_client, seeded_accounts):
    """New credentials are stored encrypted, never shown back; leaving the field empty keeps them."""
    account = InsurerAccount.objects.select_related("insurer", "agency").get(
        insurer__code="anka", agency__code="ACENTE1"
    )
    form = {
        "agency": account.agency_id,
        "insurer": account.insurer_id,
        "agency_code": account.agency_code,
        "contracted_rate": 12.5,
        "is_active": "on",
        "_save": "Kaydet",
    }
    admin_client.post(change_url(account), {**form, "new_credentials": '{"api_key": "gizli-anahtar-42"}'})
    account.refresh_from_db()
    assert account.get_credentials() == {"api_key": "gizli-anahtar-42"}
    assert "gizli-anahtar-42" not in account.credentials_encrypted
    page = admin_client.get(change_url(account)).content.decode()
    assert "gizli-anahtar-42" not in page and account.credentials_encrypted not in page

    admin_client.post(change_url(account), {**form, "contracted_rate": 8.0, "new_credentials": ""})
    account.refresh_from_db()
    assert account.contracted_rate == 8.0 and account.get_credentials() == {"api_key": "gizli-anahtar-42"}


@pytest.mark.django_db
def test_error_mapping_is_added_in_admin(admin_client, seeded_accounts):
    """An admin maps a raw insurer code to a kind, overriding the adapter's table."""
    bogazici = Insurer.objects.get(code="bogazici")
    response = admin_client.post(
        reverse("admin:integrations_errormapping_add"),
        {"insurer": bogazici.pk, "provider_code": "BS-950", "kind": "unavailable", "note": "bakım"},
    )
    assert response.status_code == 302
    assert ErrorMapping.objects.get(insurer=bogazici, provider_code="BS-950").kind == "unavailable"


# --- A change reaching a running worker ---------------------------------------------------------


@pytest.fixture
def anka_only_agent(transactional_db, seeded_accounts):
    """An ACENTE1 agent, with Anka the only active insurer so each quote request calls Anka alone."""
    from agencies.models import Agency, AgentProfile

    Insurer.objects.exclude(code="anka").update(is_active=False)
    user = get_user_model().objects.create_user("ajan-isci-testi")
    AgentProfile.objects.create(user=user, agency=Agency.objects.get(code="ACENTE1"))
    return user


def anka_calls_for_one_quote(sandbox, agent) -> int:
    """Ask for a trafik quote through the worker and wait for Anka's answer; returns the calls Anka got."""
    from quotes.models import InsurerQuote
    from quotes.services.quote_requests import quote_request_create

    # A full retry budget for each quote (no row is a full bucket): the budget is not under test here.
    RetryBudgetState.objects.filter(insurer_code="anka").delete()
    before = sandbox["anka"].state.counts()["received"].get("trafik_quote", 0)
    request = quote_request_create(user=agent, product="trafik", data=samples.TRAFIK)
    wait_until(
        lambda: InsurerQuote.objects.filter(request=request, state__in=InsurerQuote.FINAL_STATES).exists(),
        timeout=30,
    )
    return sandbox["anka"].state.counts()["received"].get("trafik_quote", 0) - before


def test_admin_policy_change_takes_effect_in_a_running_worker(qcluster, sandbox, anka_only_agent, client):
    """max_attempts 3 → 1 saved in admin: within seconds the worker (never restarted) calls a failing insurer once."""
    sandbox["anka"].state.add_faults(
        [{"operation": "trafik_quote", "fault": "error", "code": "SERVICE_UNAVAILABLE", "rate": 1.0}]
    )
    policy = OperationPolicy.objects.create(
        insurer=Insurer.objects.get(code="anka"), operation="trafik_quote", **QUICK_POLICY
    )
    worker_pid = qcluster.pid
    assert anka_calls_for_one_quote(sandbox, anka_only_agent) == 3  # the worker now holds max_attempts=3

    operator = get_user_model().objects.create_superuser("nobetci-admin", password="x")
    client.force_login(operator)
    response = client.post(change_url(policy), policy_form(policy, max_attempts=1))
    assert response.status_code == 302
    saved_at = time.monotonic()

    # Until each worker process's cached copy expires, a run may still see the old policy...
    meanwhile = []
    while time.monotonic() - saved_at < POLICY_CACHE_SECONDS + 0.5:
        meanwhile.append(anka_calls_for_one_quote(sandbox, anka_only_agent))
    assert set(meanwhile) <= {3, 1}
    # ...and after that, every worker process calls the failing insurer exactly once.
    assert [anka_calls_for_one_quote(sandbox, anka_only_agent) for _ in range(4)] == [1, 1, 1, 1]
    assert qcluster.poll() is None and qcluster.pid == worker_pid  # no restart
    entry = AdminChange.objects.get(model_name="operationpolicy", object_id=str(policy.pk), action="change")
    assert entry.changes == [{"field": "max_attempts", "label": "en fazla deneme", "from": 3, "to": 1}]
