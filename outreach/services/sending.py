"""Sending to a customer: consent checked, the message stored, the channel called, the answer kept.

Every message is an `OutboundMessage` row first (pending), then sent, then marked sent or failed
with the provider's raw code and the reason in Turkish. A channel the customer has not
consented to (or withdrew) is refused before anything is stored: no row, no message.
"""

from __future__ import annotations

import logging
import smtplib

from django.conf import settings
from django.core.mail import EmailMessage
from django.utils import timezone

from customers.models import Customer
from insurehub.errors import Invalid
from insurehub.masking import mask_and_cut
from outreach import selectors
from outreach.models import AgencyContact, Channel, OutboundMessage
from outreach.sms import mask_email, mask_phone, sms_backend

logger = logging.getLogger(__name__)

CHANNEL_NAMES_TR = {Channel.EMAIL: "e-posta", Channel.SMS: "SMS"}


def no_consent_message(channel: str) -> str:
    return (
        f"Müşterinin {CHANNEL_NAMES_TR[Channel(channel)]} izni yok (ya da geri çekildi): "
        f"{CHANNEL_NAMES_TR[Channel(channel)]} ile gönderilemez. Önce müşteri sayfasında izni kaydedin."
    )


def consent_required(*, customer: Customer, channel: str) -> None:
    """Refuse (Invalid, Turkish, naming the channel) unless the customer consents to it now."""
    if not selectors.consent_given(customer=customer, channel=channel):
        raise Invalid({"channel": no_consent_message(channel)})


def recipient_of(customer: Customer, channel: str) -> str:
    address = customer.email if channel == Channel.EMAIL else customer.phone
    if not address:
        missing = "e-posta adresi" if channel == Channel.EMAIL else "telefonu"
        raise Invalid({"channel": f"Müşterinin {missing} kayıtlı değil."})
    return address


def masked_recipient(address: str, channel: str) -> str:
    return mask_email(address) if channel == Channel.EMAIL else mask_phone(address)


def contact_text(contact: AgencyContact) -> str:
    """The agency's name and how to reach it, for the end of every message."""
    parts = [contact.agency.name, contact.phone, contact.email]
    return " · ".join(part for part in parts if part)


def message_deliver(
    *, message: OutboundMessage, to: str, attachment: tuple[str, bytes, str] | None = None, reply_to: str = ""
) -> OutboundMessage:
    """Send a stored pending message and record what came of it (never raises for the channel)."""
    if message.channel == Channel.SMS:
        backend = sms_backend()
        result = backend.send(to=to, text=message.body)
        message.provider = backend.name
        message.provider_code = result.code
        message.provider_answer = mask_and_cut(result.answer, 500)
        message.provider_message_id = result.message_id[:80]
        message.status = OutboundMessage.Status.SENT if result.ok else OutboundMessage.Status.FAILED
        message.error = result.explanation[:300]
    else:
        email = EmailMessage(
            subject=message.subject,
            body=message.body,
            from_email=settings.DEFAULT_FROM_EMAIL,
            to=[to],
            reply_to=[reply_to] if reply_to else None,
        )
        if attachment is not None:
            email.attach(*attachment)
        message.provider = settings.EMAIL_BACKEND.rsplit(".", 2)[-2]
        try:
            email.send(fail_silently=False)
        except (smtplib.SMTPException, OSError) as error:
            logger.warning("outreach: e-mail %s not sent: %s", message.public_id, type(error).__name__)
            message.status = OutboundMessage.Status.FAILED
            message.provider_code = type(error).__name__[:40]
            message.provider_answer = mask_and_cut(str(error), 500)
            message.error = "E-posta sunucusu iletiyi kabul etmedi ya da ulaşılamadı."
        else:
            message.status = OutboundMessage.Status.SENT
            message.provider_code = "accepted"
    message.finished_at = timezone.now()
    message.save(
        update_fields=[
            "provider",
            "provider_code",
            "provider_answer",
            "provider_message_id",
            "status",
            "error",
            "finished_at",
        ]
    )
    return message
