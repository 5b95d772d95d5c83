"""What the nightly sync announces for other apps to act on, so that it never imports them back."""

from __future__ import annotations

from django.dispatch import Signal

# The sync found a policy CANCELLED at its insurer that we held in force: cancelled there (on the
# insurer's portal, by phone), not through a cancellation of ours, which marks the policy
# CANCELLED itself and sends `policies.signals.policy_cancelled`. With `policy` and `found_on`
# (the day it was found, Türkiye's calendar; no refund is known). Sent inside the transaction
# that stores the status, once per change (a policy already CANCELLED here sends nothing), with
# `send_robust`: a receiver that fails never costs the sync, and logs its own failure.
policy_found_cancelled = Signal()
