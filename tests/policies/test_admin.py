"""Admin of the policy operations: production-list checks are dead letters that replay, findings a
read-only list filtered by kind, agency, insurer and whether resolved."""

from __future__ import annotations

import pytest
from django.urls import reverse

from policies import periods
from policies.models import PolicyFinding, ProductionListCheck
from policies.services import reconciliation as svc
from tests.policies.test_reconciliation import outside
from tests.work.sends import hold_work_sends
from work.item import WorkState

pytestmark = pytest.mark.django_db


@pytest.fixture
def refused_check(seeded_accounts, sandbox) -> ProductionListCheck:
    """Anka refuses ACENTE1's list once (a permanent answer): a FAILED check, a dead letter."""
    sandbox["anka"].state.add_faults([{"operation": "policy_list", "fault": "error", "code": "AUTH_INVALID"}])
    (check,) = [
        c
        for c in svc.reconciliation_start(issued_to=periods.today(), days=3)
        if c.account.insurer.code == "anka" and c.account.agency.code == "ACENTE1"
    ]
    assert svc.production_check_process(check.pk) == WorkState.FAILED
    return ProductionListCheck.objects.get(pk=check.pk)


def test_a_dead_check_shows_what_was_asked_and_what_the_insurer_said(admin_client, refused_check):
    """The list filters by state and insurer; a check shows its range, payload and the raw answer."""
    url = reverse("admin:policies_productionlistcheck_changelist")
    listed = admin_client.get(url, {"state__in": "FAILED,DEFERRED", "sirket": "anka"})
    assert listed.status_code == 200
    assert list(listed.context["cl"].result_list) == [refused_check]
    assert admin_client.get(url, {"state__in": "FAILED,DEFERRED", "sirket": "cinar"}).context["cl"].result_count == 0
    page = admin_client.get(reverse("admin:policies_productionlistcheck_change", args=[refused_check.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and "AUTH_INVALID" in html
    assert f"&quot;issued_to&quot;: &quot;{periods.today().isoformat()}&quot;" in html
    assert not admin_client.get(url).context["has_add_permission"]


def test_replaying_a_dead_check_reads_the_list_again_and_finds_what_it_holds(
    admin_client, refused_check, sandbox, django_capture_on_commit_callbacks, monkeypatch
):
    """After the fix, "Seçilenleri yeniden dene" queues the same range again; read, its portal
    policy comes into the portfolio."""
    sent: list[int] = []
    hold_work_sends(monkeypatch, ProductionListCheck, into=sent)
    outside(sandbox, "anka", "AK-P-PORTAL-77")
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:policies_productionlistcheck_changelist"),
            {"action": "replay_selected", "_selected_action": [refused_check.pk]},
            follow=True,
        )
    assert "1 kayıt en eskiden başlayarak yeniden kuyruğa alındı." in response.content.decode()
    assert sent == [refused_check.pk]
    assert svc.production_check_process(refused_check.pk) == WorkState.SUBMITTED
    check = ProductionListCheck.objects.get(pk=refused_check.pk)
    assert (check.issued_from, check.issued_to) == (refused_check.issued_from, refused_check.issued_to)
    assert PolicyFinding.objects.get(policy__policy_no="AK-P-PORTAL-77").kind == PolicyFinding.Kind.IMPORTED


def test_findings_are_a_read_only_list_filtered_by_kind_agency_insurer_and_resolution(
    admin_client, seeded_accounts, sandbox
):
    outside(sandbox, "anka", "AK-P-PORTAL-1")
    outside(sandbox, "cinar", f"{sandbox['cinar'].state.ledger.prefix}-P-PORTAL-2", agency="ACENTE2")
    for check in svc.reconciliation_start(issued_to=periods.today(), days=3):
        assert svc.production_check_process(check.pk) == WorkState.SUBMITTED
    cinar = PolicyFinding.objects.get(policy__insurer__code="cinar")
    PolicyFinding.objects.filter(pk=cinar.pk).update(resolved_at=cinar.found_at)
    url = reverse("admin:policies_policyfinding_changelist")

    def shown(**params) -> set[str]:
        response = admin_client.get(url, params)
        assert response.status_code == 200 and "?e=1" not in response.get("Location", "")
        return {finding.policy.policy_no for finding in response.context["cl"].result_list}

    everything = {"AK-P-PORTAL-1", cinar.policy.policy_no}
    assert shown() == everything
    assert shown(kind__exact="imported") == everything and shown(kind__exact="duplicate") == set()
    assert shown(cozum="acik") == {"AK-P-PORTAL-1"} and shown(cozum="cozuldu") == {cinar.policy.policy_no}
    assert shown(sirket="cinar") == {cinar.policy.policy_no}
    assert shown(agency__id__exact=cinar.agency_id) == {cinar.policy.policy_no}
    change = reverse("admin:policies_policyfinding_change", args=[cinar.pk])
    page = admin_client.get(change)
    assert page.status_code == 200 and "Şirketin kendi kanalından" in page.content.decode()
    assert admin_client.post(change, {"note": "değişti"}).status_code == 403
    assert admin_client.get(reverse("admin:policies_policyfinding_add")).status_code == 403
    assert admin_client.get(reverse("admin:policies_policyfinding_delete", args=[cinar.pk])).status_code == 403
    assert PolicyFinding.objects.get(pk=cinar.pk).note.startswith("Şirketin kendi kanalından")


def test_the_replay_command_replays_dead_checks_too(refused_check, monkeypatch, django_capture_on_commit_callbacks):
    """`manage.py replay_dead_letters --model production_check` is the admin action's path."""
    import io

    from django.core.management import call_command

    sent: list[int] = []
    hold_work_sends(monkeypatch, ProductionListCheck, into=sent)
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("replay_dead_letters", "--model", "production_check", "--all", stdout=out)
    assert f"Replayed 1 production_check dead letters, oldest first: {refused_check.pk}." in out.getvalue()
    assert sent == [refused_check.pk]
    assert ProductionListCheck.objects.get(pk=refused_check.pk).state == WorkState.QUEUED
