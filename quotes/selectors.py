"""Reads, always scoped to what the user may see (`agencies.scope`): an agent sees only their own
agency's records, a sub-agency user only their sub-agency's.

Seeing every agency takes the explicit permission `quotes.view_all_agencies`; `is_staff` alone
(an admin login) grants nothing here, so a staff user is scoped like any agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from uuid import UUID

from django.contrib.auth.models import User
from django.db.models import Case, CharField, Exists, OuterRef, Q, QuerySet, Subquery, Value, When
from django.utils import timezone

from agencies.scope import scope_q
from customers.models import Customer
from customers.name_search import name_contains
from integrations.models import InsurerAccount
from policies.models import Policy
from policies.origins import SaleOrigin
from policies.periods import one_year_after, today
from quotes.models import InsurerQuote, Issuance, QuoteRequest
from work.item import WorkState


def _plate_or_owner(search: str) -> Q:
    """A plate as typed ("06 byz 42" finds 06BYZ42), or a customer's full TCKN/VKN."""
    term = "".join(search.split()).upper()
    return Q(plate__icontains=term) | Q(owner_id=term) if term else Q()


def _plate_owner_or_customer(search: str) -> Q:
    """A plate as typed, a customer's full TCKN/VKN, or part of the customer's name (Turkish
    letters in any case, as the customer list finds it: `customers.name_search`)."""
    if not search.strip():
        return Q()
    return _plate_or_owner(search) | name_contains("customer__name", search)


# What became of a request, as the desk's request list shows and filters it; one value each.
OUTCOME_PENDING = "bekliyor"
OUTCOME_QUOTED = "teklif"
OUTCOME_ISSUED = "police"
OUTCOME_REFUSED = "teklif-yok"
OUTCOME_NO_ANSWER = "yanit-yok"
OUTCOME_LABELS = {
    OUTCOME_PENDING: "Bekliyor",
    OUTCOME_QUOTED: "Teklif alındı",
    OUTCOME_ISSUED: "Poliçeleşti",
    # Insurers answered, and said no (a bad UAVT code, a declined risk): not the same as silence.
    OUTCOME_REFUSED: "Teklif verilmedi",
    OUTCOME_NO_ANSWER: "Yanıt yok",
}


@dataclass(frozen=True)
class QuoteRequestFilter:
    """The request list's filters (none of them names a person, so they may sit in a URL)."""

    product: str = ""
    created_from: date | None = None
    created_to: date | None = None
    outcome: str = ""


def quote_request_list(
    *, user: User, search: str = "", filters: QuoteRequestFilter | None = None
) -> QuerySet[QuoteRequest]:
    """Past requests, newest first; `search` matches a plate, a customer's id or part of their name.

    Each request carries `outcome` (one of OUTCOME_LABELS) and, once a quote of it was issued,
    `policy_id` / `policy_no`, so the list can link the policy it became.
    """
    policies = Policy.objects.filter(issuance__quote_request=OuterRef("pk")).order_by("pk")
    rows = InsurerQuote.objects.filter(request=OuterRef("pk"))
    requests = (
        QuoteRequest.objects.filter(scope_q(user), _plate_owner_or_customer(search))
        .select_related("created_by")
        .annotate(
            policy_id=Subquery(policies.values("pk")[:1]),
            policy_no=Subquery(policies.values("policy_no")[:1]),
            outcome=Case(
                When(Exists(policies), then=Value(OUTCOME_ISSUED)),
                When(Exists(rows.filter(state=InsurerQuote.State.SUCCEEDED)), then=Value(OUTCOME_QUOTED)),
                # Rows past the deadline are closed as "no answer" when the request is next shown.
                When(
                    Exists(rows.exclude(state__in=InsurerQuote.FINAL_STATES)),
                    deadline_at__gt=timezone.now(),
                    then=Value(OUTCOME_PENDING),
                ),
                When(Exists(rows.filter(state=InsurerQuote.State.FAILED)), then=Value(OUTCOME_REFUSED)),
                default=Value(OUTCOME_NO_ANSWER),
                output_field=CharField(),
            ),
        )
    )
    filters = filters or QuoteRequestFilter()
    if filters.product:
        requests = requests.filter(product=filters.product)
    if filters.created_from:
        requests = requests.filter(created_at__date__gte=filters.created_from)
    if filters.created_to:
        requests = requests.filter(created_at__date__lte=filters.created_to)
    if filters.outcome:
        requests = requests.filter(outcome=filters.outcome)
    return requests


