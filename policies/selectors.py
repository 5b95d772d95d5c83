"""Reads of policy operations, scoped like the desk's: another agency's record is an unknown one."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q

from policies.models import Cancellation


def _agency_filter(user: AbstractBaseUser) -> Q:
    if user.has_perm("quotes.view_all_agencies"):
        return Q()
    profile = getattr(user, "agent_profile", None)
    return Q(agency_id=profile.agency_id) if profile is not None else Q(pk__in=[])


def cancellation_get(*, user: AbstractBaseUser, pk: int) -> Cancellation:
    """One cancellation the user may see; another agency's id raises DoesNotExist (answer 404)."""
    return Cancellation.objects.filter(_agency_filter(user)).select_related("policy__insurer").get(pk=pk)
