"""Reads of policies and their operations, scoped like the desk's (`agencies.scope`): another agency's (or
sub-agency's) record is an unknown one. Both are credited through their policy."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Q

from agencies.scope import scope_q
from policies.models import Cancellation, Policy, PolicyFinding


def policy_get(*, user: User, pk: int) -> Policy:
    """One policy the user may see; another agency's (or sub-agency's) id raises DoesNotExist (404)."""
    return (
        Policy.objects.filter(scope_q(user)).select_related("insurer", "customer", "issuance__quote_request").get(pk=pk)
    )


def _agency_filter(user: User) -> Q:
    return scope_q(user, sub_agency="policy__sub_agency")


def cancellation_get(*, user: User, pk: int) -> Cancellation:
    """One cancellation the user may see; another agency's id raises DoesNotExist (answer 404)."""
    return Cancellation.objects.filter(_agency_filter(user)).select_related("policy__insurer").get(pk=pk)


def duplicate_findings(*, user: User, open_only: bool = True):
    """The agency's duplicates the reconciliation found, newest first. A duplicate names the
    policy it repeats (its number is in the note): it is a sub-agency's only when both policies
    are, else the agency's staff handle it."""
    original_in_scope = Q(original__isnull=True) | scope_q(
        user, agency="original__agency", sub_agency="original__sub_agency"
    )
    findings = PolicyFinding.objects.filter(_agency_filter(user), original_in_scope, kind=PolicyFinding.Kind.DUPLICATE)
    if open_only:
        findings = findings.filter(resolved_at__isnull=True)
    return findings.select_related("policy__insurer", "original__insurer").order_by("-found_at")


def duplicate_finding_get(*, user: User, pk: int) -> PolicyFinding:
    return duplicate_findings(user=user, open_only=False).get(pk=pk)
