"""What admins tune per insurer, and the log of every call the platform made to one."""

from __future__ import annotations

import ipaddress
from collections.abc import Collection
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from integrations.answers.taxonomy import ERROR_CLASS_CHOICES, ERROR_KIND_CHOICES
from integrations.credentials import decrypt_credentials, encrypt_credentials
from integrations.insurer_hosts import insurer_host_problem
from integrations.operations import OPERATION_LABELS_TR, Product

OPERATION_CHOICES = [(op.value, label) for op, label in OPERATION_LABELS_TR.items()]
PRODUCT_CHOICES = [(p.value, p.value) for p in Product]
KIND_CHOICES = ERROR_KIND_CHOICES
CLASS_CHOICES = ERROR_CLASS_CHOICES


class Insurer(models.Model):
    code = models.SlugField("kod", max_length=32, unique=True)
    name = models.CharField("ad", max_length=120)
    base_url = models.URLField("servis adresi", max_length=300)
    is_active = models.BooleanField("aktif", default=True)
    products = models.JSONField("satılan ürünler", default=list, blank=True)

    class Meta:
        verbose_name = "sigorta şirketi"
        verbose_name_plural = "sigorta şirketleri"
        ordering = ["code"]

    def __str__(self) -> str:
        return self.name

    def sells(self, product: str) -> bool:
        return product in (self.products or [])

    def clean_fields(self, exclude: Collection[str] | None = None) -> None:
        """Whoever may edit an insurer could otherwise point it at their own server and collect
        every agency's credentials there: the address must be https. Plain http only to this
        machine (a sandbox), and only under DEBUG or `INSURER_ALLOW_HTTP` (tests, the demo).
        Checked only when base_url is being edited, so a list-view toggle is never refused."""
        errors: dict[str, list[str]] = {}
        try:
            super().clean_fields(exclude=exclude)
        except ValidationError as error:
            errors = error.message_dict
        if (exclude is None or "base_url" not in exclude) and "base_url" not in errors:
            message = insurer_base_url_problem(self.base_url)
            if message:
                errors["base_url"] = [message]
        if errors:
            raise ValidationError(errors)


def insurer_base_url_problem(url: str) -> str:
    """Why `url` may not be an insurer's address (Turkish, for the admin form), or "": https (plain
    http only to a sandbox on this machine), no user or password in it, and a host the platform
    may send credentials to (`integrations.insurer_hosts`: the allow-list, no internal address)."""
    try:
        parts = urlsplit(url or "")
        host = parts.hostname or ""
        has_userinfo = bool(parts.username or parts.password)
    except ValueError:
        return "Servis adresi geçerli bir adres değil."
    if has_userinfo:
        return "Servis adresinde kullanıcı adı veya parola olamaz."
    allow_http = settings.DEBUG or getattr(settings, "INSURER_ALLOW_HTTP", False)
    if not (parts.scheme == "https" or (parts.scheme == "http" and allow_http and _is_loopback(host))):
        return "Servis adresi https ile başlamalıdır."
    return insurer_host_problem(host)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class InsurerAccount(models.Model):
    """An agency's own account and contract at one insurer (partaj)."""

    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.CASCADE, related_name="insurer_accounts", verbose_name="acente"
    )
    insurer = models.ForeignKey(
        Insurer, on_delete=models.CASCADE, related_name="accounts", verbose_name="sigorta şirketi"
    )
    agency_code = models.CharField("acente kodu (partaj)", max_length=64)
    credentials_encrypted = models.TextField("kimlik bilgileri (şifreli)", editable=False, default="")
    contracted_rate = models.FloatField(
        "sözleşmeli istek hızı (istek/sn)", default=10.0, validators=[MinValueValidator(0.01)]
    )
    is_active = models.BooleanField("aktif", default=True)

    class Meta:
        verbose_name = "şirket hesabı"
        verbose_name_plural = "şirket hesapları"
        constraints = [models.UniqueConstraint(fields=["agency", "insurer"], name="one_account_per_agency_insurer")]

    def __str__(self) -> str:
        return f"{self.insurer.code}:{self.agency_code}"

    @property
    def rate_key(self) -> str:
        """Identifies this contract in shared rate state: one agency's throttling never slows another."""
        return f"{self.insurer.code}:{self.agency_code}"

    def get_credentials(self) -> dict[str, str]:
        return decrypt_credentials(self.credentials_encrypted)

    def set_credentials(self, credentials: dict[str, str]) -> None:
        self.credentials_encrypted = encrypt_credentials(credentials)


