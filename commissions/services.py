"""Commissions: the agreements an agency's admin enters, and what each policy earns and gives back.

The money rules, each stated once, here:

- Rounding: `kurus()`, half-up to the kuruş, once per figure as it is made. Each figure is
  reckoned from stored figures (the commission from the stored base amount, a reversal from the
  stored commission), so an entry can be checked by hand from what it shows.
- Base: the agreement says gross or net. The insurers give the gross premium only (CONTRACTS.md:
  `premium`, `BrutPrim`, `gross_premium`; no net premium, no tax figure), so net is reckoned:
  gross / (1 + the product's rate in `PREMIUM_TAX_RATES`).
- Reversal: commission × refund / gross premium, the refund being the insurer's own figure;
  by the days left of the period when no refund is known (a policy the nightly sync found
  cancelled at the insurer: the days left after the day it was found).
- Sub-agency: its part of an entry is the entry's amount × the share in force on the issue day
  / 100, rounded once by `kurus()` (a reversal's part from the reversal's own amount, so each
  entry's part can be checked from that entry alone). The agency keeps amount − part: no second
  rounding, and the two always add up to the entry.

`commission_figures` and `commission_reversal_figures` are the only places a commission is
reckoned; the sub-agency's part is split there and nowhere else.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from enum import StrEnum
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from agencies.models import Agency, AgentProfile, SubAgency
from agencies.scope import is_agency_manager
from commissions.models import CommissionAgreement, CommissionBase, PolicyCommission, SubAgencyShare
from commissions.selectors import commission_agreement_in_force, sub_agency_share_in_force
from insurehub.errors import Forbidden, Invalid
from integrations.audit import audit_actor
from integrations.models import Insurer, InsurerAccount
from integrations.operations import Product
from policies.models import Cancellation, Policy
from work.item import WorkState

logger = logging.getLogger(__name__)

CENT = Decimal("0.01")
HUNDRED = Decimal(100)

# Taxes and funds inside a gross premium, per product, as a fraction of the net premium:
# gross = net × (1 + rate). Kept simple on purpose: BSMV 5 % on trafik and kasko,
# and the guarantee fund's 1 % on trafik; DASK carries neither. Changing a rate changes every
# net-based commission reckoned after it (`recompute_commissions` reckons old ones again).
PREMIUM_TAX_RATES: dict[str, Decimal] = {
    Product.TRAFIK: Decimal("0.06"),  # BSMV 5 % + garanti fonu 1 %
    Product.KASKO: Decimal("0.05"),  # BSMV 5 %
    Product.DASK: Decimal("0.00"),
}

OWNER_ONLY_TR = "Komisyon anlaşmalarını yalnızca acente yöneticisi girebilir."
SHARE_OWNER_ONLY_TR = "Tali acente paylarını yalnızca acente yöneticisi girebilir."
SHARE_DUPLICATE_START_TR = "Bu tali acente için bu tarihte başlayan bir pay zaten var."
SHARE_NOT_A_NUMBER_TR = "Pay oranını sayı olarak girin (ör. 60)."
SHARE_OUT_OF_RANGE_TR = "Pay oranı 0'dan büyük, en fazla 100 olmalıdır."
SHARE_TOO_PRECISE_TR = "Pay oranı en fazla iki ondalık basamak içerebilir."
NO_SUCH_SUB_AGENCY_TR = "Böyle bir tali acente yok."
DUPLICATE_START_TR = "Bu şirket ve ürün için bu tarihte başlayan bir anlaşma zaten var."
RATE_NOT_A_NUMBER_TR = "Komisyon oranını sayı olarak girin (ör. 12,5)."
RATE_OUT_OF_RANGE_TR = "Komisyon oranı 0'dan büyük, en fazla 100 olmalıdır."
RATE_TOO_PRECISE_TR = "Komisyon oranı en fazla iki ondalık basamak içerebilir."


def kurus(amount: Decimal) -> Decimal:
    """The one rounding of money here: half-up to the kuruş (0.005 → 0.01, never to even)."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def premium_net_of_taxes(*, product: str, gross: Decimal) -> Decimal:
    """The premium without its taxes and funds: gross / (1 + the product's rate)."""
    return kurus(gross / (1 + PREMIUM_TAX_RATES[product]))