def quote_request_get(*, user: User, public_id: UUID | str) -> QuoteRequest:
    """One request the user may see; another agency's (or sub-agency's) id raises DoesNotExist (404)."""
    return QuoteRequest.objects.filter(scope_q(user)).get(public_id=public_id)


def insurer_quotes_for(*, request: QuoteRequest) -> list[InsurerQuote]:
    """Every insurer's row: quotes cheapest first, then the ones still working, then refusals."""
    rows = list(request.insurer_quotes.select_related("insurer"))
    order: dict[str, int] = {
        InsurerQuote.State.SUCCEEDED: 0,
        InsurerQuote.State.RETRYING: 1,
        InsurerQuote.State.RUNNING: 1,
        InsurerQuote.State.QUEUED: 1,
        InsurerQuote.State.FAILED: 2,
        InsurerQuote.State.NO_ANSWER: 3,
    }
    return sorted(rows, key=lambda r: (order[r.state], r.premium if r.premium is not None else 0, r.insurer.name))


def insurer_quote_get(*, user: User, pk: int) -> InsurerQuote:
    """A quote to issue: only the user's own scope's, whatever they may read. Issuing spends that
    agency's insurer account and money; a head-office reader has nothing to issue from the desk."""
    return (
        InsurerQuote.objects.filter(
            scope_q(user, agency="request__agency", sub_agency="request__sub_agency", acting=True)
        )
        .select_related("request", "insurer")
        .get(pk=pk)
    )


def issuance_live_for(*, quote_request_id: int) -> Issuance | None:
    """The request's one issuance that is not FAILED (the insurer the agent picked: in progress,
    waiting for a person, or issued), or None: any of its quotes may still be issued."""
    return Issuance.objects.filter(quote_request_id=quote_request_id).exclude(state=WorkState.FAILED).first()


def policy_issued_for(*, quote_request_id: int) -> Policy | None:
    """The policy issued from this request, if one was."""
    return Policy.objects.filter(issuance__quote_request_id=quote_request_id).order_by("pk").first()


def issuance_get(*, user: User, pk: int) -> Issuance:
    return (
        Issuance.objects.filter(scope_q(user, sub_agency="quote_request__sub_agency"))
        .select_related("insurer_quote__insurer")
        .get(pk=pk)
    )


# --- policies ------------------------------------------------------------------------------------

PERIOD_ENDS_30 = "30"
PERIOD_ENDS_60 = "60"
PERIOD_ENDED = "bitti"
PERIOD_LABELS = {
    PERIOD_ENDS_30: "30 gün içinde bitenler",
    PERIOD_ENDS_60: "60 gün içinde bitenler",
    PERIOD_ENDED: "Süresi bitenler",
}
RENEWAL_WINDOWS = (30, 60)


@dataclass(frozen=True)
class PolicyFilter:
    """The policy list's filters (none of them names a person, so they may sit in a URL)."""

    product: str = ""
    insurer: str = ""  # an insurer's code
    status: str = ""
    period: str = ""  # one of PERIOD_LABELS
    starts_from: date | None = None
    starts_to: date | None = None


def _policy_search(search: str) -> Q:
    """A plate as typed, a customer's full TCKN/VKN, part of a customer's name, or a policy number."""
    term = search.strip()
    if not term:
        return Q()
    compact = "".join(term.split()).upper()
    return _plate_owner_or_customer(search) | Q(policy_no__icontains=compact)


def _period(period: str, *, on: date) -> Q:
    if period in (PERIOD_ENDS_30, PERIOD_ENDS_60):
        return Q(ends_on__gte=on, ends_on__lte=on + timedelta(days=int(period)))
    if period == PERIOD_ENDED:
        return Q(ends_on__lt=on)
    return Q()


def policy_list(*, user: User, search: str = "", filters: PolicyFilter | None = None) -> QuerySet[Policy]:
    """Policies, newest first; `search` matches a plate, a customer (id or name) or a policy number."""
    filters = filters or PolicyFilter()
    policies = Policy.objects.filter(scope_q(user), _policy_search(search), _period(filters.period, on=today()))
    if filters.product:
        policies = policies.filter(product=filters.product)
    if filters.insurer:
        policies = policies.filter(insurer__code=filters.insurer)
    if filters.status:
        policies = policies.filter(status=filters.status)
    if filters.starts_from:
        policies = policies.filter(starts_on__gte=filters.starts_from)
    if filters.starts_to:
        policies = policies.filter(starts_on__lte=filters.starts_to)
    return policies.select_related("insurer", "customer")


def policy_to_renew_get(*, user: User, pk: int) -> Policy:
    """A policy to quote again: only the user's own scope's (the new quotes spend its accounts)."""
    return (
        Policy.objects.filter(scope_q(user, acting=True))
        .select_related("customer", "issuance__quote_request")
        .get(pk=pk)
    )


