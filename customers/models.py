"""An agency's customers (müşteri): who a quote request and a policy are for."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Customer(models.Model):
    """A person (TCKN) or a company (VKN) an agency serves; never shared between agencies.

    KVKK (the Turkish data-protection law) asks the agency to show when and how the customer
    agreed to their data being processed, so consent is a date and a channel, not a checkbox.
    """

    class ConsentChannel(models.TextChoices):
        WET_SIGNATURE = "wet_signature", "Islak imzalı form"
        EMAIL = "email", "E-posta"
        SMS = "sms", "SMS"
        PHONE = "phone", "Telefon (ses kaydı)"
        IN_APP = "in_app", "Çevrim içi onay"

    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.PROTECT, related_name="customers", verbose_name="acente"
    )
    name = models.CharField("ad soyad / unvan", max_length=200)
    identity_no = models.CharField("TCKN / VKN", max_length=11, db_index=True)
    phone = models.CharField("telefon", max_length=20, blank=True)
    email = models.EmailField("e-posta", blank=True)
    address = models.TextField("adres", blank=True)
    kvkk_consent_at = models.DateTimeField("KVKK onay zamanı", null=True, blank=True)
    kvkk_consent_channel = models.CharField(
        "KVKK onay şekli", max_length=16, choices=ConsentChannel.choices, blank=True
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        verbose_name="oluşturan",
    )
    created_at = models.DateTimeField("oluşturulma", auto_now_add=True)
    updated_at = models.DateTimeField("güncellenme", auto_now=True)
    # The sub-agency (tali acente) this is credited to; null: the agency itself.
    sub_agency = models.ForeignKey(
        "agencies.SubAgency",
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        verbose_name="tali acente",
    )

    class Meta:
        verbose_name = "müşteri"
        verbose_name_plural = "müşteriler"
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["agency", "identity_no"], name="one_customer_per_identity_per_agency")
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_company(self) -> bool:
        return len(self.identity_no) == 10


class CustomerErasure(models.Model):
    """A KVKK erasure carried out (customers.services.customer_erase): who asked, who did it, when.

    Holds nothing of what was erased: the customer row it points at is the anonymised one. The
    policies, their premiums and the payments stay (the law obliges an agency to keep them);
    only the person's name, identity number and contact details go.
    """

    customer = models.OneToOneField(Customer, on_delete=models.PROTECT, related_name="erasure", verbose_name="müşteri")
    agency = models.ForeignKey("agencies.Agency", on_delete=models.PROTECT, related_name="+", verbose_name="acente")
    erased_at = models.DateTimeField("silinme zamanı")
    erased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="silen"
    )
    # How the request reached the agency (a petition's date and number, an e-mail): no personal data.
    request_note = models.CharField("başvuru bilgisi", max_length=300)
    quote_requests_scrubbed = models.PositiveIntegerField("temizlenen teklif talebi", default=0)

    class Meta:
        verbose_name = "KVKK silme kaydı"
        verbose_name_plural = "KVKK silme kayıtları"
        ordering = ["-erased_at"]

    def __str__(self) -> str:
        return f"Müşteri #{self.customer_id} — {self.erased_at:%Y-%m-%d}"
