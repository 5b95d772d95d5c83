"""What a policy is after issuance: the policy itself, its cancellations (a durable record of
money moving back, stored before the first call), what reconciliation found, its reminders."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from integrations.models import PRODUCT_CHOICES, Insurer, InsurerAccount
from integrations.operations import CANCEL_REASON_LABELS_TR, CANCEL_REASONS
from work.item import WorkItem


class Policy(models.Model):
    """A policy the platform keeps in sync with its insurer every night: what an issuance left,
    an import brought, or an insurer's production list showed."""

    class Status(models.TextChoices):
        ACTIVE = "ACTIVE", "Yürürlükte"
        CANCELLED = "CANCELLED", "İptal"
        EXPIRED = "EXPIRED", "Süresi doldu"

    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.PROTECT, related_name="policies", verbose_name="acente"
    )
    insurer = models.ForeignKey(
        Insurer, on_delete=models.PROTECT, related_name="policies", verbose_name="sigorta şirketi"
    )
    account = models.ForeignKey(
        InsurerAccount, on_delete=models.PROTECT, related_name="policies", verbose_name="şirket hesabı"
    )
    product = models.CharField("ürün", max_length=16, choices=PRODUCT_CHOICES)
    policy_no = models.CharField("poliçe no", max_length=64)
    status = models.CharField("durum", max_length=16, choices=Status.choices, default=Status.ACTIVE)
    issuance = models.OneToOneField(
        "quotes.Issuance",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="policy",
        verbose_name="poliçeleştirme",
    )
    plate = models.CharField("plaka", max_length=16, blank=True)
    owner_id = models.CharField("sigortalı TCKN / VKN", max_length=11, blank=True)
    premium = models.DecimalField("prim", max_digits=12, decimal_places=2, null=True, blank=True)
    # How many parts the premium is paid in (1: peşin), as chosen at issuance.
    installments = models.PositiveSmallIntegerField("taksit sayısı", default=1)
    customer = models.ForeignKey(
        "customers.Customer",
        on_delete=models.PROTECT,
        related_name="policies",
        null=True,
        blank=True,
        verbose_name="müşteri",
    )
    # The period the insurer says the policy runs (Türkiye's calendar); kept current by the
    # nightly sync. Null until an insurer has said (policies from before periods were read).
    starts_on = models.DateField("başlangıç", null=True, blank=True)
    ends_on = models.DateField("bitiş", null=True, blank=True, db_index=True)
    issued_at = models.DateTimeField("düzenlenme", auto_now_add=True)
    # Where the platform learnt of it: issued here, imported from a file, or found on the
    # insurer's own production list (issued on its portal, or a duplicate nobody knew of).
    source = models.CharField(
        "kaynak",
        max_length=16,
        default="platform",
        choices=[
            ("platform", "Platformda düzenlendi"),
            ("import", "Dosyadan aktarıldı"),
            ("insurer_list", "Şirket listesinden"),
        ],
    )
    last_synced_at = models.DateTimeField("son eşitleme", null=True, blank=True)
    # The sub-agency (tali acente) this is credited to; null: the agency itself.
    sub_agency = models.ForeignKey(
        "agencies.SubAgency",
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        verbose_name="tali acente",
    )
    # The agent credited with the sale (the quote request's creator when issued here); null for
    # policies imported or found on an insurer's list without one.
    sold_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        verbose_name="satan",
    )

    class Meta:
        verbose_name = "poliçe"
        verbose_name_plural = "poliçeler"
        constraints = [models.UniqueConstraint(fields=["insurer", "policy_no"], name="policy_no_unique_per_insurer")]
        ordering = ["-issued_at"]
        # Born in the desk app (quotes) and moved here without moving its rows: the table keeps
        # its first name, so no deployment copies a policy (policies/migrations/0006).
        db_table = "quotes_policy"

    def __str__(self) -> str:
        return f"{self.insurer.code}:{self.policy_no}"


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
    reason = models.CharField("İptal nedeni", max_length=32, choices=REASON_CHOICES)
    effective_on = models.DateField("İptal tarihi")
    refund_estimate = models.DecimalField("tahmini iade primi", max_digits=12, decimal_places=2, null=True, blank=True)
    refund = models.DecimalField("İade primi", max_digits=12, decimal_places=2, null=True, blank=True)
    cancelled_on = models.DateField("İptalin geçerli olduğu gün", null=True, blank=True)
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


