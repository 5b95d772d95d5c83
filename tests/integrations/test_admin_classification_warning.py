"""Classifying a code is told what it means for money: a permanent class of a code seen on a send
to an insurer that does not deduplicate needs a confirmation, on the dashboard and in the admin;
a code seen only on look-ups is said never to prove anything."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from integrations.audit import (
    error_mapping_classify,
    error_mapping_issuance_risk,
    error_mapping_seen_on_look_ups_only,
)
from integrations.models import Attempt, ErrorMapping

pytestmark = pytest.mark.django_db


def seen(insurer_code: str, provider_code: str, *, operation: str = "issue_policy", call: str = "main") -> None:
    now = datetime.now(UTC)
    Attempt.objects.create(
        insurer_code=insurer_code,
        operation=operation,
        call=call,
        attempt_no=1,
        ok=False,
        provider_code=provider_code,
        error_class="unknown",
        error_kind="unclassified",
        ambiguous=True,
        latency_ms=5.0,
        started_at=now,
        finished_at=now,
    )


def test_a_code_seen_on_a_bogazici_send_is_a_risk_and_one_at_a_deduplicating_insurer_is_not(seeded_accounts):
    seen("bogazici", "BS-977")
    seen("anka", "WEIRD_503")
    assert "ikinci poliçe" in error_mapping_issuance_risk(insurer_code="bogazici", provider_code="BS-977")
    assert error_mapping_issuance_risk(insurer_code="anka", provider_code="WEIRD_503") == ""
    assert error_mapping_issuance_risk(insurer_code="bogazici", provider_code="NEVER_SEEN") == ""


def test_a_permanent_class_of_a_risky_code_needs_the_confirmation(seeded_accounts, admin_user):
    """Without it nothing is written; with it, the mapping is made (and audited as usual)."""
    seen("bogazici", "BS-977")
    with pytest.raises(ValidationError, match="onaylamadan"):
        error_mapping_classify(user=admin_user, insurer_code="bogazici", provider_code="BS-977", kind="business_reject")
    assert not ErrorMapping.objects.exists()
    error_mapping_classify(user=admin_user, insurer_code="bogazici", provider_code="BS-977", kind="unavailable")
    mapping = error_mapping_classify(
        user=admin_user, insurer_code="bogazici", provider_code="BS-977", kind="business_reject", risk_confirmed=True
    )
    assert mapping.kind == "business_reject"


def test_the_dashboard_shows_the_risk_and_refuses_an_unconfirmed_permanent_class(seeded_accounts, admin_client):
    seen("bogazici", "BS-977")
    page = admin_client.get(reverse("integrations_health")).content.decode()
    assert "issuance-risk" in page and "İkinci poliçe riskini anladım" in page
    response = admin_client.post(
        reverse("integrations_health_classify"),
        {"insurer": "bogazici", "provider_code": "BS-977", "kind": "expired"},
        follow=True,
    )
    assert "sınıflandırılamadı" in response.content.decode()
    assert not ErrorMapping.objects.exists()
    admin_client.post(
        reverse("integrations_health_classify"),
        {"insurer": "bogazici", "provider_code": "BS-977", "kind": "expired", "risk_confirmed": "1"},
    )
    assert ErrorMapping.objects.get(provider_code="BS-977").kind == "expired"


def test_the_admin_form_asks_for_the_same_confirmation(seeded_accounts, admin_client):
    from integrations.models import Insurer

    seen("bogazici", "BS-977")
    bogazici = Insurer.objects.get(code="bogazici")
    add = reverse("admin:integrations_errormapping_add")
    response = admin_client.post(add, {"insurer": bogazici.pk, "provider_code": "BS-977", "kind": "validation"})
    assert response.status_code == 200 and "onaylamadan" in response.content.decode()
    assert not ErrorMapping.objects.exists()
    response = admin_client.post(
        add, {"insurer": bogazici.pk, "provider_code": "BS-977", "kind": "validation", "risk_confirmed": "on"}
    )
    assert response.status_code == 302
    assert ErrorMapping.objects.get(provider_code="BS-977").kind == "validation"


def test_a_code_seen_only_on_look_ups_is_said_to_prove_nothing(seeded_accounts, admin_client):
    seen("bogazici", "BS-978", call="lookup")
    assert error_mapping_seen_on_look_ups_only(insurer_code="bogazici", provider_code="BS-978")
    assert error_mapping_issuance_risk(insurer_code="bogazici", provider_code="BS-978") == ""
    page = admin_client.get(reverse("integrations_health")).content.decode()
    assert "look-up-only" in page and "hiçbir zaman kanıtlamaz" in page


def test_a_look_up_refusal_mapped_to_permanent_still_proves_nothing(
    agents, sandbox, seeded_accounts, admin_user, django_capture_on_commit_callbacks
):
    """Even an admin's permanent mapping of a look-up's code leaves the outcome unknown: the
    issuance is asked about again and ends with the one policy the lost send made."""
    from integrations.retry_policies import clear_policy_cache
    from tests.quotes.conftest import issuance_policy_override
    from tests.quotes.test_issuance import quoted, start
    from tests.quotes.test_issuance_safety import run_to_the_end
    from work.item import WorkState

    issuance_policy_override(
        max_attempts=4, base_delay=0.05, max_delay=0.2, deadline=20.0, attempt_timeout=1.0, settling_seconds=0.0
    )
    # The mapping drops this process's cache after its commit: run that callback (the test's own
    # transaction never commits), or an earlier test's cached table would hide the new mapping.
    with django_capture_on_commit_callbacks(execute=True):
        error_mapping_classify(user=admin_user, insurer_code="bogazici", provider_code="BS-978", kind="business_reject")
    row = quoted(agents, "bogazici")
    sandbox["bogazici"].state.add_faults(
        [
            {"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset"},
            {"operation": "issue_lookup", "fault": "error", "code": "BS-978", "times": 1},
        ]
    )
    issuance = run_to_the_end(start(agents, row))
    assert issuance.state == WorkState.SUBMITTED
    assert sandbox["bogazici"].state.counts()["received"]["issue_policy"] == 1
    clear_policy_cache()
