"""Nightly policy sync: one run per night (or per command), one durable item per policy."""

from __future__ import annotations

from django.db import models

from work.item import WorkItem


class SyncRun(models.Model):
    """One pass over every active policy; `counts` is the final tally, written when the run ends."""

    class Trigger(models.TextChoices):
        SCHEDULE = "schedule", "Zamanlanmış"
        COMMAND = "command", "Komut"
        ADMIN = "admin", "Yönetim paneli"

    trigger = models.CharField("başlatan", max_length=16, choices=Trigger.choices)
    started_at = models.DateTimeField("başlangıç", auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField("bitiş", null=True, blank=True)
    counts = models.JSONField("sonuç sayıları", default=dict, blank=True)

    class Meta:
        verbose_name = "eşitleme"
        verbose_name_plural = "eşitlemeler"
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.get_trigger_display()} {self.started_at:%Y-%m-%d %H:%M}"


class SyncItem(WorkItem):
    """Asking one insurer for one policy's status.

    `payload` (`policy_no`, `insurer`, `product`) is what is sent, copied when the run starts,
    so a dead letter replays the question that failed even if the policy row changed since.
    """

    # PROTECT: deleting a run must not take its dead letters (what a replay sends) with it.
    run = models.ForeignKey(SyncRun, on_delete=models.PROTECT, related_name="items", verbose_name="eşitleme")
    # PROTECT: a policy with sync history (dead letters included) is not deleted by accident.
    policy = models.ForeignKey(
        "policies.Policy", on_delete=models.PROTECT, related_name="sync_items", verbose_name="poliçe"
    )
    # The policy's status before and after this item's answer was applied (empty until SUBMITTED).
    previous_status = models.CharField("önceki durum", max_length=16, blank=True)
    observed_status = models.CharField("şirketin bildirdiği durum", max_length=16, blank=True)
    # Written by every claim (a fresh value each time): the batch claim reads its records back by
    # it, and a batch write is fenced by it (`work.services.work_claim_batch`).
    claim_token = models.CharField("talep jetonu", max_length=32, blank=True, default="", editable=False)

    class Meta:
        verbose_name = "eşitleme kaydı"
        verbose_name_plural = "eşitleme kayıtları"
        constraints = [models.UniqueConstraint(fields=["run", "policy"], name="one_item_per_policy_per_run")]
        indexes = [
            models.Index(fields=["state", "next_attempt_at"], name="syncitem_due_idx"),
            # "Is anything of this run still open?" is asked each time one of its items ends.
            models.Index(fields=["run", "state"], name="syncitem_run_state_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.payload.get('insurer', '?')}:{self.payload.get('policy_no', '?')} {self.state}"
