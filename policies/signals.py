"""What the policies app announces for other apps to act on, so that it never imports them back."""

from __future__ import annotations

from django.dispatch import Signal

# A policy was stored for an issuance (inside the transaction that marks it SUBMITTED), with
# `issuance` and `policy`. Sent by the desk (`quotes.services.issuance`); receivers (the
# commission, the policy's document, the policy a renewal replaces) run inside that transaction.
# A receiver that fails is logged and never costs the issuance (sent with `send_robust`).
policy_issued = Signal()

# The insurer cancelled a policy (iptal), with `cancellation`: its refund and the day it took
# effect, as the insurer answered. Sent inside the transaction that stores the answer and marks
# the policy CANCELLED, once per cancellation (a repeat of the answer finds it already stored and
# sends nothing). Sent with `send_robust`: a receiver that fails never costs the cancellation, and
# logs its own failure.
policy_cancelled = Signal()

# A renewal reminder was created (`policies.services.renewal_reminders`), with `reminder`: the
# policy, the threshold and the day. Sent inside the transaction that stores the reminder, once
# per reminder (a re-run of the job finds the row and sends nothing). With `send_robust`: a
# receiver that fails (the customer's message, say) never costs the agents' reminder.
renewal_reminder_due = Signal()
