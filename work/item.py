"""The durable unit of background work and its small state machine.

    QUEUED    -> IN_FLIGHT   claimed by one worker (guarded update, with a lease)
    IN_FLIGHT -> SUBMITTED   the insurer answered
    IN_FLIGHT -> PENDING     retryable: attempts += 1, next_attempt_at (UTC) from the retry policy
    IN_FLIGHT -> PENDING     handed back by a worker whose cluster is stopping: due now, lease
                             released, not a try (the call was cut short, not answered)
    PENDING   -> QUEUED      when next_attempt_at arrives
    PENDING   -> DEFERRED    attempt cap exceeded, or in play too long: a human decides
    IN_FLIGHT -> FAILED      permanent only, with the reason
    IN_FLIGHT -> QUEUED      the worker died: its lease expired
    IN_FLIGHT -> DEFERRED    its workers died too often (`reclaims`): a human decides

FAILED and DEFERRED records keep their payload and error context and can be replayed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Self

from django.db import models

from integrations.answers.taxonomy import ERROR_CLASS_CHOICES, ERROR_KIND_CHOICES


class WorkState(models.TextChoices):
    QUEUED = "QUEUED", "Sırada"
    IN_FLIGHT = "IN_FLIGHT", "İşleniyor"
    SUBMITTED = "SUBMITTED", "Tamamlandı"
    PENDING = "PENDING", "Tekrar denenecek"
    DEFERRED = "DEFERRED", "Ertelendi"
    FAILED = "FAILED", "Başarısız"


# Still in play (a worker or the pump will take it further), and dead letters (a person decides;
# a replay sends them back): every app, admin and check reads these two, never its own copy.
OPEN_STATES = (WorkState.QUEUED, WorkState.IN_FLIGHT, WorkState.PENDING)
DEAD_STATES = (WorkState.FAILED, WorkState.DEFERRED)


ALLOWED_TRANSITIONS: dict[str, frozenset[str]] = {
    WorkState.QUEUED: frozenset({WorkState.IN_FLIGHT}),
    WorkState.IN_FLIGHT: frozenset(
        {WorkState.SUBMITTED, WorkState.PENDING, WorkState.FAILED, WorkState.QUEUED, WorkState.DEFERRED}
    ),
    WorkState.PENDING: frozenset({WorkState.QUEUED, WorkState.DEFERRED}),
    # Replay after a fix: a human sends dead letters back to the queue.
    WorkState.DEFERRED: frozenset({WorkState.QUEUED}),
    WorkState.FAILED: frozenset({WorkState.QUEUED}),
    WorkState.SUBMITTED: frozenset(),
}


class WorkItem(models.Model):
    if TYPE_CHECKING:
        # Each concrete kind gets Django's default manager; an abstract model has none to type.
        objects: ClassVar[models.Manager[Self]]

    state = models.CharField("durum", max_length=16, choices=WorkState.choices, default=WorkState.QUEUED, db_index=True)
    attempts = models.PositiveIntegerField("deneme sayısı", default=0)
    # Throttled attempts are not failures: they do not count against the attempt cap.
    throttled_attempts = models.PositiveIntegerField(
        "kısıtlanan deneme", default=0, help_text="Şirket hız sınırı nedeniyle bekletilen denemeler; sınıra sayılmaz."
    )
    # Leases taken back from workers that died or hung: past a few, the record is DEFERRED.
    reclaims = models.PositiveIntegerField(
        "geri alınma sayısı", default=0, help_text="Çöken ya da takılan işçilerden geri alınma sayısı."
    )
    # Since when it has been in play (set again by a replay): past a limit it is DEFERRED, so a
    # record postponed by the budget or lost by workers can not cycle for ever.
    in_play_since = models.DateTimeField("sürece giriş", null=True, blank=True)
    next_attempt_at = models.DateTimeField("sonraki deneme", null=True, blank=True)
    lease_expires_at = models.DateTimeField("kilit bitişi (işçi)", null=True, blank=True)
    payload = models.JSONField("gönderilen", default=dict)
    error_class = models.CharField("hata sınıfı", max_length=16, choices=ERROR_CLASS_CHOICES, blank=True)
    error_kind = models.CharField("hata türü", max_length=32, choices=ERROR_KIND_CHOICES, blank=True)
    provider_code = models.CharField("şirket hata kodu", max_length=64, blank=True)
    error_message = models.CharField("hata mesajı", max_length=500, blank=True)
    raw_answer = models.TextField("şirketin yanıtı (ham)", blank=True)
    created_at = models.DateTimeField("oluşturulma", auto_now_add=True)
    updated_at = models.DateTimeField("güncellenme", auto_now=True)
    finished_at = models.DateTimeField("bitiş", null=True, blank=True)

    class Meta:
        abstract = True