def renewal_list(*, user: User, days: int) -> QuerySet[Policy]:
    """Policies in force that end within `days` (today included), the soonest first."""
    on = today()
    return (
        Policy.objects.filter(
            scope_q(user),
            status=Policy.Status.ACTIVE,
            ends_on__gte=on,
            ends_on__lte=on + timedelta(days=days),
        )
        .select_related("insurer", "customer", "issuance__quote_request")
        # The reminders the daily job sent (policies.RenewalReminder), shown beside each policy.
        .prefetch_related("renewal_reminders")
        .order_by("ends_on", "pk")
    )


def policy_overlapping_for(*, quote_request: QuoteRequest) -> Policy | None:
    """Another policy of the request's agency in force on the same risk during the period the
    request would cover ([its start, a year later)), whatever day that starts: a policy that
    starts tomorrow overlaps as much as one in force today (a renewal starts the day the old one
    ends, which is no overlap). The risk is the plate for motor products and the UAVT code for
    DASK; a side of a period no insurer has told us is taken as open. Policies the nightly sync
    or the production list brought in are policies like any other here. The policy issued from
    this very request is not "another". A request credited to a sub-agency looks among that
    sub-agency's policies only: the warning names the policy, and the issuance may cancel it, so
    it may not reach outside the scope the request was made in (`agencies.scope`).
    """
    starts = quote_request.starts_on or today()
    ends = one_year_after(starts)
    policies = Policy.objects.filter(
        agency_id=quote_request.agency_id, product=quote_request.product, status=Policy.Status.ACTIVE
    )
    if quote_request.sub_agency_id is not None:
        policies = policies.filter(sub_agency_id=quote_request.sub_agency_id)
    if quote_request.product == "dask":
        uavt = (quote_request.input_data or {}).get("uavt_code")
        if not uavt:
            return None
        policies = policies.filter(issuance__quote_request__input_data__uavt_code=uavt)
    elif quote_request.plate:
        policies = policies.filter(plate=quote_request.plate)
    else:
        return None
    return (
        policies.filter(
            Q(starts_on__isnull=True) | Q(starts_on__lt=ends), Q(ends_on__isnull=True) | Q(ends_on__gt=starts)
        )
        .exclude(issuance__quote_request=quote_request)
        .select_related("insurer")
        .order_by("-ends_on", "-pk")
        .first()
    )


# --- a customer's history, for the customer page's section (quotes/customer_history.py) -------

CUSTOMER_RENEWAL_WINDOW = timedelta(days=60)


def customer_quote_requests(*, user: User, customer: Customer) -> QuerySet[QuoteRequest]:
    """The customer's requests that `user` may read: a sub-agency user reading their customer still
    sees only what is credited to their sub-agency."""
    return QuoteRequest.objects.filter(scope_q(user), customer=customer, agency_id=customer.agency_id).select_related(
        "created_by"
    )


def customer_policies(*, user: User, customer: Customer) -> QuerySet[Policy]:
    """The customer's policies that `user` may read. A policy issued from the customer's request
    counts even when the policy row itself was stored without the customer (issued before the
    link was written)."""
    return (
        Policy.objects.filter(Q(customer=customer) | Q(issuance__quote_request__customer=customer))
        .filter(scope_q(user), agency_id=customer.agency_id)
        .select_related("insurer")
        .distinct()
    )


def customer_renewals(*, user: User, customer: Customer, today: date | None = None) -> QuerySet[Policy]:
    """Policies in force that end within the renewal window: the ones to offer a renewal quote for."""
    today = today or timezone.localdate()
    return (
        customer_policies(user=user, customer=customer)
        .filter(status=Policy.Status.ACTIVE, ends_on__gte=today, ends_on__lte=today + CUSTOMER_RENEWAL_WINDOW)
        .order_by("ends_on")
    )


def sale_origin_of_quote(account: InsurerAccount, quote_no: str) -> SaleOrigin | None:
    """The request behind one of our quotes at `account`: what a policy the insurer lists under
    that quote is credited with (registered with `policies.origins` by this app's `ready()`)."""
    quote = InsurerQuote.objects.select_related("request").filter(account=account, quote_no=quote_no).first()
    if quote is None:
        return None
    request = quote.request
    return SaleOrigin(
        plate=request.plate,
        owner_id=request.owner_id,
        customer_id=request.customer_id,
        sub_agency_id=request.sub_agency_id,
        sold_by_id=request.created_by_id,
    )