class OperationPolicy(models.Model):
    """An admin's override of the default retry policy for one insurer and operation."""

    insurer = models.ForeignKey(
        Insurer, on_delete=models.CASCADE, related_name="operation_policies", verbose_name="sigorta şirketi"
    )
    # Capitalised here: Django's capfirst would write "işlem" as "Işlem".
    operation = models.CharField("İşlem", max_length=32, choices=OPERATION_CHOICES)
    max_attempts = models.PositiveSmallIntegerField(
        "en fazla deneme", validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    base_delay = models.FloatField("taban bekleme (sn)", validators=[MinValueValidator(0.0)])
    max_delay = models.FloatField("en uzun bekleme (sn)", validators=[MinValueValidator(0.0)])
    deadline = models.FloatField("toplam süre sınırı (sn)", validators=[MinValueValidator(0.1)])
    attempt_timeout = models.FloatField("deneme zaman aşımı (sn)", validators=[MinValueValidator(0.1)])
    unknown_max_attempts = models.PositiveSmallIntegerField(
        "sınıflanmamış kodda en fazla deneme", default=2, validators=[MinValueValidator(1), MaxValueValidator(5)]
    )
    throttle_spread = models.FloatField("bekleme sinyaline eklenen dağılım", default=0.2)
    retry_budget_ratio = models.FloatField(
        "yeniden deneme bütçesi (ilk başarılı denemeye oran)",
        default=0.2,
        validators=[MinValueValidator(0.0), MaxValueValidator(10.0)],
    )
    rate_floor = models.FloatField("en düşük hız (istek/sn)", default=0.5, validators=[MinValueValidator(0.01)])
    rate_ceiling = models.FloatField("en yüksek hız (istek/sn)", default=50.0, validators=[MinValueValidator(0.01)])
    throttle_threshold = models.FloatField(
        "kısıtlama eşiği (oran)", default=0.02, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    rate_burst = models.PositiveSmallIntegerField(
        "art arda istek hakkı",
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="Hızı aşmadan art arda gönderilebilecek istek sayısı; 1 ise istekler eşit aralıklarla gider.",
    )
    settling_seconds = models.FloatField(
        "sonuçlanma süresi (sn)",
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(3600.0)],
        help_text=(
            "Yalnız poliçeleştirme: şirketin bir isteği sonuçlandırması için tanınan süre. "
            'Bu süre dolmadan "poliçe yok" yanıtı kesin sayılmaz ve tekrar gönderilmez. '
            "Boş bırakılırsa şirketin sözleşmedeki süresi geçerlidir."
        ),
    )
    updated_at = models.DateTimeField("güncellenme", auto_now=True)

    class Meta:
        verbose_name = "İşlem politikası"
        verbose_name_plural = "İşlem politikaları"
        constraints = [
            models.UniqueConstraint(fields=["insurer", "operation"], name="one_policy_per_insurer_operation"),
            models.CheckConstraint(
                condition=models.Q(max_delay__gte=models.F("base_delay")), name="cap_not_below_base"
            ),
            models.CheckConstraint(condition=models.Q(deadline__gt=0), name="deadline_positive"),
            models.CheckConstraint(
                condition=models.Q(rate_ceiling__gte=models.F("rate_floor")), name="rate_ceiling_not_below_floor"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.insurer.code} / {self.operation}"

    def clean(self) -> None:
        errors = {}
        if self.max_delay is not None and self.base_delay is not None and self.max_delay < self.base_delay:
            errors["max_delay"] = "En uzun bekleme taban beklemeden küçük olamaz."
        if self.rate_ceiling is not None and self.rate_floor is not None and self.rate_ceiling < self.rate_floor:
            errors["rate_ceiling"] = "En yüksek hız en düşük hızdan küçük olamaz."
        if self.attempt_timeout and self.deadline and self.attempt_timeout > self.deadline:
            errors["attempt_timeout"] = "Deneme zaman aşımı toplam süre sınırını aşamaz."
        if errors:
            raise ValidationError(errors)


class ErrorMapping(models.Model):
    """An admin's classification of a raw insurer code; wins over the adapter's own table."""

    insurer = models.ForeignKey(
        Insurer, on_delete=models.CASCADE, related_name="error_mappings", verbose_name="sigorta şirketi"
    )
    provider_code = models.CharField("şirket hata kodu", max_length=64)
    kind = models.CharField("tür", max_length=32, choices=KIND_CHOICES)
    note = models.CharField("not", max_length=200, blank=True)
    created_at = models.DateTimeField("oluşturulma", auto_now_add=True)

    class Meta:
        verbose_name = "hata eşlemesi"
        verbose_name_plural = "hata eşlemeleri"
        constraints = [
            models.UniqueConstraint(fields=["insurer", "provider_code"], name="one_mapping_per_insurer_code")
        ]

    def __str__(self) -> str:
        return f"{self.insurer.code}:{self.provider_code} -> {self.kind}"


class Attempt(models.Model):
    """One HTTP exchange with an insurer: what it said beside what we concluded.

    One row per request actually sent, so the count of rows equals the count of calls the
    insurer received. `attempt_no` is the retry number of the operation; `call` tells apart
    the helper calls an operation may need (token, issuance lookup, issuance poll).
    """

    insurer_code = models.CharField("şirket kodu", max_length=32, db_index=True)
    account_key = models.CharField("hesap anahtarı", max_length=100, blank=True)
    operation = models.CharField("İşlem", max_length=32, choices=OPERATION_CHOICES)
    product = models.CharField("ürün", max_length=16, blank=True)
    call = models.CharField(
        "çağrı türü", max_length=16, default="main", help_text="main: asıl çağrı; diğerleri yardımcı çağrılardır."
    )
    attempt_no = models.PositiveSmallIntegerField("deneme no")
    reference = models.CharField("referans", max_length=100, blank=True, db_index=True)
    ok = models.BooleanField("başarılı")
    http_status = models.PositiveSmallIntegerField("HTTP durum kodu", null=True, blank=True)
    provider_code = models.CharField("şirket hata kodu", max_length=64, blank=True)
    error_class = models.CharField("hata sınıfı", max_length=16, choices=CLASS_CHOICES, blank=True)
    error_kind = models.CharField("hata türü", max_length=32, choices=KIND_CHOICES, blank=True)
    ambiguous = models.BooleanField("sonucu belirsiz", default=False)
    message = models.CharField("mesaj", max_length=500, blank=True)
    raw_sample = models.TextField("ham yanıt örneği", blank=True)
    latency_ms = models.FloatField("süre (ms)")
    wait_seconds = models.FloatField("bekleme (sn)", null=True, blank=True)
    wait_reason = models.CharField("bekleme nedeni", max_length=64, blank=True)
    started_at = models.DateTimeField("başlangıç", db_index=True)
    finished_at = models.DateTimeField("bitiş")

    class Meta:
        verbose_name = "şirket çağrısı"
        verbose_name_plural = "şirket çağrıları"
        indexes = [
            models.Index(fields=["insurer_code", "operation", "started_at"]),
            models.Index(fields=["error_class", "started_at"]),
        ]
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.insurer_code}/{self.operation}#{self.attempt_no} {self.provider_code or 'ok'}"


class SendRateState(models.Model):
    """Shared pacing state of one agency account at one insurer (database backend)."""

    account_key = models.CharField("hesap anahtarı", max_length=100, unique=True)
    rate = models.FloatField("hız (istek/sn)")
    # The highest rate lately known not to be throttled: after a pause, the rate climbs back here fast.
    known_good = models.FloatField("son sorunsuz hız (istek/sn)", default=0.0)
    # The known-good rate an aimed cut replaced, until a clean window confirms the cut (0: none):
    # a pause that follows first was the cut's cause, and the rate climbs back to this.
    good_before_cut = models.FloatField("kesintiden önceki sorunsuz hız (istek/sn)", default=0.0)
    # GCRA theoretical arrival time (unix seconds): the earliest instant the next call may go.
    tat = models.FloatField("sonraki çağrının en erken zamanı (unix sn)", default=0.0)
    window_started = models.FloatField("ölçüm penceresi başlangıcı (unix sn)", default=0.0)
    window_attempts = models.PositiveIntegerField("penceredeki deneme", default=0)
    window_throttled = models.PositiveIntegerField("penceredeki kısıtlanan deneme", default=0)
    updated_at = models.DateTimeField("güncellenme", auto_now=True)

    class Meta:
        verbose_name = "gönderim hızı"
        verbose_name_plural = "gönderim hızları"

    def __str__(self) -> str:
        return f"{self.account_key}: {self.rate:.2f}/s"


class RetryBudgetBucket(models.Model):
    """First-attempt successes and retries of one insurer in one short time bucket (database backend)."""

    insurer_code = models.CharField("şirket kodu", max_length=32)
    bucket = models.BigIntegerField("zaman dilimi", help_text="unix zamanı // dilim süresi (sn)")
    first_successes = models.PositiveIntegerField("başarılı ilk deneme", default=0)
    first_failures = models.PositiveIntegerField("başarısız ilk deneme", default=0)
    retries = models.PositiveIntegerField("yeniden deneme", default=0)
    # Retries that succeeded: refunded, since the budget caps calls wasted on a failing insurer.
    retry_successes = models.PositiveIntegerField("başarılı yeniden deneme", default=0)
    denied = models.PositiveIntegerField("reddedilen yeniden deneme", default=0)
    # Calls not sent because the account's next send slot lay beyond their deadline: not a retry
    # and not the insurer's answer, but what on-call must see when agents read "şu an yoğun".
    local_refusals = models.PositiveIntegerField("bizde geri çevrilen çağrı", default=0)

    class Meta:
        verbose_name = "yeniden deneme bütçesi dilimi"
        verbose_name_plural = "yeniden deneme bütçesi dilimleri"
        constraints = [models.UniqueConstraint(fields=["insurer_code", "bucket"], name="one_budget_bucket")]

    def __str__(self) -> str:
        return f"{self.insurer_code}@{self.bucket}"


class RetryBudgetState(models.Model):
    """One insurer's retry-budget token bucket (database backend); no row yet means a full bucket.

    `updated_at` is unix seconds, as the database's own clock or the worker's reads it: the
    refill since then is reckoned in the same statement that spends or deposits.
    """

    insurer_code = models.CharField("şirket kodu", max_length=32, unique=True)
    tokens = models.FloatField("kalan hak")
    updated_at = models.FloatField("güncellenme (unix sn)")

    class Meta:
        verbose_name = "yeniden deneme bütçesi"
        verbose_name_plural = "yeniden deneme bütçeleri"

    def __str__(self) -> str:
        return f"{self.insurer_code}: {self.tokens:.1f}"


# Only the audit log below refers to users; kept beside it (may move to the top imports).


class AdminChange(models.Model):
    """One operator change to what tunes an insurer: who, when, which row, each field from → to.

    Written by `integrations.audit` in the same transaction as the change itself, so a change
    that rolls back leaves no entry. Credential values are never stored, only that they changed.
    """

    class Action(models.TextChoices):
        ADD = "add", "eklendi"
        CHANGE = "change", "değiştirildi"
        DELETE = "delete", "silindi"

    at = models.DateTimeField("zaman", auto_now_add=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="kullanıcı hesabı",
    )
    # Kept beside the foreign key: the entry must still say who after the user is deleted.
    username = models.CharField("kullanıcı", max_length=150, blank=True)
    action = models.CharField("İşlem", max_length=8, choices=Action.choices)
    model_name = models.CharField("kayıt türü", max_length=64, db_index=True)
    object_id = models.CharField("kayıt no", max_length=64, db_index=True)
    object_repr = models.CharField("kayıt", max_length=200)
    insurer_code = models.CharField("şirket", max_length=32, blank=True, db_index=True)
    # [{"field", "label", "from", "to"}], or {"field", "label", "secret": true} for credentials.
    changes = models.JSONField("değişiklikler", default=list)

    class Meta:
        verbose_name = "yönetim değişikliği"
        verbose_name_plural = "yönetim değişiklikleri"
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["model_name", "object_id", "at"])]

    def __str__(self) -> str:
        return f"{self.username or '?'} {self.get_action_display()} {self.object_repr}"


