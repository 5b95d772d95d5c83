"""Cancellations: a durable record of money moving back, stored before the first call."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from integrations.operations import CANCEL_REASON_LABELS_TR, CANCEL_REASONS
from integrations.work.item import WorkItem
from quotes.models import Policy

REASON_CHOICES = [(reason, CANCEL_REASON_LABELS_TR[reason]) for reason in CANCEL_REASONS]


class Cancellation(WorkItem):
    """Cancelling one policy (iptal) at its insurer.

    `reference` is what the insurer sees on every send and every re-send: every insurer answers
    a repeat of it with the first result, so after a lost answer the same reference is sent
    again, never a new one. `refund_estimate` is the contract's rule applied before the call
    (what the agent is shown when asking); `refund` and `cancelled_on` are what the insurer said.
    """

    policy = models.ForeignKey(Policy, on_delete=models.PROTECT, related_name="cancellations", verbose_name="poliçe")
    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.PROTECT, related_name="cancellations", verbose_name="acente"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="talep eden"
    )
    reference = models.CharField("referans", max_length=64, unique=True)
    reason = models.CharField("iptal nedeni", max_length=32, choices=REASON_CHOICES)
    effective_on = models.DateField("iptal tarihi")
    refund_estimate = models.DecimalField("tahmini iade primi", max_digits=12, decimal_places=2, null=True, blank=True)
    refund = models.DecimalField("iade primi", max_digits=12, decimal_places=2, null=True, blank=True)
    cancelled_on = models.DateField("iptalin geçerli olduğu gün", null=True, blank=True)
    # A send may have reached the insurer: the next try sends the same reference again (the question).
    maybe_sent = models.BooleanField("gönderilmiş olabilir", default=False)

    class Meta:
        verbose_name = "poliçe iptali"
        verbose_name_plural = "poliçe iptalleri"
        constraints = [
            # One live cancellation per policy; only the insurer's definite "no" frees it for another.
            models.UniqueConstraint(
                fields=["policy"], condition=~Q(state="FAILED"), name="one_live_cancellation_per_policy"
            )
        ]
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="cancellation_due_idx")]

    def __str__(self) -> str:
        return f"{self.reference} {self.state}"
