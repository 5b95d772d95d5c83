"""The nightly reconciliation against each insurer's production list, on the insurer's real list:
outside policies imported, duplicates found and cancelled in one click, ours the insurer lacks flagged."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from integrations.adapters.registry import registered_codes
from notifications.models import Notification
from policies import periods
from policies.models import Cancellation, Policy, PolicyFinding, ProductionListCheck
from policies.services import reconciliation as svc
from tests.policies.conftest import issued, run_to_the_end
from tests.quotes.policy_samples import numbers_holding_a_vkn
from work.item import WorkState

pytestmark = pytest.mark.django_db

INSURERS = registered_codes()


def reconcile_now(code: str) -> list[ProductionListCheck]:
    """Tonight's run for one insurer's accounts, with today in the range (tests issue today)."""
    checks = [c for c in svc.reconciliation_start(issued_to=periods.today(), days=3) if c.account.insurer.code == code]
    for check in ProductionListCheck.objects.exclude(pk__in=[c.pk for c in checks]):
        check.delete()
    for check in checks:
        assert svc.production_check_process(check.pk) == WorkState.SUBMITTED, ProductionListCheck.objects.get(
            pk=check.pk
        ).error_message
    return checks


def outside(sandbox, code: str, policy_no: str, **fields) -> None:
    today = periods.today()
    sandbox[code].state.seed_policies(
        [
            {
                "policy_no": policy_no,
                "status": "ACTIVE",
                "agency": "ACENTE1",
                "product": "trafik",
                "premium": "2100.00",
                "starts_on": today.isoformat(),
                "ends_on": (today + timedelta(days=365)).isoformat(),
                "issued_on": today.isoformat(),
                **fields,
            }
        ]
    )


@pytest.mark.parametrize("code", INSURERS)
def test_a_policy_issued_on_the_insurers_portal_is_imported_into_the_portfolio(agents, sandbox, seeded_accounts, code):
    prefix = sandbox[code].state.ledger.prefix
    outside(sandbox, code, f"{prefix}-P-PORTAL-1")
    reconcile_now(code)
    policy = Policy.objects.get(policy_no=f"{prefix}-P-PORTAL-1")
    assert policy.source == "insurer_list" and policy.agency.code == "ACENTE1" and policy.premium == Decimal("2100.00")
    assert PolicyFinding.objects.get(policy=policy).kind == PolicyFinding.Kind.IMPORTED
    reconcile_now(code)  # the next night finds it again, as nothing new
    assert PolicyFinding.objects.filter(policy=policy).count() == 1


@pytest.mark.parametrize("code", INSURERS)
def test_a_second_policy_for_one_quote_is_a_duplicate_cancelled_in_one_click(
    agents, sandbox, quick_cancel_policy, desk, django_capture_on_commit_callbacks, code
):
    """The insurer holds two policies for our quote (one made by a lost answer somewhere): the
    unknown one is imported, flagged, the agency told, and one click cancels it as a duplicate."""
    ours = issued(agents, code)
    quote_no = ours.issuance.insurer_quote.quote_no
    prefix = sandbox[code].state.ledger.prefix
    outside(sandbox, code, f"{prefix}-P-DUP-1", quote_no=quote_no)
    with django_capture_on_commit_callbacks(execute=True):
        reconcile_now(code)
    duplicate = Policy.objects.get(policy_no=f"{prefix}-P-DUP-1")
    finding = PolicyFinding.objects.get(policy=duplicate, kind=PolicyFinding.Kind.DUPLICATE)
    assert finding.original == ours and quote_no in finding.note
    assert Notification.objects.filter(kind=Notification.Kind.DUPLICATE_FOUND).exists()
    page = desk.get(f"/mukerrer-policeler/{finding.pk}/iptal/").content.decode()
    assert duplicate.policy_no in page and ours.policy_no in page  # the confirmation names both
    response = desk.post(f"/mukerrer-policeler/{finding.pk}/iptal/")
    cancellation = Cancellation.objects.get(policy=duplicate)
    assert response.status_code == 302 and cancellation.reason == "duplicate"
    done = run_to_the_end(cancellation)
    assert done.state == WorkState.SUBMITTED and done.refund == duplicate.premium
    assert PolicyFinding.objects.get(pk=finding.pk).resolved_at is not None
    assert sandbox[code].state.counts()["cancellations_by_policy"] == {duplicate.policy_no: 1}
    assert Policy.objects.get(pk=ours.pk).status == Policy.Status.ACTIVE


def test_a_policy_listed_under_our_quote_is_credited_to_that_request(agents, sandbox, quick_cancel_policy):
    """The desk's lookup (`policies.origins`, registered by quotes) gives the imported policy its
    request's plate, insured, customer, sub-agency and seller; a portal policy gets none of them."""
    ours = issued(agents, "anka")
    request = ours.issuance.quote_request
    outside(sandbox, "anka", "AK-P-CREDIT-1", quote_no=ours.issuance.insurer_quote.quote_no)
    outside(sandbox, "anka", "AK-P-CREDIT-PORTAL")
    reconcile_now("anka")
    listed = Policy.objects.get(policy_no="AK-P-CREDIT-1")
    credit = (listed.plate, listed.owner_id, listed.customer_id, listed.sub_agency_id, listed.sold_by_id)
    assert credit == (
        request.plate,
        request.owner_id,
        request.customer_id,
        request.sub_agency_id,
        request.created_by_id,
    )
    assert request.plate and listed.sold_by == agents["ACENTE1"]
    portal = Policy.objects.get(policy_no="AK-P-CREDIT-PORTAL")
    assert (portal.plate, portal.owner_id, portal.customer, portal.sub_agency, portal.sold_by) == (
        "",
        "",
        None,
        None,
        None,
    )


