"""What outreach does when the policies app announces a renewal reminder, and when the
customers app erases a customer."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from customers.models import Customer
from outreach.models import OutboundMessage
from outreach.services.renewal import renewal_messages_queue
from policies.models import RenewalReminder

logger = logging.getLogger(__name__)


def message_customer_on_renewal(sender: Any, *, reminder: RenewalReminder, **kwargs: Any) -> None:
    """In a savepoint of its own: a customer message that cannot be stored is logged and never
    costs the agents' reminder it rides on."""
    try:
        with transaction.atomic():
            renewal_messages_queue(reminder=reminder)
    except Exception:
        logger.exception("renewal reminder %s: the customer's message could not be stored", reminder.pk)


ERASED_TEXT = "[KVKK: müşterinin talebiyle silindi]"


def scrub_on_erasure(sender: Any, *, customer: Customer, **kwargs: Any) -> None:
    """The messages' texts named the customer (and the SMS its link): gone with the customer. The
    rows stay (what went, when, on which channel, masked recipient: proof of consent honoured)."""
    OutboundMessage.objects.filter(customer=customer).update(subject="", body=ERASED_TEXT)
