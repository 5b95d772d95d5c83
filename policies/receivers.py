"""What the policies app does when the desk announces something (`policies.signals`)."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from policies.models import Policy
from policies.services.cancellations import cancellation_start

logger = logging.getLogger(__name__)


def cancel_the_replaced_policy(sender: Any, *, issuance: Any, policy: Policy, **kwargs: Any) -> None:
    """A new trafik policy that the agent issued over an overlapping one: the old one is cancelled
    for the vehicle's sale from the day the new one starts (or its own start, if that is later),
    as the agent chose on the confirm page. Inside the issuance's transaction, in a savepoint of
    its own: a cancellation that cannot start is logged and left to a person, never the issuance."""
    replaced_id = (issuance.payload or {}).get("replaces_policy_id")
    if not replaced_id:
        return
    old = Policy.objects.filter(pk=replaced_id, agency_id=issuance.agency_id).first()
    if old is None or old.status != Policy.Status.ACTIVE:
        return
    effective_on = policy.starts_on or issuance.quote_request.starts_on
    if effective_on is not None and old.starts_on is not None and effective_on < old.starts_on:
        effective_on = old.starts_on
    try:
        with transaction.atomic():
            cancellation_start(
                user=issuance.requested_by, policy_id=old.pk, reason="vehicle_sold", effective_on=effective_on
            )
    except Exception:
        logger.exception("issuance %s: the replaced policy %s could not be sent for cancellation", issuance.pk, old.pk)