# Upper bounds in seconds of the attempt-latency histogram: from a fast quote to a slow nightly
# status call. Each has its count column on `AttemptMinute`, so /metrics can sum them.
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
LATENCY_BUCKET_FIELDS = tuple(f"le_{round(bound * 1000)}ms" for bound in LATENCY_BUCKETS)


class AttemptMinute(models.Model):
    """The attempt log summed per minute and per label set, kept much longer than its rows.

    /metrics and the health dashboard read these for minutes already rolled up and the raw rows
    only after that (`integrations.attempts.retention`). The rows at 1970-01-01 are running totals per
    label set over every minute rolled up, so /metrics' all-time counters survive the deletion
    of old minute rows and never go down.
    """

    minute = models.DateTimeField(
        "dakika", help_text="UTC, dakikaya kırpılmış; birikmiş toplamların satırlarında 1970-01-01."
    )
    insurer_code = models.CharField("şirket kodu", max_length=32)
    operation = models.CharField("İşlem", max_length=32, choices=OPERATION_CHOICES)
    product = models.CharField("ürün", max_length=16, blank=True)
    call = models.CharField("çağrı türü", max_length=16, default="main")
    error_class = models.CharField("hata sınıfı", max_length=16, choices=CLASS_CHOICES, blank=True)
    error_kind = models.CharField("hata türü", max_length=32, choices=KIND_CHOICES, blank=True)
    provider_code = models.CharField("şirket hata kodu", max_length=64, blank=True)
    ok = models.BooleanField("başarılı")
    count = models.PositiveIntegerField("çağrı sayısı")
    # Second or later tries of an operation (attempt_no > 1).
    retries = models.PositiveIntegerField("yeniden deneme", default=0)
    latency_ms_sum = models.FloatField("toplam süre (ms)", default=0.0)
    le_50ms = models.PositiveIntegerField("≤ 50 ms", default=0)
    le_100ms = models.PositiveIntegerField("≤ 100 ms", default=0)
    le_250ms = models.PositiveIntegerField("≤ 250 ms", default=0)
    le_500ms = models.PositiveIntegerField("≤ 500 ms", default=0)
    le_1000ms = models.PositiveIntegerField("≤ 1 sn", default=0)
    le_2000ms = models.PositiveIntegerField("≤ 2 sn", default=0)
    le_4000ms = models.PositiveIntegerField("≤ 4 sn", default=0)
    le_8000ms = models.PositiveIntegerField("≤ 8 sn", default=0)
    le_15000ms = models.PositiveIntegerField("≤ 15 sn", default=0)
    le_30000ms = models.PositiveIntegerField("≤ 30 sn", default=0)
    le_60000ms = models.PositiveIntegerField("≤ 60 sn", default=0)

    class Meta:
        verbose_name = "dakikalık çağrı özeti"
        verbose_name_plural = "dakikalık çağrı özetleri"
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "minute",
                    "insurer_code",
                    "operation",
                    "product",
                    "call",
                    "error_class",
                    "error_kind",
                    "provider_code",
                    "ok",
                ],
                name="one_attempt_minute_per_label_set",
            )
        ]

    def __str__(self) -> str:
        return f"{self.minute:%Y-%m-%d %H:%M} {self.insurer_code}/{self.operation} ×{self.count}"


class AttemptRollupState(models.Model):
    """How far the attempt log is summed into `AttemptMinute`: one row, locked by each roll-up.

    Raw rows started before `rolled_until` are counted in the minute rows, rows from it on are
    not: readers add the two without counting a call twice.
    """

    rolled_until = models.DateTimeField("özetlendiği an", null=True, blank=True)

    class Meta:
        verbose_name = "çağrı özetleme durumu"
        verbose_name_plural = "çağrı özetleme durumları"

    def __str__(self) -> str:
        return f"rolled up until {self.rolled_until}"
