"""The operations view of the nightly reconciliation, from real production lists read at the
sandbox: open duplicates and not-listed policies per insurer, the last run's checks (accounts
read, lists not read, dead letters), on the health dashboard and on /metrics."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.health import WINDOWS, HealthFilter, insurer_health, reconciliation_health
from integrations.adapters.registry import registered_codes
from integrations.models import InsurerAccount
from policies import periods
from policies.models import Policy, PolicyFinding, ProductionListCheck
from policies.services import cancellations
from policies.services import reconciliation as svc
from tests.console.test_metrics import labels, operator, scrape
from tests.policies.conftest import issued, run_to_the_end
from tests.policies.test_reconciliation import outside
from work.item import WorkState

pytestmark = pytest.mark.django_db


def tonight(*, issued_to=None) -> list[ProductionListCheck]:
    """One nightly run over every account (tasks are not sent: a test transaction never commits),
    each check worked here; returns the checks in the order they were worked."""
    checks = svc.reconciliation_start(issued_to=issued_to or periods.today(), days=3)
    for check in checks:
        svc.production_check_process(check.pk)
    return [ProductionListCheck.objects.get(pk=check.pk) for check in checks]


def health_of(code: str):
    (row,) = reconciliation_health(since=timezone.now() - timedelta(hours=1), insurer_code=code)
    return row


@pytest.fixture
def findings(agents, sandbox):
    """Tonight, from the insurers' own lists: a duplicate of our anka policy (the same quote), a
    cinar policy of ours the insurer lost, and a policy issued on deniz's portal."""
    ours = issued(agents, "anka")
    outside(sandbox, "anka", "AK-P-DUP-9", quote_no=ours.issuance.insurer_quote.quote_no)
    lost = issued(agents, "cinar")
    Policy.objects.filter(pk=lost.pk).update(issued_at=timezone.now() - timedelta(hours=2))
    sandbox["cinar"].state.ledger.policies.pop(lost.policy_no)
    outside(sandbox, "deniz", f"{sandbox['deniz'].state.ledger.prefix}-P-PORTAL-9")
    tonight()
    return {"ours": ours, "duplicate": Policy.objects.get(policy_no="AK-P-DUP-9"), "lost": lost}


@pytest.fixture
def staff_client(client, db):
    client.force_login(operator("nobetci-mutabakat"))
    return client


def test_open_findings_are_counted_per_insurer_and_every_account_read(findings):
    """Each insurer's row: its open duplicates and not-listed policies, what came in from a portal,
    and the last run's checks (every active account read, none dead)."""
    accounts = InsurerAccount.objects.filter(insurer__code="anka", is_active=True).count()
    anka, cinar, deniz = health_of("anka"), health_of("cinar"), health_of("deniz")
    assert (anka.open_duplicates, anka.open_not_listed) == (1, 0)
    assert (cinar.open_duplicates, cinar.open_not_listed) == (0, 1)
    assert (deniz.imported_in_window, deniz.open_duplicates) == (1, 0)
    assert anka.imported_in_window == 1  # the duplicate came in from the list too
    for code in registered_codes():
        row = health_of(code)
        assert (row.read, row.accounts, row.unread, row.in_progress, row.dead_letters) == (accounts, accounts, 0, 0, 0)
        assert row.issued_to == periods.today() and row.last_read_at is not None
    assert anka.listed == 2  # ours and its duplicate, at the agency that has them


def test_metrics_export_open_findings_per_insurer_and_kind_from_zero(staff_client, findings):
    """`insurehub_policy_findings_open{insurer,kind}`: every insurer and kind a person must act on,
    zeros included; cancelling the duplicate brings its gauge back to 0."""
    gauge = scrape(staff_client)["insurehub_policy_findings_open"]
    expected = {labels(insurer=code, kind=kind) for code in registered_codes() for kind in ("duplicate", "not_listed")}
    assert set(gauge) == expected
    assert gauge[labels(insurer="anka", kind="duplicate")] == 1
    assert gauge[labels(insurer="cinar", kind="not_listed")] == 1
    assert sum(gauge.values()) == 2

    finding = PolicyFinding.objects.get(kind=PolicyFinding.Kind.DUPLICATE)
    agent = findings["ours"].issuance.requested_by
    cancellation = cancellations.cancellation_start(
        user=agent, policy_id=finding.policy_id, reason="duplicate", effective_on=finding.policy.starts_on
    )
    assert run_to_the_end(cancellation).state == WorkState.SUBMITTED
    assert scrape(staff_client)["insurehub_policy_findings_open"][labels(insurer="anka", kind="duplicate")] == 0


