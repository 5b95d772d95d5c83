"""What the desk announces for other apps to act on, so that it never imports them back."""

from __future__ import annotations

from django.dispatch import Signal

# A policy was stored for an issuance (inside the transaction that marks it SUBMITTED), with
# `issuance` and `policy`. Receivers run inside that transaction; a receiver that fails is
# logged and never costs the issuance (sent with `send_robust`).
policy_issued = Signal()