@dataclass(frozen=True)
class CommissionFigures:
    premium: Decimal  # gross
    base: str
    base_amount: Decimal  # the premium the rate is applied to
    rate: Decimal  # percent
    amount: Decimal
    sub_agency_amount: Decimal = Decimal("0.00")  # the sub-agency's part of `amount`


def sub_agency_part(*, amount: Decimal, share_rate: Decimal | None) -> Decimal:
    """The sub-agency's part of an entry's `amount`: amount × share / 100, rounded once, half-up
    away from zero for a reversal too (so a reversal's part mirrors an accrual's of the same
    size). 0.00 with no share."""
    if share_rate is None:
        return Decimal("0.00")
    part = kurus(abs(amount) * share_rate / HUNDRED)
    return -part if amount < 0 else part


def commission_figures(
    *, agreement: CommissionAgreement, product: str, premium: Decimal, share_rate: Decimal | None = None
) -> CommissionFigures:
    """What a policy of `product` with this gross premium earns under `agreement`, and the part
    of it a sub-agency with `share_rate` (percent of the agency's commission) earns."""
    premium = kurus(premium)
    if agreement.base == CommissionBase.NET:
        base_amount = premium_net_of_taxes(product=product, gross=premium)
    else:
        base_amount = premium
    amount = kurus(base_amount * agreement.rate / HUNDRED)
    return CommissionFigures(
        premium=premium,
        base=agreement.base,
        base_amount=base_amount,
        rate=agreement.rate,
        amount=amount,
        sub_agency_amount=sub_agency_part(amount=amount, share_rate=share_rate),
    )


@dataclass(frozen=True)
class ReversalFigures:
    refund: Decimal | None
    reckoning: str  # PolicyCommission.Reckoning
    amount: Decimal  # ≤ 0
    sub_agency_amount: Decimal = Decimal("0.00")  # ≤ 0, the sub-agency's part of `amount`


def commission_reversal_figures(
    *,
    commission: Decimal,
    premium: Decimal,
    refund: Decimal | None,
    starts_on: date | None,
    ends_on: date | None,
    cancelled_on: date | None,
    share_rate: Decimal | None = None,
) -> ReversalFigures | None:
    """The part of `commission` given back when the policy is cancelled: the refund's share of
    the gross premium (a refund above the premium gives all of it back), else the share of the
    period left after `cancelled_on`. None when neither is known. Multiplied before dividing, so
    the one rounding sees the exact value."""
    if refund is not None and premium > 0:
        refunded = min(max(refund, Decimal(0)), premium)
        share = commission * refunded / premium
        reckoning = PolicyCommission.Reckoning.REFUND
    elif starts_on is not None and ends_on is not None and cancelled_on is not None and ends_on > starts_on:
        days = (ends_on - starts_on).days
        left = min(max((ends_on - cancelled_on).days, 0), days)
        share = commission * left / days
        reckoning = PolicyCommission.Reckoning.DAYS
    else:
        return None
    amount = kurus(share)
    amount = -amount if amount else Decimal("0.00")
    return ReversalFigures(
        refund=refund,
        reckoning=reckoning,
        amount=amount,
        sub_agency_amount=sub_agency_part(amount=amount, share_rate=share_rate),
    )


# --- agreements ----------------------------------------------------------------------------------


def _owner_agency(user: User) -> Agency:
    """The agency whose agreements `user` sets: their own, as its admin (the agency's owner role
    on the desk, `AgentProfile.is_agency_admin`). Platform staff set them in the Django admin."""
    profile: AgentProfile | None = getattr(user, "agent_profile", None)
    if profile is None or not is_agency_manager(user) or not profile.agency.is_active:
        raise Forbidden(OWNER_ONLY_TR)
    return profile.agency


def _rate_problem(
    rate: Any,
    messages: tuple[str, str, str] = (RATE_NOT_A_NUMBER_TR, RATE_OUT_OF_RANGE_TR, RATE_TOO_PRECISE_TR),
) -> str:
    """What is wrong with a percent above 0 and at most 100, two decimals: the first, second or
    third of `messages` (not a number, out of range, too precise); "" when nothing is."""
    not_a_number, out_of_range, too_precise = messages
    try:
        value = Decimal(str(rate))
    except (InvalidOperation, ValueError):
        return not_a_number
    if not value.is_finite() or not Decimal(0) < value <= HUNDRED:
        return out_of_range
    if value != value.quantize(CENT):
        return too_precise
    return ""


