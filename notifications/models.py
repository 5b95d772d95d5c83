"""What the platform tells agents about work that finished without them watching."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Notification(models.Model):
    """One message to one agent: shown in the in-app list, and sent by e-mail when they have one.

    Kept per recipient (not per agency) so "read" means read by that person; `key` makes a
    notification idempotent (a retried task or a replayed record never notifies twice).
    """

    class Kind(models.TextChoices):
        ISSUANCE_DONE = "issuance_done", "Poliçe düzenlendi"
        ISSUANCE_REFUSED = "issuance_refused", "Poliçeleştirme reddedildi"
        ISSUANCE_WAITING = "issuance_waiting", "Poliçeleştirme sizi bekliyor"
        DOCUMENT_READY = "document_ready", "Poliçe belgesi hazır"
        POLICY_ENDED = "policy_ended", "Poliçe iptal edildi / süresi doldu"
        CANCELLATION_DONE = "cancellation_done", "Poliçe iptali tamamlandı"
        CANCELLATION_REFUSED = "cancellation_refused", "Poliçe iptali reddedildi"
        CANCELLATION_WAITING = "cancellation_waiting", "Poliçe iptali sizi bekliyor"
        DUPLICATE_FOUND = "duplicate_found", "Mükerrer poliçe bulundu"
        RENEWAL_DUE = "renewal_due", "Poliçe yenileme zamanı"

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications", verbose_name="alıcı"
    )
    agency = models.ForeignKey("agencies.Agency", on_delete=models.CASCADE, related_name="+", verbose_name="acente")
    kind = models.CharField("tür", max_length=32, choices=Kind.choices)
    key = models.CharField(
        "olay anahtarı", max_length=120, help_text="Aynı olay bir kişiye bir kez bildirilir (tekrarlar yok sayılır)."
    )
    title = models.CharField("başlık", max_length=200)
    body = models.TextField("metin", blank=True)
    link = models.CharField("bağlantı", max_length=300, blank=True)
    created_at = models.DateTimeField("oluşturulma", auto_now_add=True)
    read_at = models.DateTimeField("okunma", null=True, blank=True)
    emailed_at = models.DateTimeField("e-posta gönderimi", null=True, blank=True)

    class Meta:
        verbose_name = "bildirim"
        verbose_name_plural = "bildirimler"
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["recipient", "key"], name="one_notification_per_event")]
        indexes = [models.Index(fields=["recipient", "read_at"], name="notification_unread_idx")]

    def __str__(self) -> str:
        return self.title
