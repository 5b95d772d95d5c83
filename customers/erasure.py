"""KVKK erasure: a customer anonymised on their request, the agency's records kept.

The law gives a person the right to have their data erased once there is no reason left to keep
it (KVKK art. 7); it also obliges an agency to keep its policies and their money for years. So an
erasure replaces who the customer *is* and keeps what the agency *did*:

- the customer row: name → "Silinmiş müşteri (KVKK)", identity number → a placeholder that is
  no identity number (`X` and the row's id: unique, as the per-agency constraint wants), phone,
  e-mail and address emptied; the consent's time and channel stay (proof the processing before
  it was lawful);
- the customer's quote requests that never went to issuance: the insured's identity number in
  the row and in its stored input replaced the same way, and the input's contact fields dropped;
  requests with an issuance, and every policy, premium and payment, are kept as they are;
- the admin's own history (`LogEntry`) names the row by its new name from then on;
- apps that keep a copy of the customer's data scrub it on `customers.signals.customer_erased`
  (the quotes app: the quote requests above, `quotes.receivers`; the outreach app: the texts of
  the messages sent to them, whose links stop opening);
- a `CustomerErasure` row says who erased, when, and how the request came in — and nothing of
  what was erased. The log line says the same.

Erasing twice is refused, so the record of the first erasure is never overwritten.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.utils import timezone

from customers.models import Customer, CustomerErasure
from customers.services import CustomerInvalid
from customers.signals import customer_erased
from integrations.log_json import scrub_personal_data

logger = logging.getLogger(__name__)

ERASED_NAME = "Silinmiş müşteri (KVKK)"
NOTE_REQUIRED_MESSAGE = "Başvurunun nasıl geldiğini yazın (ör. dilekçe tarihi ve numarası ya da e-posta tarihi)."
NOTE_TOO_LONG_MESSAGE = "Başvuru bilgisi en fazla 300 karakter olabilir."
ALREADY_ERASED_MESSAGE = "Bu müşterinin bilgileri zaten silinmiş."


def erased_identity(customer_pk: int) -> str:
    """A placeholder in the identity field: 11 characters, unique, and never a TCKN or VKN."""
    return f"X{customer_pk:010d}"[-11:]


def customer_erase(*, customer: Customer, erased_by: User, request_note: str) -> CustomerErasure:
    """Anonymise `customer` (see the module); raises `CustomerInvalid` with a Turkish message."""
    note = " ".join(str(request_note or "").split())
    if not note:
        raise CustomerInvalid({"request_note": NOTE_REQUIRED_MESSAGE})
    if len(note) > 300:
        raise CustomerInvalid({"request_note": NOTE_TOO_LONG_MESSAGE})
    now = timezone.now()
    with transaction.atomic():
        row = Customer.objects.select_for_update().get(pk=customer.pk)
        if CustomerErasure.objects.filter(customer=row).exists():
            raise CustomerInvalid({"__all__": ALREADY_ERASED_MESSAGE})
        placeholder = erased_identity(row.pk)
        row.name, row.identity_no, row.phone, row.email, row.address = ERASED_NAME, placeholder, "", "", ""
        row.save(update_fields=["name", "identity_no", "phone", "email", "address", "updated_at"])
        LogEntry.objects.filter(content_type=ContentType.objects.get_for_model(Customer), object_id=str(row.pk)).update(
            object_repr=ERASED_NAME
        )
        # Apps above (the quote requests, the messages sent to the customer) scrub their own
        # copies, or undo all this; each may say how many rows it scrubbed.
        answers: list[tuple[Any, Any]] = customer_erased.send(sender=Customer, customer=row, placeholder=placeholder)
        scrubbed = sum(answer.get("quote_requests_scrubbed", 0) for _, answer in answers if isinstance(answer, dict))
        erasure = CustomerErasure.objects.create(
            customer=row,
            agency_id=row.agency_id,
            erased_at=now,
            erased_by=erased_by,
            # A note may quote the petition: never the person's number, address or phone.
            request_note=scrub_personal_data(note)[:300],
            quote_requests_scrubbed=scrubbed,
        )
    logger.warning(
        "KVKK erasure: customer %s of agency %s anonymised by %s (%d quote requests scrubbed)",
        row.pk,
        row.agency_id,
        erased_by.get_username(),
        scrubbed,
    )
    return erasure
