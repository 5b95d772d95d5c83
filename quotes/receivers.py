"""What the quotes app does when an app below it announces something (customers erasing one),
so that the announcing app never imports this one back."""

from __future__ import annotations

from typing import Any

from customers.models import Customer
from quotes.models import QuoteRequest

# Keys of a quote request's stored input that name or reach a person.
PERSONAL_INPUT_KEYS = {"owner_id", "identity_no", "name", "owner_name", "phone", "email", "address", "birth_date"}


def scrub_on_erasure(sender: Any, *, customer: Customer, placeholder: str, **kwargs: Any) -> dict[str, int]:
    """The customer's quote requests that never went to issuance lose the person: the identity
    number becomes the erasure's placeholder, contact fields go. Requests with an issuance are
    the agency's record of what it sold and stay as they are. Runs inside the erasure's
    transaction, so a failure here undoes the erasure."""
    scrubbed = 0
    for request in QuoteRequest.objects.select_for_update().filter(customer=customer, issuances__isnull=True):
        data = {
            key: (placeholder if key in ("owner_id", "identity_no") else "")
            for key in request.input_data
            if key in PERSONAL_INPUT_KEYS
        }
        request.input_data = {**request.input_data, **data}
        request.owner_id = placeholder
        request.save(update_fields=["input_data", "owner_id"])
        scrubbed += 1
    return {"quote_requests_scrubbed": scrubbed}