def test_a_list_that_cannot_be_read_is_an_unread_account_and_a_dead_letter(staff_client, seeded_accounts, sandbox):
    """Anka refuses one account's list: that account is unread (alerted on) and its check a dead
    letter; the next night reads it, and only the dead letter is left, to replay or leave."""
    sandbox["anka"].state.add_faults([{"operation": "policy_list", "fault": "error", "code": "VALIDATION"}])
    checks = [check for check in tonight() if check.account.insurer.code == "anka"]
    assert sorted(check.state for check in checks) == [WorkState.FAILED, WorkState.SUBMITTED]
    anka = health_of("anka")
    assert (anka.read, anka.unread, anka.dead_letters) == (1, 1, 1)
    metrics = scrape(staff_client)
    assert metrics["insurehub_reconciliation_lists_unread"][labels(insurer="anka")] == 1
    assert metrics["insurehub_reconciliation_lists_read"][labels(insurer="anka")] == 1
    assert metrics["insurehub_reconciliation_lists_unread"][labels(insurer="deniz")] == 0
    dead = labels(work="production_check", insurer="anka", product="")
    assert metrics["insurehub_work_dead_letters"][dead] == 1

    tonight(issued_to=periods.today())  # the next night: every list read
    anka = health_of("anka")
    assert (anka.read, anka.unread, anka.dead_letters) == (2, 0, 1)
    assert scrape(staff_client)["insurehub_reconciliation_lists_unread"][labels(insurer="anka")] == 0


def test_the_dashboard_shows_the_reconciliation_and_links_to_what_needs_a_person(admin_client, findings):
    """The section's numbers per insurer, marked when bad, each linking to the admin list that
    holds the records behind it."""
    response = admin_client.get(reverse("integrations_health"), {"window": "1d"})
    assert response.status_code == 200
    rows = {row.insurer_code: row for row in response.context["reconciliation"]}
    assert rows["anka"].open_duplicates == 1 and rows["cinar"].open_not_listed == 1
    html = response.content.decode()
    assert '<table id="reconciliation">' in html
    findings_url = reverse("admin:policies_policyfinding_changelist")
    link = f'{findings_url}?kind__exact=duplicate&amp;cozum=acik&amp;sirket=anka">1</a>'
    assert f'<td class="num bad" data-field="open_duplicates"><a href="{link}</td>' in html
    listed = admin_client.get(f"{findings_url}?kind__exact=duplicate&cozum=acik&sirket=anka").content.decode()
    assert "AK-P-DUP-9" in listed and findings["lost"].policy_no not in listed
    only_cinar = admin_client.get(reverse("integrations_health"), {"insurer": "cinar"})
    assert [row.insurer_code for row in only_cinar.context["reconciliation"]] == ["cinar"]


def test_the_dashboards_work_table_counts_production_checks_and_cancellations(admin_client, findings):
    """Production-list checks (no one product's work) and cancellations are durable work beside
    issuances and sync items; a product filter leaves the checks out."""
    agent = findings["ours"].issuance.requested_by
    cancellations.cancellation_start(
        user=agent, policy_id=findings["ours"].pk, reason="customer_request", effective_on=findings["ours"].starts_on
    )
    rows = admin_client.get(reverse("integrations_health")).context["rows"]
    work = {(row.insurer_code, row.product): row.work for row in rows}
    anka_accounts = InsurerAccount.objects.filter(insurer__code="anka").count()
    assert work[("anka", "")]["production_check"].submitted == anka_accounts
    assert work[("anka", "trafik")]["cancellation"].queued == 1
    trafik_only = insurer_health(health=HealthFilter.last(WINDOWS["1h"], product="trafik"))
    assert all("production_check" not in row.work for row in trafik_only)
