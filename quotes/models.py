"""Quote requests, each insurer's answer to one, issuances and the policies they produced."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from integrations.models import PRODUCT_CHOICES, Insurer, InsurerAccount
from work.item import WorkItem


class QuoteRequest(models.Model):
    """An agent's request for one product, fanned out to every active insurer that sells it."""

    public_id = models.UUIDField("dış kimlik (UUID)", default=uuid.uuid4, unique=True, editable=False)
    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.PROTECT, related_name="quote_requests", verbose_name="acente"
    )
    # Who the quote is for; null for requests made before customers existed (and the probe's).
    customer = models.ForeignKey(
        "customers.Customer",
        on_delete=models.PROTECT,
        related_name="quote_requests",
        null=True,
        blank=True,
        verbose_name="müşteri",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="oluşturan"
    )
    # The sub-agency (tali acente) this is credited to; null: the agency itself.
    sub_agency = models.ForeignKey(
        "agencies.SubAgency",
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        verbose_name="tali acente",
    )
    product = models.CharField("ürün", max_length=16, choices=PRODUCT_CHOICES)
    # The validated input in platform field names; identity numbers are masked wherever shown.
    input_data = models.JSONField("girilen bilgiler")
    plate = models.CharField("plaka", max_length=16, blank=True, db_index=True)
    owner_id = models.CharField("sigortalı TCKN / VKN", max_length=11, db_index=True)
    # When the quoted cover starts (Türkiye's calendar); null on requests from before start dates.
    starts_on = models.DateField("poliçe başlangıcı", null=True, blank=True)
    created_at = models.DateTimeField("oluşturulma", auto_now_add=True, db_index=True)
    # After this instant an insurer that has not answered is shown as "Yanıt alınamadı".
    deadline_at = models.DateTimeField(
        "yanıt süresi sonu", help_text='Bu andan sonra yanıt vermeyen şirket "Yanıt alınamadı" gösterilir.'
    )
    # Not stored: set on the instance by `quotes.api.serializers.quote_request_data`, for the
    # serializer to read beside the fields (declared so that the reads and writes are typed).
    results: list[InsurerQuote]
    complete: bool

    class Meta:
        verbose_name = "teklif talebi"
        verbose_name_plural = "teklif talepleri"
        ordering = ["-created_at"]
        # Reading every agency's requests, quotes, issuances and policies on the desk and the API
        # (quotes.selectors). Never implied by is_staff; issuing stays with the quote's own agency.
        permissions = [("view_all_agencies", "Tüm acentelerin kayıtlarını görebilir")]

    def __str__(self) -> str:
        return f"{self.product} {self.public_id}"