def commission_agreement_problems(
    *,
    agency: Agency,
    insurer: Insurer | None,
    product: str,
    rate: Any,
    base: str,
    effective_from: date | None,
    exclude_pk: int | None = None,
) -> dict[str, str]:
    """What is wrong with an agreement, field → Turkish message; empty when nothing is. Shared by
    the desk, the API and the Django admin, so each refuses the same things."""
    errors: dict[str, str] = {}
    if insurer is None:
        errors["insurer"] = "Böyle bir sigorta şirketi yok."
    elif not InsurerAccount.objects.filter(agency=agency, insurer=insurer).exists():
        errors["insurer"] = "Acentenin bu şirkette hesabı yok."
    if product not in PREMIUM_TAX_RATES:
        errors["product"] = "Ürün trafik, kasko veya dask olmalıdır."
    elif insurer is not None and not insurer.sells(product):
        errors["product"] = f"{insurer.name} bu ürünü satmıyor."
    problem = _rate_problem(rate)
    if problem:
        errors["rate"] = problem
    if base not in CommissionBase.values:
        errors["base"] = "Hesap tabanı brüt (gross) ya da net olmalıdır."
    if effective_from is None:
        errors["effective_from"] = "Geçerlilik başlangıcını girin."
    elif insurer is not None and "product" not in errors:
        same_start = CommissionAgreement.objects.filter(
            agency=agency, insurer=insurer, product=product, effective_from=effective_from
        )
        if exclude_pk is not None:  # the agreement being changed is no duplicate of itself
            same_start = same_start.exclude(pk=exclude_pk)
        if same_start.exists():
            errors["effective_from"] = DUPLICATE_START_TR
    return errors


def commission_agreement_create(
    *, user: User, insurer_code: str, product: str, rate: Any, base: str, effective_from: date | None
) -> CommissionAgreement:
    """A new agreement of the user's own agency (never one the caller names), from its day on.

    A change of rate is a new agreement with a later start: the earlier one stays, and the
    policies issued under it keep their commission. Audited as `user`'s (`integrations.audit`).
    """
    agency = _owner_agency(user)
    insurer = Insurer.objects.filter(code=insurer_code).first() if insurer_code else None
    errors = commission_agreement_problems(
        agency=agency, insurer=insurer, product=product, rate=rate, base=base, effective_from=effective_from
    )
    if errors:
        raise Invalid(errors)
    assert insurer is not None and effective_from is not None  # the problems above name either missing
    try:
        with transaction.atomic(), audit_actor(user):
            return CommissionAgreement.objects.create(
                agency=agency,
                insurer=insurer,
                product=product,
                rate=Decimal(str(rate)),
                base=base,
                effective_from=effective_from,
                created_by=user,
            )
    except IntegrityError:  # the same start entered at the same moment from another tab
        raise Invalid({"effective_from": DUPLICATE_START_TR}) from None


# --- sub-agency shares -------------------------------------------------------------------------


def _manager_agency(user: User, message: str) -> Agency:
    """The agency `user` manages: as its admin among the agency's own staff (a sub-agency's admin
    manages its agents, not the agency's money). Platform staff work in the Django admin."""
    profile: AgentProfile | None = getattr(user, "agent_profile", None)
    if profile is None or not is_agency_manager(user):
        raise Forbidden(message)
    if not profile.agency.is_active:
        raise Forbidden(message)
    return profile.agency


def sub_agency_share_problems(
    *,
    agency: Agency,
    sub_agency: SubAgency | None,
    rate: Any,
    effective_from: date | None,
    exclude_pk: int | None = None,
) -> dict[str, str]:
    """What is wrong with a share, field → Turkish message; empty when nothing is. The desk, the
    API and the Django admin refuse the same things."""
    errors: dict[str, str] = {}
    if sub_agency is None or sub_agency.agency_id != agency.pk:
        errors["sub_agency"] = NO_SUCH_SUB_AGENCY_TR
    problem = _rate_problem(rate, (SHARE_NOT_A_NUMBER_TR, SHARE_OUT_OF_RANGE_TR, SHARE_TOO_PRECISE_TR))
    if problem:
        errors["rate"] = problem
    if effective_from is None:
        errors["effective_from"] = "Geçerlilik başlangıcını girin."
    elif "sub_agency" not in errors:
        same_start = SubAgencyShare.objects.filter(sub_agency=sub_agency, effective_from=effective_from)
        if exclude_pk is not None:  # the share being changed is no duplicate of itself
            same_start = same_start.exclude(pk=exclude_pk)
        if same_start.exists():
            errors["effective_from"] = SHARE_DUPLICATE_START_TR
    return errors


