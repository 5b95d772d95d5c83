"""The customer's own renewal reminder, on each channel they consented to.

Heard from `policies.signals.renewal_reminder_due` (once per reminder row, inside the
transaction that creates it). The message rows are stored there, so the unique
(reminder, channel) constraint makes a repeat announcement store nothing; the sending itself
waits for the commit (a provider's slow answer never holds the reminder's transaction, and a
rolled-back reminder sends nothing).
"""

from __future__ import annotations

import logging
from functools import partial

from django.db import IntegrityError, transaction

from outreach import selectors
from outreach.models import Channel, OutboundMessage
from outreach.services.sending import contact_text, masked_recipient, message_deliver
from policies.models import RenewalReminder
from quotes.services.policies import plate_display
from quotes.templatetags.desk import product_label

logger = logging.getLogger(__name__)


def renewal_messages_queue(*, reminder: RenewalReminder) -> list[OutboundMessage]:
    """Store one pending message per consented channel and send them once committed."""
    policy = reminder.policy
    customer = policy.customer
    if customer is None:
        return []
    contact = selectors.agency_contact(agency_id=policy.agency_id)
    risk = f" ({plate_display(policy.plate)})" if policy.plate else ""
    ends = f"{policy.ends_on:%d.%m.%Y}"
    queued: list[tuple[OutboundMessage, str]] = []
    for channel in Channel:
        to = customer.email if channel == Channel.EMAIL else customer.phone
        if not to or not selectors.consent_given(customer=customer, channel=channel.value):
            continue
        product = product_label(policy.product)
        if channel == Channel.SMS:
            subject = ""
            body = (
                f"{product} poliçeniz{risk} {ends} tarihinde bitiyor. "
                f"Yenileme teklifi için bize ulaşın: {contact_text(contact)}"
            )
        else:
            subject = f"{product} poliçeniz {ends} tarihinde bitiyor"
            body = (
                f"Sayın {customer.name},\n\n{policy.insurer.name} {product} poliçeniz{risk} {ends} tarihinde "
                f"bitiyor. Yenileme teklifi hazırlamamız için bize ulaşabilirsiniz.\n\n{contact_text(contact)}\n"
            )
        try:
            with transaction.atomic():
                message = OutboundMessage.objects.create(
                    agency_id=policy.agency_id,
                    customer=customer,
                    kind=OutboundMessage.Kind.RENEWAL,
                    channel=channel.value,
                    renewal_reminder=reminder,
                    recipient=masked_recipient(to, channel.value),
                    subject=subject[:200],
                    body=body,
                )
        except IntegrityError:
            continue  # announced before: this reminder's message on this channel exists
        queued.append((message, to))
    for message, to in queued:
        transaction.on_commit(partial(message_deliver, message=message, to=to, reply_to=contact.email))
    return [message for message, _ in queued]