class InsurerQuote(models.Model):
    """One insurer's answer (or lack of one) to a quote request."""

    class State(models.TextChoices):
        QUEUED = "QUEUED", "Sırada"
        RUNNING = "RUNNING", "Soruluyor"
        RETRYING = "RETRYING", "Tekrar deneniyor"
        SUCCEEDED = "SUCCEEDED", "Teklif geldi"
        FAILED = "FAILED", "Reddedildi"
        NO_ANSWER = "NO_ANSWER", "Yanıt alınamadı"

    FINAL_STATES = (State.SUCCEEDED, State.FAILED, State.NO_ANSWER)

    request = models.ForeignKey(
        QuoteRequest, on_delete=models.CASCADE, related_name="insurer_quotes", verbose_name="teklif talebi"
    )
    insurer = models.ForeignKey(Insurer, on_delete=models.PROTECT, related_name="+", verbose_name="sigorta şirketi")
    account = models.ForeignKey(
        InsurerAccount, on_delete=models.PROTECT, related_name="+", verbose_name="şirket hesabı"
    )
    state = models.CharField("durum", max_length=16, choices=State.choices, default=State.QUEUED)
    attempt = models.PositiveSmallIntegerField("deneme", default=0)
    max_attempts = models.PositiveSmallIntegerField("en fazla deneme", default=1)
    quote_no = models.CharField("teklif no", max_length=64, blank=True)
    premium = models.DecimalField("prim", max_digits=12, decimal_places=2, null=True, blank=True)
    currency = models.CharField("para birimi", max_length=3, blank=True)
    valid_until = models.DateTimeField("geçerlilik sonu", null=True, blank=True)
    details = models.JSONField("ayrıntılar (teminatlar, taksitler)", default=dict, blank=True)
    error_class = models.CharField("hata sınıfı", max_length=16, blank=True)
    error_kind = models.CharField("hata türü", max_length=32, blank=True)
    provider_code = models.CharField("şirket hata kodu", max_length=64, blank=True)
    # What the agent reads (plain Turkish, from the taxonomy) and, beside it under "ayrıntı",
    # what the insurer itself said (masked): the raw words are evidence, not the explanation.
    message = models.CharField("gerekçe", max_length=300, blank=True)
    provider_message = models.CharField("şirketin mesajı", max_length=300, blank=True)
    started_at = models.DateTimeField("başlangıç", null=True, blank=True)
    finished_at = models.DateTimeField("bitiş", null=True, blank=True)
    # Not stored: set on each row by the desk's results view (`quotes.views.quote_requests`) for
    # its template: the row's issuance, and when its answer was stored (epoch ms, final rows only).
    desk_issuance: Issuance | None
    stored_at_ms: int | None

    class Meta:
        verbose_name = "şirket teklifi"
        verbose_name_plural = "şirket teklifleri"
        constraints = [models.UniqueConstraint(fields=["request", "insurer"], name="one_answer_per_insurer")]

    def __str__(self) -> str:
        return f"{self.insurer.code} {self.quote_no or self.state}"

    @property
    def is_final(self) -> bool:
        return self.state in self.FINAL_STATES


class Issuance(WorkItem):
    """Issuing one quote (poliçeleştirme): a durable record stored before the first call.

    `reference` is what the insurer sees on every send and lookup, so a retry, a second tab or
    a worker that died mid-call can never produce a second policy for this quote.
    """

    insurer_quote = models.OneToOneField(
        InsurerQuote, on_delete=models.PROTECT, related_name="issuance", verbose_name="şirket teklifi"
    )
    quote_request = models.ForeignKey(
        QuoteRequest, on_delete=models.PROTECT, related_name="issuances", verbose_name="teklif talebi"
    )
    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.PROTECT, related_name="issuances", verbose_name="acente"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="talep eden"
    )
    reference = models.CharField("referans", max_length=64, unique=True)
    # An earlier send may have reached the insurer: the next try must ask for the state first.
    maybe_sent = models.BooleanField(
        "gönderilmiş olabilir",
        default=False,
        help_text="Önceki bir gönderim şirkete ulaşmış olabilir: sonraki deneme önce durumu sorar.",
    )
    # When the last send may have left (set just before it): a "not issued" lookup is final only
    # once the insurer's settling time has passed since then.
    last_sent_at = models.DateTimeField("son gönderim", null=True, blank=True)
    # The insurer refused a send under `reference` for sure (kept across a replay): the next try
    # still asks under it first, and only then sends under a new reference.
    reference_refused = models.BooleanField(
        "referans kesin reddedildi",
        default=False,
        help_text="Şirket bu referansla yapılan gönderimi kesin olarak reddetti: yeniden denemede önce "
        "eski referansla sorulur, şirkette poliçe yoksa yeni referansla gönderilir.",
    )
    policy_no = models.CharField("poliçe no", max_length=64, blank=True)

    class Meta:
        verbose_name = "poliçeleştirme"
        verbose_name_plural = "poliçeleştirmeler"
        constraints = [
            # One live issuance per quote request: the agent picks one insurer's quote. FAILED
            # means the insurer refused the send for sure (an unknown outcome is DEFERRED, never
            # FAILED), so only a definite refusal frees the request for another insurer's quote.
            models.UniqueConstraint(
                fields=["quote_request"], condition=~Q(state="FAILED"), name="one_live_issuance_per_request"
            ),
        ]
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="issuance_due_idx")]

    def __str__(self) -> str:
        return f"{self.reference} {self.state}"