class ProductionListCheck(WorkItem):
    """One agency account's production list at one insurer, read for a date range and compared
    with the platform's policies (the nightly reconciliation). A durable record like any other:
    retried through the one try loop, a dead letter when it cannot be read, replayable."""

    account = models.ForeignKey(
        "integrations.InsurerAccount", on_delete=models.PROTECT, related_name="+", verbose_name="şirket hesabı"
    )
    issued_from = models.DateField("başlangıç")
    issued_to = models.DateField("bitiş")
    listed = models.PositiveIntegerField("şirketin listesindeki poliçe", default=0)

    class Meta:
        verbose_name = "üretim listesi kontrolü"
        verbose_name_plural = "üretim listesi kontrolleri"
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="production_check_due_idx")]

    def __str__(self) -> str:
        return f"{self.account} {self.issued_from}–{self.issued_to} {self.state}"


class PolicyFinding(models.Model):
    """What a reconciliation found that a person should know about.

    `duplicate`: a second policy for one quote, or a second trafik policy for one plate and
    period (`policy` is the one to cancel, `original` the one to keep); `imported`: a policy the
    insurer holds that the platform did not know (issued on its own portal), now in the
    portfolio; `not_listed`: a platform policy the insurer's list does not hold.
    """

    class Kind(models.TextChoices):
        DUPLICATE = "duplicate", "Mükerrer poliçe"
        IMPORTED = "imported", "Şirkette bulunup portföye eklenen poliçe"
        NOT_LISTED = "not_listed", "Şirketin listesinde olmayan poliçe"

    kind = models.CharField("tür", max_length=16, choices=Kind.choices)
    agency = models.ForeignKey("agencies.Agency", on_delete=models.PROTECT, related_name="+", verbose_name="acente")
    policy = models.ForeignKey(Policy, on_delete=models.PROTECT, related_name="findings", verbose_name="poliçe")
    original = models.ForeignKey(
        Policy,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="duplicates_found",
        verbose_name="asıl poliçe",
    )
    note = models.CharField("açıklama", max_length=300, blank=True)
    found_at = models.DateTimeField("bulunma", auto_now_add=True)
    resolved_at = models.DateTimeField("çözülme", null=True, blank=True)

    class Meta:
        verbose_name = "mutabakat bulgusu"
        verbose_name_plural = "mutabakat bulguları"
        constraints = [models.UniqueConstraint(fields=["kind", "policy"], name="one_finding_per_kind_and_policy")]
        ordering = ["-found_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.policy}"


class RenewalReminder(models.Model):
    """One reminder that a policy ends soon, sent once per policy and threshold (30, 15, 7 days).

    The unique row is what makes the daily job idempotent: a job run twice in a day, or re-run
    after a crash, finds the row and sends nothing. `recipients` keeps who was told (their
    usernames, as they were then), so the renewals list can say it without joining notifications.
    """

    policy = models.ForeignKey(
        Policy, on_delete=models.CASCADE, related_name="renewal_reminders", verbose_name="poliçe"
    )
    days_before = models.PositiveSmallIntegerField("kaç gün kala")
    sent_on = models.DateField("gönderildiği gün")
    recipients = models.CharField("bildirilenler", max_length=300, blank=True)
    created_at = models.DateTimeField("oluşturulma", auto_now_add=True)

    class Meta:
        verbose_name = "yenileme hatırlatması"
        verbose_name_plural = "yenileme hatırlatmaları"
        ordering = ["-sent_on", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["policy", "days_before"], name="one_renewal_reminder_per_threshold")
        ]

    def __str__(self) -> str:
        return f"{self.policy} · {self.days_before} gün kala"