def test_a_duplicate_finding_names_numbers_that_hold_a_tax_number_by_chance_whole(
    agents, sandbox, monkeypatch, django_capture_on_commit_callbacks
):
    """The quote and both policy numbers hold a valid VKN across a dash (`-3B0009-000094`): the
    finding's note and the agency's notification name them as they are, or nobody finds them."""
    numbers_holding_a_vkn(monkeypatch, sandbox["anka"].state.ledger)
    ours = issued(agents, "anka")
    quote_no = ours.issuance.insurer_quote.quote_no
    assert (quote_no, ours.policy_no) == ("AK-T-3B0009-000094", "AK-P-3B0009-000094")
    outside(sandbox, "anka", "AK-P-3B0009-000095", quote_no=quote_no)
    with django_capture_on_commit_callbacks(execute=True):
        reconcile_now("anka")
    finding = PolicyFinding.objects.get(policy__policy_no="AK-P-3B0009-000095", kind=PolicyFinding.Kind.DUPLICATE)
    assert finding.note == f"Teklif {quote_no} için ikinci poliçe: platformdaki poliçe {ours.policy_no}."
    notice = Notification.objects.filter(kind=Notification.Kind.DUPLICATE_FOUND).first()
    assert notice is not None and notice.title.endswith(" AK-P-3B0009-000095")


def test_a_platform_policy_the_insurer_does_not_list_is_flagged(agents, sandbox, quick_cancel_policy):
    ours = issued(agents, "anka")
    Policy.objects.filter(pk=ours.pk).update(issued_at=timezone.now() - timedelta(hours=2))
    sandbox["anka"].state.ledger.policies.pop(ours.policy_no)  # the insurer lost it
    reconcile_now("anka")
    assert PolicyFinding.objects.get(policy=ours).kind == PolicyFinding.Kind.NOT_LISTED


def test_a_page_that_throttles_is_read_again_alone(agents, sandbox, seeded_accounts):
    prefix = sandbox["anka"].state.ledger.prefix
    for n in range(150):  # two pages
        outside(sandbox, "anka", f"{prefix}-P-MANY-{n}")
    sandbox["anka"].state.add_faults(
        [{"operation": "policy_list", "fault": "throttle", "wait_seconds": 0.1, "after": 1, "times": 1}]
    )
    reconcile_now("anka")
    assert Policy.objects.filter(source="insurer_list").count() == 150


def test_a_policy_flagged_not_listed_heals_when_the_insurer_lists_it(agents, sandbox, quick_cancel_policy):
    """The insurer's list lagged longer than an hour: the next night's read finds the policy and
    closes the finding (an open one is on the dashboard and in /metrics)."""
    ours = issued(agents, "anka")
    Policy.objects.filter(pk=ours.pk).update(issued_at=timezone.now() - timedelta(hours=2))
    kept = sandbox["anka"].state.ledger.policies.pop(ours.policy_no)
    reconcile_now("anka")
    finding = PolicyFinding.objects.get(policy=ours, kind=PolicyFinding.Kind.NOT_LISTED)
    assert finding.resolved_at is None
    sandbox["anka"].state.ledger.policies[ours.policy_no] = kept  # listed at last
    reconcile_now("anka")
    assert PolicyFinding.objects.get(pk=finding.pk).resolved_at is not None
    assert PolicyFinding.objects.filter(policy=ours).count() == 1  # healed, not found again


def test_a_duplicate_the_insurer_cancelled_itself_heals_and_a_cancelled_one_is_never_flagged(
    agents, sandbox, quick_cancel_policy
):
    """A duplicate cancelled at the insurer (its portal, a phone call) is listed CANCELLED: its
    finding closes, and a second policy the insurer lists as already cancelled is not flagged."""
    ours = issued(agents, "cinar")
    quote_no = ours.issuance.insurer_quote.quote_no
    prefix = sandbox["cinar"].state.ledger.prefix
    outside(sandbox, "cinar", f"{prefix}-P-DUP-2", quote_no=quote_no)
    reconcile_now("cinar")
    finding = PolicyFinding.objects.get(kind=PolicyFinding.Kind.DUPLICATE)
    sandbox["cinar"].state.set_policy_status(f"{prefix}-P-DUP-2", "CANCELLED")
    outside(sandbox, "cinar", f"{prefix}-P-DUP-3", quote_no=quote_no, status="CANCELLED")
    reconcile_now("cinar")
    assert PolicyFinding.objects.get(pk=finding.pk).resolved_at is not None
    assert not PolicyFinding.objects.filter(kind=PolicyFinding.Kind.DUPLICATE, resolved_at__isnull=True).exists()
    assert PolicyFinding.objects.get(policy__policy_no=f"{prefix}-P-DUP-3").kind == PolicyFinding.Kind.IMPORTED
    assert Policy.objects.get(pk=ours.pk).status == Policy.Status.ACTIVE
