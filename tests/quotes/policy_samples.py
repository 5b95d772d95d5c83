"""Policies for the tests: really issued at a sandbox insurer, stored as issued from a request without
calling one, or imported (no request behind them)."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from customers.models import Customer
from integrations.models import InsurerAccount
from policies.models import Policy
from quotes.models import InsurerQuote, QuoteRequest
from quotes.services import quote_requests
from quotes.services.issuance import issuance_process, issuance_start
from tests import samples
from work.item import WorkState


def really_issued(
    user: User, code: str, *, product: str = "trafik", data: dict | None = None, customer: Customer | None = None
) -> Policy:
    """A policy really issued at `code` by `user`: a request of theirs, the insurer's quote fetched
    and issued through the desk's services (premium and period from the sandbox insurer)."""
    request = quote_requests.quote_request_create(
        user=user, product=product, data=data or samples.trafik_on_a_new_plate(), customer=customer
    )
    row = request.insurer_quotes.get(insurer__code=code)
    quote_requests.insurer_quote_fetch(row.id)
    issuance = issuance_start(user=user, insurer_quote_id=row.id, payment_token=samples.PAYMENT_TOKEN)
    assert issuance_process(issuance.pk) == WorkState.SUBMITTED
    return Policy.objects.select_related("issuance", "insurer", "account__insurer", "agency").get(issuance=issuance)


# A run tag and serial that join, across the dash, into a valid VKN (0009000094): what the sandbox's
# random tag does now and then, and any insurer's numbering may do. Its numbers must stay readable.
TAG_HOLDING_A_VKN, SERIAL_BEFORE_IT = "3B0009", 93


def numbers_holding_a_vkn(monkeypatch: Any, ledger: Any) -> None:
    """The sandbox insurer's next quote, policy and cancellation numbers end `-3B0009-000094`."""
    monkeypatch.setattr(ledger, "run_tag", TAG_HOLDING_A_VKN)
    for letter in ("T", "K", "D", "P", "C"):
        monkeypatch.setitem(ledger._counters, letter, SERIAL_BEFORE_IT)


def imported_policy(agency_code: str, insurer_code: str, policy_no: str, **fields: Any) -> Policy:
    """A policy as the CSV import stores it: no issuance, so no request to quote again from."""
    account = InsurerAccount.objects.select_related("agency", "insurer").get(
        agency__code=agency_code, insurer__code=insurer_code
    )
    values = {"product": "trafik", "plate": "34ABC123", "owner_id": "10000000146", "premium": Decimal("1000.00")}
    values.update(fields)
    return Policy.objects.create(
        agency=account.agency, insurer=account.insurer, account=account, policy_no=policy_no, **values
    )


def issued_policy(
    user: User,
    policy_no: str,
    *,
    product: str = "trafik",
    data: dict | None = None,
    insurer_code: str = "anka",
    starts_on: date | None = None,
    ends_on: date | None = None,
    **fields: Any,
) -> Policy:
    """A request, one insurer's quote, its issuance and the policy it produced (no insurer called)."""
    request = quote_requests.quote_request_create(
        user=user, product=product, data=data or (samples.TRAFIK if product == "trafik" else samples.KASKO)
    )
    row = request.insurer_quotes.get(insurer__code=insurer_code)
    InsurerQuote.objects.filter(pk=row.pk).update(
        state="SUCCEEDED",
        premium=Decimal("4312.50"),
        currency="TRY",
        quote_no=f"{insurer_code.upper()}-Q-{policy_no}",
        valid_until=timezone.now() + timedelta(minutes=15),
        finished_at=timezone.now(),
    )
    # A fixture's policies may overlap one another (several on one plate): built, not refused.
    issuance = issuance_start(
        user=user, insurer_quote_id=row.pk, payment_token=samples.PAYMENT_TOKEN, overlap="cancel_old"
    )
    return Policy.objects.create(
        agency=request.agency,
        insurer=row.insurer,
        account=row.account,
        product=product,
        policy_no=policy_no,
        issuance=issuance,
        plate=request.plate,
        owner_id=request.owner_id,
        premium=Decimal("4312.50"),
        starts_on=starts_on,
        ends_on=ends_on,
        **fields,
    )


def source_request(policy: Policy) -> QuoteRequest:
    assert policy.issuance is not None, "a policy issued here, not imported"
    return policy.issuance.quote_request
