"""What the commissions app does when the desk announces a policy issued or cancelled, and when
the nightly sync finds one cancelled at its insurer.

Each runs inside the announcing transaction, each in a savepoint of its own: a commission that
cannot be reckoned is logged and left to `recompute_commissions`, and never costs the issuance
or the cancellation it hears about (money already moved at the insurer).
"""

from __future__ import annotations

import logging
from datetime import date
from typing import Any

from django.db import transaction

from commissions.services import policy_commission_accrue, policy_commission_reverse, policy_commission_reverse_found
from policies.models import Cancellation, Policy

logger = logging.getLogger(__name__)


def accrue_on_issuance(sender: Any, *, policy: Policy, **kwargs: Any) -> None:
    try:
        with transaction.atomic():
            policy_commission_accrue(policy=policy)
    except Exception:
        logger.exception("policy %s: its commission could not be reckoned at issuance", policy.pk)


def reverse_on_cancellation(sender: Any, *, cancellation: Cancellation, **kwargs: Any) -> None:
    try:
        with transaction.atomic():
            policy_commission_reverse(cancellation=cancellation)
    except Exception:
        logger.exception("cancellation %s: the commission could not be reversed", cancellation.pk)


def reverse_on_found_cancelled(sender: Any, *, policy: Policy, found_on: date, **kwargs: Any) -> None:
    try:
        with transaction.atomic():
            policy_commission_reverse_found(policy=policy, found_on=found_on)
    except Exception:
        logger.exception("policy %s: found cancelled, the commission could not be reversed", policy.pk)
