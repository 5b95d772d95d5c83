"""Reads, always scoped to what the user may see: an agent sees only their own agency's records."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from quotes.models import InsurerQuote, Issuance, Policy, QuoteRequest


def _agency_filter(user: AbstractBaseUser, field: str = "agency") -> Q:
    if user.is_staff:
        return Q()
    profile = getattr(user, "agent_profile", None)
    if profile is None:
        return Q(pk__in=[])
    return Q(**{field: profile.agency_id})


def quote_request_list(*, user: AbstractBaseUser, search: str = "") -> QuerySet[QuoteRequest]:
    """Past requests, newest first; `search` matches a plate or a customer id."""
    requests = QuoteRequest.objects.filter(_agency_filter(user)).select_related("created_by")
    term = "".join(search.split()).upper()
    if term:
        requests = requests.filter(Q(plate__icontains=term) | Q(owner_id=term))
    return requests


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
    return (
        InsurerQuote.objects.filter(_agency_filter(user, "request__agency"))
        .select_related("request", "insurer")
        .get(pk=pk)
    )


def issuance_get(*, user: AbstractBaseUser, pk: int) -> Issuance:
    return Issuance.objects.filter(_agency_filter(user)).select_related("insurer_quote__insurer").get(pk=pk)


def policy_list(*, user: AbstractBaseUser) -> QuerySet[Policy]:
    return Policy.objects.filter(_agency_filter(user)).select_related("insurer")