def sub_agency_share_create(
    *, user: User, sub_agency_id: Any, rate: Any, effective_from: date | None
) -> SubAgencyShare:
    """A new share for one of the user's own agency's sub-agencies, from its day on; the earlier
    one stays as history and the entries reckoned under it keep their part. Audited as `user`'s."""
    agency = _manager_agency(user, SHARE_OWNER_ONLY_TR)
    try:
        sub_agency = SubAgency.objects.filter(pk=int(sub_agency_id), agency=agency).first()
    except (TypeError, ValueError):
        sub_agency = None
    errors = sub_agency_share_problems(agency=agency, sub_agency=sub_agency, rate=rate, effective_from=effective_from)
    if errors:
        raise Invalid(errors)
    assert sub_agency is not None and effective_from is not None  # the problems above name either missing
    try:
        with transaction.atomic(), audit_actor(user):
            return SubAgencyShare.objects.create(
                sub_agency=sub_agency, rate=Decimal(str(rate)), effective_from=effective_from, created_by=user
            )
    except IntegrityError:
        raise Invalid({"effective_from": SHARE_DUPLICATE_START_TR}) from None


# --- a policy's entries --------------------------------------------------------------------------


def policy_issue_day(policy: Policy) -> date:
    """The day the policy was issued, on Türkiye's calendar: the agreement in force then applies."""
    return timezone.localdate(policy.issued_at) if policy.issued_at else timezone.localdate()


@dataclass(frozen=True)
class _AccrualDue:
    agreement: CommissionAgreement
    share: SubAgencyShare | None
    figures: CommissionFigures


def _accrual_due(policy: Policy) -> _AccrualDue | None:
    if policy.premium is None:
        return None
    day = policy_issue_day(policy)
    agreement = commission_agreement_in_force(
        agency_id=policy.agency_id, insurer_id=policy.insurer_id, product=policy.product, on=day
    )
    if agreement is None:
        return None
    share = sub_agency_share_in_force(sub_agency_id=policy.sub_agency_id, on=day) if policy.sub_agency_id else None
    figures = commission_figures(
        agreement=agreement,
        product=policy.product,
        premium=policy.premium,
        share_rate=share.rate if share is not None else None,
    )
    return _AccrualDue(agreement=agreement, share=share, figures=figures)


def _accrual_fields(policy: Policy, due: _AccrualDue) -> dict[str, Any]:
    agreement, figures, share = due.agreement, due.figures, due.share
    return {
        "agreement": agreement,
        "premium": figures.premium,
        "base": figures.base,
        "base_amount": figures.base_amount,
        "rate": figures.rate,
        "refund": None,
        "reckoning": PolicyCommission.Reckoning.RATE,
        "amount": figures.amount,
        "sub_agency_id": policy.sub_agency_id,
        "sub_agency_share_id": share.pk if share is not None else None,
        "sub_agency_rate": share.rate if share is not None else None,
        "sub_agency_amount": figures.sub_agency_amount,
    }


def policy_commission_accrue(*, policy: Policy) -> PolicyCommission | None:
    """The commission a policy earned when it was issued (`policies.signals.policy_issued`), under
    the agreement in force on its issue day. None when there is no agreement (the desk shows
    "Komisyon anlaşması yok"; `recompute_commissions` applies one entered later) or no premium.
    An entry already there is kept as it is: issuance never reckons a policy twice."""
    existing = PolicyCommission.objects.filter(policy=policy, kind=PolicyCommission.Kind.ACCRUAL).first()
    if existing is not None:
        return existing
    due = _accrual_due(policy)
    if due is None:
        return None
    try:
        with transaction.atomic():
            return PolicyCommission.objects.create(
                policy=policy,
                kind=PolicyCommission.Kind.ACCRUAL,
                computed_at=timezone.now(),
                **_accrual_fields(policy, due),
            )
    except IntegrityError:  # a recompute wrote it meanwhile
        return PolicyCommission.objects.get(policy=policy, kind=PolicyCommission.Kind.ACCRUAL)


