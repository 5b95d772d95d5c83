"""Reads of customers, scoped like every read on the desk (`agencies.scope`): an agent sees their
own agency's, a sub-agency user their sub-agency's.

Reading every agency takes `quotes.view_all_agencies` (the one cross-agency read permission);
writing and offering a customer on the quote form stay with the user's own scope.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet

from agencies.scope import scope_q
from customers.models import Customer
from customers.name_search import name_contains

_IDENTITY_DIGITS = frozenset("0123456789")


def _own_agency(user: User) -> Q:
    return scope_q(user, acting=True)


def _readable(user: User) -> Q:
    return scope_q(user)


def customer_matching(search: str) -> Q:
    """A full TCKN/VKN finds that customer exactly; anything else is part of a name (Turkish
    letters or not, any case: `customers.name_search`). Blank: every customer."""
    term = " ".join(search.split())
    if not term:
        return Q()
    compact = term.replace(" ", "")
    if set(compact) <= _IDENTITY_DIGITS and len(compact) in (10, 11):
        return Q(identity_no=compact)
    return name_contains("name", term)


def customer_list(*, user: User, search: str = "") -> QuerySet[Customer]:
    """Customers the user may read, by name; `search` matches a name (Turkish letters or not,
    any case: `customers.name_search`) or a full identity number."""
    return Customer.objects.filter(_readable(user), customer_matching(search)).select_related("agency")


def customer_get(*, user: User, pk: int) -> Customer:
    """One customer the user may read; another agency's raises DoesNotExist (answer 404)."""
    return Customer.objects.filter(_readable(user)).select_related("agency").get(pk=pk)


def customer_get_for_edit(*, user: User, pk: int) -> Customer:
    """One customer the user may change: their own agency's only, whatever they may read."""
    return Customer.objects.filter(_own_agency(user)).get(pk=pk)


def customer_choices(*, user: User) -> QuerySet[Customer]:
    """The customers a quote may be for: the agent's own agency's."""
    return Customer.objects.filter(_own_agency(user))


# What the quote form's customer search answers at most: a name typed in part narrows fast.
CUSTOMER_PICK_LIMIT = 20


def customer_pick_matching(term: str) -> Q:
    """The quote form's customer search: digits are the start of an identity number, anything
    else part of a name (Turkish letters or not, any case: `customers.name_search`)."""
    term = " ".join(term.split())
    compact = term.replace(" ", "")
    if compact and set(compact) <= _IDENTITY_DIGITS:
        return Q(identity_no__startswith=compact)
    return name_contains("name", term)


def customer_pick_search(*, user: User, term: str, limit: int = CUSTOMER_PICK_LIMIT) -> list[Customer]:
    """The customers a quote may be for (`customer_choices`: the agent's own agency's) matching
    `term`, by name, at most `limit` (one more is read, so the caller can say there are more)."""
    matching = customer_choices(user=user).filter(customer_pick_matching(term))
    return list(matching.order_by("name", "pk")[: limit + 1])
