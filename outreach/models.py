"""What the agency tells its customers, and what the customer agreed to be told on which channel.

KVKK and the commercial-message rules (İYS) ask the agency to show, for each channel, that the
customer agreed, to which text, when, how and in front of whom, and that a withdrawal is
honoured from the moment it is made. So consent is a history of events per customer and
channel, each against a versioned text; the customer's state is the latest event. Nothing is
edited or deleted: a withdrawal is a new event.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class Channel(models.TextChoices):
    EMAIL = "email", "E-posta"
    SMS = "sms", "SMS"


class ConsentText(models.Model):
    """One version of the text a customer agrees to for a channel (the İYS/KVKK wording)."""

    channel = models.CharField("kanal", max_length=8, choices=Channel.choices)
    version = models.PositiveSmallIntegerField("sürüm")
    text = models.TextField("metin")
    published_at = models.DateTimeField("yayımlanma")

    class Meta:
        verbose_name = "izin metni"
        verbose_name_plural = "izin metinleri"
        ordering = ["channel", "-version"]
        constraints = [models.UniqueConstraint(fields=["channel", "version"], name="one_consent_text_per_version")]

    def __str__(self) -> str:
        return f"{self.get_channel_display()} izin metni v{self.version}"


class ChannelConsent(models.Model):
    """One consent event: the customer gave, or withdrew, their consent to one channel."""

    class Method(models.TextChoices):
        WET_SIGNATURE = "wet_signature", "Islak imza"
        PHONE = "phone", "Telefon (ses kaydı)"
        EMAIL = "email", "E-posta"
        SMS = "sms", "SMS"
        IN_PERSON = "in_person", "Yüz yüze (acentede)"

    customer = models.ForeignKey(
        "customers.Customer", on_delete=models.PROTECT, related_name="channel_consents", verbose_name="müşteri"
    )
    agency = models.ForeignKey("agencies.Agency", on_delete=models.PROTECT, related_name="+", verbose_name="acente")
    channel = models.CharField("kanal", max_length=8, choices=Channel.choices)
    given = models.BooleanField("izin verildi", help_text="Yanlış: izin geri çekildi.")
    text = models.ForeignKey(ConsentText, on_delete=models.PROTECT, related_name="+", verbose_name="izin metni")
    recorded_at = models.DateTimeField("zaman", db_index=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="kaydeden"
    )
    method = models.CharField("alınma şekli", max_length=16, choices=Method.choices)

    class Meta:
        verbose_name = "iletişim izni kaydı"
        verbose_name_plural = "iletişim izni kayıtları"
        ordering = ["-recorded_at", "-pk"]
        indexes = [models.Index(fields=["customer", "channel", "-recorded_at"], name="consent_latest_idx")]

    def __str__(self) -> str:
        verb = "verdi" if self.given else "geri çekti"
        return f"Müşteri #{self.customer_id} {self.get_channel_display()} iznini {verb} ({self.recorded_at:%Y-%m-%d})"


class AgencyContact(models.Model):
    """How a customer reaches the agency: printed on the offer, written in every message.

    Kept beside the agency (one to one) so the agencies app needs no migration for it."""

    agency = models.OneToOneField(
        "agencies.Agency", on_delete=models.CASCADE, related_name="contact", verbose_name="acente"
    )
    phone = models.CharField("telefon", max_length=20, blank=True)
    email = models.EmailField("e-posta", blank=True)
    address = models.TextField("adres", blank=True)

    class Meta:
        verbose_name = "acente iletişim bilgisi"
        verbose_name_plural = "acente iletişim bilgileri"

    def __str__(self) -> str:
        return f"{self.agency} iletişim"


class OutboundMessage(models.Model):
    """One message to a customer, whatever became of it: the offer, or a renewal reminder.

    The recipient is kept masked: the row proves that a message went and where, not a second
    copy of the customer's contact details (an erased customer's messages name nobody).
    """

    class Kind(models.TextChoices):
        OFFER = "offer", "Teklif"
        RENEWAL = "renewal", "Yenileme hatırlatması"

    class Status(models.TextChoices):
        PENDING = "pending", "Gönderiliyor"
        SENT = "sent", "Gönderildi"
        FAILED = "failed", "Gönderilemedi"

    # Named in the offer's signed link: says nothing about the customer.
    public_id = models.UUIDField("dış kimlik (UUID)", default=uuid.uuid4, unique=True, editable=False)
    agency = models.ForeignKey("agencies.Agency", on_delete=models.PROTECT, related_name="+", verbose_name="acente")
    customer = models.ForeignKey(
        "customers.Customer",
        on_delete=models.PROTECT,
        related_name="outbound_messages",
        null=True,
        blank=True,
        verbose_name="müşteri",
    )
    kind = models.CharField("ne", max_length=8, choices=Kind.choices)
    channel = models.CharField("kanal", max_length=8, choices=Channel.choices)
    quote_request = models.ForeignKey(
        "quotes.QuoteRequest",
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        verbose_name="teklif talebi",
    )
    renewal_reminder = models.ForeignKey(
        "policies.RenewalReminder",
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        verbose_name="yenileme hatırlatması",
    )
    recipient = models.CharField("alıcı (maskeli)", max_length=120)
    subject = models.CharField("konu", max_length=200, blank=True)
    body = models.TextField("metin")
    status = models.CharField("durum", max_length=8, choices=Status.choices, default=Status.PENDING)
    # Which backend carried it (netgsm, console, smtp…), its raw answer and code, and the code in words.
    provider = models.CharField("sağlayıcı", max_length=60, blank=True)
    provider_code = models.CharField("sağlayıcı kodu", max_length=40, blank=True)
    provider_answer = models.CharField("sağlayıcı yanıtı", max_length=500, blank=True)
    provider_message_id = models.CharField("sağlayıcı mesaj no", max_length=80, blank=True)
    error = models.CharField("hata açıklaması", max_length=300, blank=True)
    sent_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        verbose_name="gönderen",
        help_text="Boş: otomatik (yenileme hatırlatması).",
    )
    created_at = models.DateTimeField("oluşturulma", auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField("sonuçlanma", null=True, blank=True)

    class Meta:
        verbose_name = "giden mesaj"
        verbose_name_plural = "giden mesajlar"
        ordering = ["-created_at", "-pk"]
        constraints = [
            # A reminder re-announced (a re-run, a retried job) never messages the customer twice.
            models.UniqueConstraint(
                fields=["renewal_reminder", "channel"],
                condition=models.Q(renewal_reminder__isnull=False),
                name="one_customer_message_per_reminder_and_channel",
            ),
            models.CheckConstraint(
                condition=~models.Q(kind="offer") | models.Q(quote_request__isnull=False),
                name="an_offer_message_names_its_quote_request",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} · {self.get_channel_display()} · {self.recipient}"
