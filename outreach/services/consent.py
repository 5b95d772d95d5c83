"""Recording a customer's consent to a channel, or its withdrawal (KVKK, İYS).

A withdrawal counts from the moment it is recorded: every send checks the latest event first
(`outreach.selectors.consent_given`), so nothing goes out on a withdrawn channel afterwards.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils import timezone

from customers.models import Customer
from insurehub.errors import Forbidden, Invalid
from outreach import selectors
from outreach.models import Channel, ChannelConsent

OWN_AGENCY_TR = "Yalnızca müşterinin kendi acentesi izin kaydedebilir."


def channel_consent_record(*, user: User, customer: Customer, channel: str, given: bool, method: str) -> ChannelConsent:
    """A new consent event against the channel's current text, by `user` (the agent), now."""
    profile = getattr(user, "agent_profile", None)
    if profile is None or profile.agency_id != customer.agency_id:
        raise Forbidden(OWN_AGENCY_TR)
    if channel not in Channel.values:
        raise Invalid({"channel": "Kanal: e-posta ya da SMS seçin."})
    if method not in ChannelConsent.Method.values:
        raise Invalid({"method": "Alınma şekli: listeden bir seçim yapın."})
    if given and channel == Channel.SMS and not customer.phone:
        raise Invalid({"channel": "Kanal: müşterinin telefonu kayıtlı değil; önce telefonunu girin."})
    if given and channel == Channel.EMAIL and not customer.email:
        raise Invalid({"channel": "Kanal: müşterinin e-posta adresi kayıtlı değil; önce adresini girin."})
    text = selectors.consent_text_current(channel=channel)
    if text is None:  # never after the seeding migration, unless someone deleted the texts
        raise Invalid({"channel": f"Kanal: {Channel(channel).label} için yayımlanmış izin metni yok."})
    return ChannelConsent.objects.create(
        customer=customer,
        agency_id=customer.agency_id,
        channel=channel,
        given=given,
        text=text,
        recorded_at=timezone.now(),
        recorded_by=user,
        method=method,
    )
