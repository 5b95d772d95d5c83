"""Every night, the insurers' own production lists against the platform's policies.

What the platform believes and what the insurer holds drift apart: a policy issued on the
insurer's portal, a second policy for one quote that a lost answer made somewhere, a policy of
ours the insurer lost. For each agency account at each insurer, the list of the last days
(`policy_list`, every page, a page retried alone) is read as a durable record of its own and
compared:

* a listed policy the platform does not know is imported into the agency's portfolio
  (`source="insurer_list"`), with its plate and customer when it came from a quote of ours;
* a second policy for one quote, or a second trafik policy for one plate whose period overlaps,
  is a **duplicate**: flagged on the desk and the dashboard, counted on /metrics (alerted), the
  agency told; "Mükerrer poliçeyi iptal et" cancels it with reason `duplicate` (full refund);
* a platform policy issued in the range that the insurer does not list is flagged too.

A finding the list itself answers heals on the next night's read: a policy flagged "not listed"
that the insurer now lists (its list lagged longer than `LISTING_LAG`), and a duplicate the
insurer lists as no longer in force (cancelled there: a phone call, its portal). An open finding
is what the desk, the dashboard and the `DuplicatePoliciesOpen` alert show, so one that can
never close would teach people to ignore them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import date, timedelta
from functools import partial

from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from insurehub.masking import mask_and_cut
from integrations.answers.results import ListedPolicy, PolicyListing
from integrations.calling.calls import endpoint_for_account, insurer_operation_run
from integrations.calling.engine import Outcome
from integrations.models import InsurerAccount
from integrations.operations import POLICY_LIST_MAX_DAYS
from integrations.retry_policies import policy_for
from notifications.models import Notification
from notifications.services import agency_people, notify
from policies.models import Policy, PolicyFinding, ProductionListCheck
from policies.origins import SaleOrigin, sale_origin_for
from policies.periods import one_year_after, today
from work.dispatch import work_send
from work.registry import WorkRegistration, work_kind_register
from work.services import (
    WorkKind,
    work_claim,
    work_mark_submitted,
    work_try,
)

logger = logging.getLogger(__name__)

# How many days back the nightly run reads (the list's range is at most 31 days).
RECONCILE_DAYS = 7
# A platform policy issued this recently may not be on the insurer's list yet: not "not listed".
LISTING_LAG = timedelta(hours=1)
LEASE_MARGIN_SECONDS = 30.0


# --- starting a run -----------------------------------------------------------------------------


def reconciliation_start(*, issued_to: date | None = None, days: int = RECONCILE_DAYS) -> list[ProductionListCheck]:
    """One check per active account at an active insurer, for the `days` up to `issued_to`
    (yesterday by default: today's list is still growing); sent to the workers after commit."""
    issued_to = issued_to or today() - timedelta(days=1)
    issued_from = issued_to - timedelta(days=min(days, POLICY_LIST_MAX_DAYS) - 1)
    accounts = InsurerAccount.objects.filter(is_active=True, insurer__is_active=True, agency__is_active=True)
    with transaction.atomic():
        checks = [
            ProductionListCheck.objects.create(
                account=account,
                issued_from=issued_from,
                issued_to=issued_to,
                payload={"issued_from": issued_from.isoformat(), "issued_to": issued_to.isoformat()},
            )
            for account in accounts
        ]
        work_send(ProductionListCheck, [check.pk for check in checks])
    return checks


# --- one check ------------------------------------------------------------------------------------


def production_check_process(check_id: int) -> str:
    """One try of one account's list (its pages retried inside the try, each alone)."""
    check = ProductionListCheck.objects.select_related("account__insurer", "account__agency").get(pk=check_id)
    policy = policy_for(check.account.insurer.code, "policy_list")
    if not work_claim(ProductionListCheck, check_id, lease_seconds=policy.deadline + LEASE_MARGIN_SECONDS):
        return ProductionListCheck.objects.get(pk=check_id).state
    check.refresh_from_db()
    return work_try(PRODUCTION_CHECK_WORK, check, insurer_code=check.account.insurer.code, policy=policy)


def _check_call(check: ProductionListCheck, permit: str) -> Outcome:
    return insurer_operation_run(
        endpoint=endpoint_for_account(check.account),
        operation="policy_list",
        data=dict(check.payload),
        attempt_offset=check.attempts,
        budget_spent=permit == "spent",
    )


def _check_stored(check: ProductionListCheck, outcome: Outcome) -> None:
    listing = outcome.result_as(PolicyListing)
    with transaction.atomic():
        if not work_mark_submitted(check, listed=len(listing.policies)):
            return
        findings = reconcile(check=check, listing=listing)
    for finding in findings:
        transaction.on_commit(partial(_notify, finding.pk), robust=True)


PRODUCTION_CHECK_WORK = WorkKind(model=ProductionListCheck, call=_check_call, on_success=_check_stored)


# --- comparing ------------------------------------------------------------------------------------


def reconcile(*, check: ProductionListCheck, listing: PolicyListing) -> list[PolicyFinding]:
    """Compare one account's list with the platform's policies; returns the new findings."""
    account = check.account
    found: list[PolicyFinding] = []
    known = {
        policy.policy_no: policy
        for policy in Policy.objects.filter(
            insurer=account.insurer, policy_no__in=[p.policy_no for p in listing.policies]
        )
    }
    for item in listing.policies:
        policy = known.get(item.policy_no)
        if policy is None:
            policy = _import(account, item)
            known[item.policy_no] = policy
            found += _finding(
                PolicyFinding.Kind.IMPORTED, policy, note=_imported_note(item), references=(item.quote_no,)
            )
        if item.status.value == Policy.Status.ACTIVE:  # one the insurer already ended bills no one twice
            found += _duplicates_of(policy, quote_no=item.quote_no)
    _heal(listing, known)
    listed = set(known)
    cutoff = timezone.now() - LISTING_LAG
    ours = Policy.objects.filter(
        account=account,
        source="platform",
        issued_at__date__gte=check.issued_from,
        issued_at__date__lte=check.issued_to,
        issued_at__lte=cutoff,
    ).exclude(policy_no__in=listed)
    for policy in ours:
        found += _finding(
            PolicyFinding.Kind.NOT_LISTED,
            policy,
            note=f"{account.insurer.name} {check.issued_from:%d.%m.%Y}–{check.issued_to:%d.%m.%Y} listesinde yok.",
        )
    return found


def _heal(listing: PolicyListing, known: dict[str, Policy]) -> None:
    """Close the open findings this list answers: listed now, or a duplicate no longer in force."""
    listed_ids = [known[item.policy_no].pk for item in listing.policies]
    ended_ids = [known[item.policy_no].pk for item in listing.policies if item.status.value != Policy.Status.ACTIVE]
    now = timezone.now()
    open_findings = PolicyFinding.objects.filter(resolved_at__isnull=True)
    open_findings.filter(kind=PolicyFinding.Kind.NOT_LISTED, policy_id__in=listed_ids).update(resolved_at=now)
    open_findings.filter(kind=PolicyFinding.Kind.DUPLICATE, policy_id__in=ended_ids).update(resolved_at=now)


def _import(account: InsurerAccount, item: ListedPolicy) -> Policy:
    """A policy the insurer holds and the platform did not: into the agency's portfolio, with
    the plate, identity and customer of our quote when it came from one, and that request's
    credit (its sub-agency, who sold it). Without a request it is the agency's own, credited to
    no sub-agency and no seller: nothing says who sold it."""
    origin = sale_origin_for(account, item.quote_no) or SaleOrigin()
    policy, _ = Policy.objects.get_or_create(
        insurer=account.insurer,
        policy_no=item.policy_no,
        defaults={
            "agency": account.agency,
            "account": account,
            "product": item.product,
            "status": item.status.value,
            "plate": origin.plate,
            "owner_id": origin.owner_id,
            "customer_id": origin.customer_id,
            "sub_agency_id": origin.sub_agency_id,
            "sold_by_id": origin.sold_by_id,
            "premium": item.premium,
            "starts_on": item.starts_on,
            "ends_on": item.ends_on,
            "source": "insurer_list",
        },
    )
    return policy


def _imported_note(item: ListedPolicy) -> str:
    if item.quote_no:
        return f"Şirketin listesinde teklif {item.quote_no} ile düzenlenmiş; platformda kaydı yoktu."
    return "Şirketin kendi kanalından (portal) düzenlenmiş; platformda kaydı yoktu."


def _duplicates_of(policy: Policy, *, quote_no: str) -> list[PolicyFinding]:
    """Is this policy a second one for its quote, or a second trafik policy for its plate and period?"""
    if policy.status != Policy.Status.ACTIVE:
        return []
    if quote_no:
        issued = (
            Policy.objects.filter(issuance__insurer_quote__quote_no=quote_no, insurer=policy.insurer)
            .exclude(pk=policy.pk)
            .first()
        )
        if issued is not None:
            return _finding(
                PolicyFinding.Kind.DUPLICATE,
                policy,
                original=issued,
                note=f"Teklif {quote_no} için ikinci poliçe: platformdaki poliçe {issued.policy_no}.",
                references=(quote_no, issued.policy_no),
            )
    if policy.product == "trafik" and policy.plate and policy.starts_on:
        ends = policy.ends_on or one_year_after(policy.starts_on)
        earlier = (
            Policy.objects.filter(
                agency_id=policy.agency_id, product="trafik", plate=policy.plate, status=Policy.Status.ACTIVE
            )
            .filter(
                Q(starts_on__isnull=True) | Q(starts_on__lt=ends),
                Q(ends_on__isnull=True) | Q(ends_on__gt=policy.starts_on),
            )
            .exclude(pk=policy.pk)
            .filter(Q(issued_at__lt=policy.issued_at) | Q(issued_at=policy.issued_at, pk__lt=policy.pk))
            .order_by("issued_at", "pk")
            .first()
        )
        if earlier is not None:
            return _finding(
                PolicyFinding.Kind.DUPLICATE,
                policy,
                original=earlier,
                note=f"Aynı plaka ve dönem için ikinci trafik poliçesi: önceki poliçe {earlier.policy_no}.",
                references=(earlier.policy_no,),
            )
    return []


def _finding(
    kind: str, policy: Policy, *, original: Policy | None = None, note: str = "", references: Iterable[str] = ()
) -> list[PolicyFinding]:
    """The finding, once: a policy found again the next night is not a new one. The note's
    `references` (the insurer's quote and policy numbers it quotes) are shown unmasked."""
    finding, created = PolicyFinding.objects.get_or_create(
        kind=kind,
        policy=policy,
        defaults={
            "agency_id": policy.agency_id,
            "original": original,
            "note": mask_and_cut(note, 300, keep=references),
        },
    )
    return [finding] if created else []


def _notify(finding_id: int) -> None:
    try:
        finding = PolicyFinding.objects.select_related("policy__insurer", "original").get(pk=finding_id)
        if finding.kind != PolicyFinding.Kind.DUPLICATE:
            return
        policy = finding.policy
        # A sub-agency hears of a duplicate only when both policies are its own (as it sees it:
        # policies.selectors.duplicate_findings); else the agency's people only.
        original = finding.original
        shared = original is None or original.sub_agency_id == policy.sub_agency_id
        notify(
            recipients=agency_people(finding.agency_id, sub_agency_id=policy.sub_agency_id if shared else None),
            agency_id=finding.agency_id,
            kind=Notification.Kind.DUPLICATE_FOUND,
            key=f"finding:{finding.pk}",
            title=f"Mükerrer poliçe bulundu: {policy.insurer.name} {policy.policy_no}",
            body=f"{finding.note} Müşteri iki kez ödemesin: poliçeyi “Mükerrer poliçeyi iptal et” ile iptal edin.",
            link=reverse("policy_detail", args=[policy.pk]),
            references=(policy.policy_no,),
        )
    except Exception:
        logger.exception("finding %s: the notification failed", finding_id)


# --- pump and registry ------------------------------------------------------------------------------


def production_check_work_register() -> None:
    work_kind_register(
        WorkRegistration(
            name="production_check", model=ProductionListCheck, task="policies.tasks.production_check_process"
        )
    )


def open_duplicates(*, agency_id: int | None = None):
    findings = PolicyFinding.objects.filter(kind=PolicyFinding.Kind.DUPLICATE, resolved_at__isnull=True)
    return findings.filter(agency_id=agency_id) if agency_id is not None else findings
