"""What the customers app announces for other apps to act on, so that it never imports them back."""

from __future__ import annotations

from django.dispatch import Signal

# A customer was erased on their request (KVKK, `customers.erasure.customer_erase`), with
# `customer` (the anonymised row) and `placeholder` (what now stands for their identity number).
# Sent with `send`, inside the erasure's transaction: an app that keeps personal data of the
# customer scrubs it there, and if it cannot, the erasure fails as a whole rather than leaving a
# copy behind. A receiver may answer `{"quote_requests_scrubbed": n}` for the erasure's record.
customer_erased = Signal()
