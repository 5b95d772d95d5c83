"""Reads, always scoped to what the user may see: an agent sees only their own agency's records.

Seeing every agency takes the explicit permission `quotes.view_all_agencies`; `is_staff` alone
(an admin login) grants nothing here, so a staff user is scoped like any agent.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from quotes.models import InsurerQuote, Issuance, Policy, QuoteRequest


def _agency_filter(user: AbstractBaseUser, field: str = "agency") -> Q:
    if user.has_perm("quotes.view_all_agencies"):
        return Q()
    return _own_agency_filter(user, field)


def _own_agency_filter(user: AbstractBaseUser, field: str = "agency") -> Q:
    profile = getattr(user, "agent_profile", None)
    if profile is None:
        return Q(pk__in=[])
    return Q(**{field: profile.agency_id})


def _plate_or_owner(search: str) -> Q:
    """A plate as typed ("06 byz 42" finds 06BYZ42), or a customer's full TCKN/VKN."""
    term = "".join(search.split()).upper()
    return Q(plate__icontains=term) | Q(owner_id=term) if term else Q()


def quote_request_list(*, user: AbstractBaseUser, search: str = "") -> QuerySet[QuoteRequest]:
    """Past requests, newest first; `search` matches a plate or a customer id."""
    return QuoteRequest.objects.filter(_agency_filter(user), _plate_or_owner(search)).select_related("created_by")


def quote_request_get(*, user: AbstractBaseUser, public_id: object) -> QuoteRequest:
    """One request the user may see; another agency's id raises DoesNotExist (answer 404)."""
    return QuoteRequest.objects.filter(_agency_filter(user)).get(public_id=public_id)


def insurer_quotes_for(*, request: QuoteRequest) -> list[InsurerQuote]:
    """Every insurer's row: quotes cheapest first, then the ones still working, then refusals."""
    rows = list(request.insurer_quotes.select_related("insurer"))
    order = {
        InsurerQuote.State.SUCCEEDED: 0,
        InsurerQuote.State.RETRYING: 1,
        InsurerQuote.State.RUNNING: 1,
        InsurerQuote.State.QUEUED: 1,
        InsurerQuote.State.FAILED: 2,
        InsurerQuote.State.NO_ANSWER: 3,
    }
    return sorted(rows, key=lambda r: (order[r.state], r.premium if r.premium is not None else 0, r.insurer.name))


def insurer_quote_get(*, user: AbstractBaseUser, pk: int) -> InsurerQuote:
    """A quote to issue: only the user's own agency's, whatever they may read. Issuing spends that
    agency's insurer account and money; a head-office reader has nothing to issue from the desk."""
    return (
        InsurerQuote.objects.filter(_own_agency_filter(user, "request__agency"))
        .select_related("request", "insurer")
        .get(pk=pk)
    )


def issuance_get(*, user: AbstractBaseUser, pk: int) -> Issuance:
    return Issuance.objects.filter(_agency_filter(user)).select_related("insurer_quote__insurer").get(pk=pk)


def policy_list(*, user: AbstractBaseUser, search: str = "") -> QuerySet[Policy]:
    """Policies, newest first; `search` matches a plate or a customer id, as for requests."""
    return Policy.objects.filter(_agency_filter(user), _plate_or_owner(search)).select_related("insurer")
