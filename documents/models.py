"""Policy documents: each policy's PDF, fetched from its insurer in the background."""

from __future__ import annotations

from django.db import models

from work.item import WorkItem


class PolicyDocument(WorkItem):
    """Fetching and keeping one policy's PDF: a durable record, like an issuance.

    Insurers produce the PDF after issuance ("not ready yet" is a wait, not a failure), so the
    fetch is background work that survives restarts; the file goes through Django's storage API
    (local disk by default, an S3-compatible store when configured) and is served to its agency
    only. A re-fetch replaces the file and keeps the record.
    """

    policy = models.OneToOneField(
        "policies.Policy", on_delete=models.PROTECT, related_name="document", verbose_name="poliçe"
    )
    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.PROTECT, related_name="policy_documents", verbose_name="acente"
    )
    file = models.FileField("dosya", upload_to="policy-documents/%Y/%m/", blank=True)
    content_type = models.CharField("dosya türü (MIME)", max_length=100, blank=True)
    size = models.PositiveIntegerField("boyut (bayt)", null=True, blank=True)
    sha256 = models.CharField("SHA-256 özeti", max_length=64, blank=True)
    fetched_at = models.DateTimeField("alınma zamanı", null=True, blank=True)

    class Meta:
        verbose_name = "poliçe belgesi"
        verbose_name_plural = "poliçe belgeleri"
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="document_due_idx")]

    def __str__(self) -> str:
        return f"{self.policy_id} {self.state}"