@dataclass(frozen=True)
class _Ended:
    """Why a policy's commission is reversed: our cancellation (with the insurer's refund), or
    the nightly sync finding it cancelled at the insurer on `found_on` (no refund known)."""

    policy: Policy
    cancellation: Cancellation | None = None
    found_on: date | None = None


def _reversal_due(accrual: PolicyCommission, ended: _Ended) -> ReversalFigures | None:
    policy, cancellation = ended.policy, ended.cancellation
    return commission_reversal_figures(
        commission=accrual.amount,
        premium=accrual.premium,
        refund=cancellation.refund if cancellation is not None else None,
        starts_on=policy.starts_on,
        ends_on=policy.ends_on,
        cancelled_on=(cancellation.cancelled_on or cancellation.effective_on) if cancellation else ended.found_on,
        share_rate=accrual.sub_agency_rate,
    )


def _reversal_fields(accrual: PolicyCommission, ended: _Ended, figures: ReversalFigures) -> dict:
    return {
        "agreement": accrual.agreement,
        "cancellation": ended.cancellation,
        "found_cancelled_on": ended.found_on if ended.cancellation is None else None,
        "premium": accrual.premium,
        "base": accrual.base,
        "base_amount": accrual.base_amount,
        "rate": accrual.rate,
        "refund": figures.refund,
        "reckoning": figures.reckoning,
        "amount": figures.amount,
        "sub_agency_id": accrual.sub_agency_id,
        "sub_agency_share_id": accrual.sub_agency_share_id,
        "sub_agency_rate": accrual.sub_agency_rate,
        "sub_agency_amount": figures.sub_agency_amount,
    }


def _reverse(ended: _Ended, *, replaces_finding: bool) -> PolicyCommission | None:
    """Write the policy's reversal for `ended`, once. A reversal already there is kept as it is,
    except one reckoned from the sync's finding when `replaces_finding`: our own cancellation's
    answer (the insurer's refund) is the better figure and takes its place."""
    policy_id = ended.policy.pk
    with transaction.atomic():
        accrual = (
            PolicyCommission.objects.select_for_update()
            .select_related("agreement")
            .filter(policy_id=policy_id, kind=PolicyCommission.Kind.ACCRUAL)
            .first()
        )
        if accrual is None:
            return None
        existing = PolicyCommission.objects.filter(policy_id=policy_id, kind=PolicyCommission.Kind.REVERSAL).first()
        if existing is not None and not (replaces_finding and existing.found_cancelled_on is not None):
            return existing
        figures = _reversal_due(accrual, ended)
        if figures is None:
            logger.warning("policy %s: no refund and no period, the commission is not reversed", policy_id)
            return existing
        fields = _reversal_fields(accrual, ended, figures)
        if existing is not None:
            for name, value in fields.items():
                setattr(existing, name, value)
            existing.computed_at = timezone.now()
            existing.save()
            return existing
        return PolicyCommission.objects.create(
            policy_id=policy_id, kind=PolicyCommission.Kind.REVERSAL, computed_at=timezone.now(), **fields
        )


def policy_commission_reverse(*, cancellation: Cancellation) -> PolicyCommission | None:
    """The commission given back when the insurer cancelled the policy (`policies.signals.
    policy_cancelled`). None when the policy earned nothing, or neither its refund nor its
    period is known (logged: a person looks). A reversal already there is kept as it is, unless
    it was reckoned from the sync's finding (then this one, with the refund, replaces it)."""
    return _reverse(_Ended(policy=cancellation.policy, cancellation=cancellation), replaces_finding=True)


def policy_commission_reverse_found(*, policy: Policy, found_on: date) -> PolicyCommission | None:
    """The commission given back for a policy the nightly sync found cancelled at its insurer
    (`sync.signals.policy_found_cancelled`: cancelled on the insurer's portal or by phone, no
    cancellation of ours). No refund is known, so by the days of the period left after
    `found_on` (the latest it can have been cancelled). Idempotent: a reversal already there,
    ours or an earlier finding's, is kept as it is."""
    return _reverse(_Ended(policy=policy, found_on=found_on), replaces_finding=False)


