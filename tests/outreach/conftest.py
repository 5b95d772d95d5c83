"""Fixtures for outreach: the Netgsm stand-in, settings pointing at it, a consenting customer."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from customers.models import Customer
from outreach.models import AgencyContact
from quotes.models import InsurerQuote, QuoteRequest
from tests import samples
from tests.outreach.netgsm_standin import NetgsmStandIn, netgsm_configured

PHONE = "+905321234567"
EMAIL = "ayse.yilmaz@example.com"


@pytest.fixture
def netgsm(settings) -> Iterator[NetgsmStandIn]:
    """A fresh Netgsm stand-in on loopback, and the settings that send every SMS through it."""
    with netgsm_configured(settings) as standin:
        yield standin


@pytest.fixture
def customer(agents) -> Customer:
    agent = agents["ACENTE1"]
    agency = agent.agent_profile.agency
    AgencyContact.objects.create(
        agency=agency,
        phone="0212 555 01 02",
        email="iletisim@acente1.example",
        address="Levent Mah. 1. Cad. No:5\nBeşiktaş / İstanbul",
    )
    return Customer.objects.create(
        agency=agency,
        name="Ayşe Yılmaz",
        identity_no=samples.TRAFIK["owner_id"],
        phone=PHONE,
        email=EMAIL,
        created_by=agent,
    )


def offered_request(
    customer: Customer, *, product: str = "trafik", valid_for: timedelta = timedelta(hours=6)
) -> QuoteRequest:
    """A request for `customer` with two standing quotes (made directly: no insurer is called)."""
    from integrations.models import InsurerAccount

    agency = customer.agency
    user = customer.created_by
    assert user is not None  # the request is made by whoever made the customer
    data = dict(samples.TRAFIK) if product != "dask" else {**samples.DASK_ADDRESS, **samples.DASK_RISK}
    request = QuoteRequest.objects.create(
        agency=agency,
        created_by=user,
        customer=customer,
        product=product,
        input_data=data,
        plate=data.get("plate", ""),
        owner_id=data["owner_id"],
        deadline_at=timezone.now() + timedelta(minutes=5),
    )
    now = timezone.now()
    accounts = InsurerAccount.objects.filter(agency=agency).select_related("insurer").order_by("insurer__code")[:2]
    for index, account in enumerate(accounts):
        details: dict[str, Any] = {
            "coverages": [
                {"code": "earthquake" if product == "dask" else "property_damage", "limit": "200000"},
            ]
        }
        if product == "dask":
            details["address"] = "Caferağa Mah. Moda Cad. No:12 D:3 Kadıköy / İstanbul"
        InsurerQuote.objects.create(
            request=request,
            insurer=account.insurer,
            account=account,
            state=InsurerQuote.State.SUCCEEDED,
            attempt=1,
            quote_no=f"Q-{request.pk}-{index}",
            premium=Decimal("4312.50") + index * 100,
            currency="TRY",
            valid_until=now + valid_for,
            finished_at=now,
            details=details,
        )
    return request
