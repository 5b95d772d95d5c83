"""Reads of commissions, scoped like the desk's: another agency's agreement is an unknown one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import BooleanField, Case, OuterRef, Q, QuerySet, Subquery, Value, When

from agencies.models import SubAgency
from agencies.scope import scope_q
from commissions.models import CommissionAgreement, PolicyCommission, SubAgencyShare
from insurehub.errors import Forbidden
from policies import periods
from policies.models import Policy
from policies.selectors import policy_get

NO_AGREEMENT_TR = "Komisyon anlaşması yok"
AGENCY_COMMISSION_HIDDEN_TR = "Poliçenin komisyon ayrıntıları acente yöneticisine açıktır."
NO_PREMIUM_TR = "Prim bilinmediği için komisyon hesaplanamadı"


def _agency_filter(user: User, agency: str = "agency") -> Q:
    """As every desk read (`agencies.scope`): the user's agency, or all of them with
    `quotes.view_all_agencies`. Agreements and shares are the agency's own, credited to no
    sub-agency: a sub-agency user sees none (they are the manager's)."""
    return scope_q(user, agency=agency, sub_agency=None)


def commission_agreement_in_force(
    *, agency_id: int, insurer_id: int, product: str, on: date
) -> CommissionAgreement | None:
    """The agreement in force on `on`: the latest one started on or before it."""
    return (
        CommissionAgreement.objects.filter(
            agency_id=agency_id, insurer_id=insurer_id, product=product, effective_from__lte=on
        )
        .order_by("-effective_from")
        .first()
    )


def sub_agency_share_in_force(*, sub_agency_id: int, on: date) -> SubAgencyShare | None:
    """The sub-agency's share in force on `on`: the latest one started on or before it."""
    return (
        SubAgencyShare.objects.filter(sub_agency_id=sub_agency_id, effective_from__lte=on)
        .order_by("-effective_from")
        .first()
    )


def sub_agency_share_list(*, user: User, sub_agency_id: int | None = None) -> QuerySet[SubAgencyShare]:
    """The agency's sub-agency shares (history included), each with `in_force` (the one applying
    today), newest start first within each sub-agency."""
    shares = SubAgencyShare.objects.filter(_agency_filter(user, "sub_agency__agency"))
    if sub_agency_id is not None:
        shares = shares.filter(sub_agency_id=sub_agency_id)
    latest = (
        SubAgencyShare.objects.filter(sub_agency=OuterRef("sub_agency"), effective_from__lte=periods.today())
        .order_by("-effective_from")
        .values("pk")[:1]
    )
    in_force = Case(When(pk=Subquery(latest), then=Value(True)), default=Value(False), output_field=BooleanField())
    return (
        shares.select_related("sub_agency__agency", "created_by")
        .annotate(in_force=in_force)
        .order_by("sub_agency__agency__name", "sub_agency__name", "-effective_from", "-pk")
    )


def sub_agency_share_get(*, user: User, pk: int) -> SubAgencyShare:
    """One share the user may see; another agency's id raises DoesNotExist (answer 404)."""
    return sub_agency_share_list(user=user).get(pk=pk)


def sub_agencies_of(*, agency_id: int) -> QuerySet[SubAgency]:
    return SubAgency.objects.filter(agency_id=agency_id).order_by("name")


def _with_in_force(agreements: QuerySet[CommissionAgreement], on: date) -> QuerySet[CommissionAgreement]:
    latest = (
        CommissionAgreement.objects.filter(
            agency=OuterRef("agency"),
            insurer=OuterRef("insurer"),
            product=OuterRef("product"),
            effective_from__lte=on,
        )
        .order_by("-effective_from")
        .values("pk")[:1]
    )
    in_force = Case(When(pk=Subquery(latest), then=Value(True)), default=Value(False), output_field=BooleanField())
    return agreements.annotate(in_force=in_force)


def commission_agreement_list(
    *, user: User, insurer_code: str = "", product: str = ""
) -> QuerySet[CommissionAgreement]:
    """The agency's agreements, each with `in_force` (the one applying today), newest start first
    within each insurer and product."""
    agreements = CommissionAgreement.objects.filter(_agency_filter(user))
    if insurer_code:
        agreements = agreements.filter(insurer__code=insurer_code)
    if product:
        agreements = agreements.filter(product=product)
    agreements = agreements.select_related("agency", "insurer", "created_by")
    return _with_in_force(agreements, periods.today()).order_by(
        "agency__name", "insurer__code", "product", "-effective_from", "-pk"
    )


def commission_agreement_get(*, user: User, pk: int) -> CommissionAgreement:
    """One agreement the user may see; another agency's id raises DoesNotExist (answer 404)."""
    return commission_agreement_list(user=user).get(pk=pk)


@dataclass(frozen=True)
class PolicyCommissionSummary:
    """What the desk and the API show of a policy's commission."""

    policy: Policy
    accrual: PolicyCommission | None
    reversal: PolicyCommission | None

    @property
    def state(self) -> str:
        if self.accrual is not None:
            return "computed"
        return "no_premium" if self.policy.premium is None else "no_agreement"

    @property
    def message(self) -> str:
        """Why there is no commission, in the agent's words; "" when there is one."""
        return {"no_agreement": NO_AGREEMENT_TR, "no_premium": NO_PREMIUM_TR}.get(self.state, "")

    @property
    def net_amount(self) -> Decimal | None:
        """What the policy earns in the end: the commission less its reversal."""
        if self.accrual is None:
            return None
        return self.accrual.amount + (self.reversal.amount if self.reversal is not None else Decimal(0))


def policy_commission_summary(*, policy: Policy) -> PolicyCommissionSummary:
    """The commission entries of a policy the caller already may see."""
    entries = {
        entry.kind: entry for entry in PolicyCommission.objects.filter(policy=policy).select_related("agreement")
    }
    return PolicyCommissionSummary(
        policy=policy,
        accrual=entries.get(PolicyCommission.Kind.ACCRUAL),
        reversal=entries.get(PolicyCommission.Kind.REVERSAL),
    )


def policy_commission_get(*, user: User, policy_id: int) -> PolicyCommissionSummary:
    """A policy's commission; another agency's policy raises DoesNotExist (answer 404). The
    agency's rate and its part are the agency's business: a sub-agency user, who may see the
    policy, is refused its commission entries (the desk card shows them their own part only)."""
    policy = policy_get(user=user, pk=policy_id)
    if is_sub_agency_user(user):
        raise Forbidden(AGENCY_COMMISSION_HIDDEN_TR)
    return policy_commission_summary(policy=policy)


def is_sub_agency_user(user: User | AnonymousUser) -> bool:
    profile = getattr(user, "agent_profile", None)
    return profile is not None and profile.sub_agency_id is not None
