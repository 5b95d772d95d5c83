"""Reads of consent and messages. The customer or quote request handed in was already read
through its own app's agency-scoped selector: these never widen what the user may see."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone

from customers.models import Customer
from outreach.models import AgencyContact, Channel, ChannelConsent, ConsentText, OutboundMessage
from quotes.models import QuoteRequest


@dataclass(frozen=True)
class ChannelState:
    channel: str
    label: str
    given: bool
    latest: ChannelConsent | None

    @property
    def since(self) -> datetime | None:
        return self.latest.recorded_at if self.latest else None


def consent_latest(*, customer: Customer, channel: str) -> ChannelConsent | None:
    """The customer's last consent event on `channel`: their state now (None: never asked)."""
    return (
        ChannelConsent.objects.filter(customer=customer, channel=channel)
        .select_related("text", "recorded_by")
        .order_by("-recorded_at", "-pk")
        .first()
    )


def consent_given(*, customer: Customer, channel: str) -> bool:
    latest = consent_latest(customer=customer, channel=channel)
    return latest is not None and latest.given


def consent_states(*, customer: Customer) -> list[ChannelState]:
    """Each channel's state for the customer page, e-mail first."""
    states = []
    for channel in Channel:
        latest = consent_latest(customer=customer, channel=channel.value)
        states.append(ChannelState(channel.value, channel.label, bool(latest and latest.given), latest))
    return states


def consent_history(*, customer: Customer) -> QuerySet[ChannelConsent]:
    return ChannelConsent.objects.filter(customer=customer).select_related("text", "recorded_by")


def consent_text_current(*, channel: str) -> ConsentText | None:
    """The newest published text for `channel` (the data migration seeds version 1 of each);
    None when there is none, and then no consent can be recorded against it."""
    return ConsentText.objects.filter(channel=channel, published_at__lte=timezone.now()).order_by("-version").first()


def agency_contact(*, agency_id: int) -> AgencyContact:
    """The agency's contact details; an agency that entered none gets an empty, unsaved one."""
    return AgencyContact.objects.filter(agency_id=agency_id).first() or AgencyContact(agency_id=agency_id)


def customer_messages(*, customer: Customer) -> QuerySet[OutboundMessage]:
    return OutboundMessage.objects.filter(customer=customer, agency_id=customer.agency_id).select_related("sent_by")


def quote_request_messages(*, quote_request: QuoteRequest) -> QuerySet[OutboundMessage]:
    return OutboundMessage.objects.filter(
        quote_request=quote_request, agency_id=quote_request.agency_id, kind=OutboundMessage.Kind.OFFER
    ).select_related("sent_by")