# --- recomputing ---------------------------------------------------------------------------------


class Recomputed(StrEnum):
    CREATED = "created"  # an entry was missing (no agreement at issuance, one entered since)
    CORRECTED = "corrected"  # an entry differed from what the agreements in force now give
    UNCHANGED = "unchanged"
    NO_AGREEMENT = "no_agreement"  # still none in force for its issue day
    NO_PREMIUM = "no_premium"
    KEPT = "kept"  # has an entry but no agreement is in force for its day any more: left alone
    FAILED = "failed"  # an error on our side (logged)


def _write(policy: Policy, kind: str, fields: dict[str, Any], existing: PolicyCommission | None) -> Recomputed:
    if existing is None:
        PolicyCommission.objects.create(policy=policy, kind=kind, computed_at=timezone.now(), **fields)
        return Recomputed.CREATED
    current = {name: getattr(existing, name) for name in fields}
    if current == fields:
        return Recomputed.UNCHANGED
    for name, value in fields.items():
        setattr(existing, name, value)
    existing.computed_at = timezone.now()
    existing.save()
    return Recomputed.CORRECTED


def _ended_for(policy: Policy, reversal: PolicyCommission | None) -> _Ended | None:
    """Why the policy's commission is reversed, if it is: our cancellation the insurer confirmed;
    else, for a policy found CANCELLED at the insurer, the day the finding was dated (the
    reversal's own, or the policy's last sync for one found before reversals were written)."""
    cancellation = Cancellation.objects.filter(policy=policy, state=WorkState.SUBMITTED).first()
    if cancellation is not None:
        return _Ended(policy=policy, cancellation=cancellation)
    if policy.status != Policy.Status.CANCELLED:
        return None
    if reversal is not None and reversal.found_cancelled_on is not None:
        return _Ended(policy=policy, found_on=reversal.found_cancelled_on)
    if policy.last_synced_at is not None:
        return _Ended(policy=policy, found_on=timezone.localdate(policy.last_synced_at))
    return None


def policy_commission_recompute(*, policy: Policy) -> Recomputed:
    """Bring one policy's entries in line with the agreements as they stand now: the accrual under
    the agreement in force on its issue day and, if the insurer cancelled it, the reversal. Doing
    it again changes nothing (idempotent)."""
    accrual_kind, reversal_kind = PolicyCommission.Kind.ACCRUAL, PolicyCommission.Kind.REVERSAL
    with transaction.atomic():
        locked = Policy.objects.select_for_update().get(pk=policy.pk)
        entries = {entry.kind: entry for entry in PolicyCommission.objects.filter(policy=locked)}
        due = _accrual_due(locked)
        if due is None:
            if accrual_kind in entries:
                return Recomputed.KEPT
            return Recomputed.NO_PREMIUM if locked.premium is None else Recomputed.NO_AGREEMENT
        outcome = _write(locked, accrual_kind, _accrual_fields(locked, due), entries.get(accrual_kind))
        accrual = PolicyCommission.objects.select_related("agreement").get(policy=locked, kind=accrual_kind)
        ended = _ended_for(locked, entries.get(reversal_kind))
        reversal = _reversal_due(accrual, ended) if ended is not None else None
        if ended is not None and reversal is not None:
            fields = _reversal_fields(accrual, ended, reversal)
            if _write(locked, reversal_kind, fields, entries.get(reversal_kind)) != Recomputed.UNCHANGED:
                outcome = Recomputed.CORRECTED if outcome == Recomputed.UNCHANGED else outcome
        return outcome


def commissions_recompute(*, since: date, agency_code: str = "") -> Counter[Recomputed]:
    """`policy_commission_recompute` for every policy issued on or after `since` (Türkiye's
    calendar), of one agency or all; how many ended which way. Each policy in its own transaction:
    one that fails is logged and counted, the rest go on."""
    policies = Policy.objects.filter(issued_at__date__gte=since).order_by("pk")
    if agency_code:
        policies = policies.filter(agency__code=agency_code)
    counts: Counter[Recomputed] = Counter()
    for policy in policies.iterator():
        try:
            counts[policy_commission_recompute(policy=policy)] += 1
        except Exception:
            logger.exception("policy %s: its commission could not be recomputed", policy.pk)
            counts[Recomputed.FAILED] += 1
    return counts
