"""Agencies (acente) and which agency each staff user works for."""

from django.conf import settings
from django.db import models
from rest_framework.authtoken.models import TokenProxy


class Agency(models.Model):
    code = models.SlugField("acente kodu", max_length=32, unique=True)
    name = models.CharField("acente adı", max_length=200)
    is_active = models.BooleanField("aktif", default=True)
    created_at = models.DateTimeField("oluşturulma", auto_now_add=True)

    class Meta:
        verbose_name = "acente"
        verbose_name_plural = "acenteler"
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.code})"


class SubAgency(models.Model):
    """A sub-agency (tali acente) selling under an agency's insurer accounts.

    Its users see and sell only what is credited to it; the agency's own staff (sub_agency
    null) see the whole agency. What it sells carries it (customer, quote request, policy), so
    the credit is fixed when the sale is made, not reckoned later from who clicked.
    """

    agency = models.ForeignKey(Agency, on_delete=models.PROTECT, related_name="sub_agencies", verbose_name="acente")
    code = models.SlugField("tali acente kodu", max_length=32)
    name = models.CharField("tali acente adı", max_length=200)
    is_active = models.BooleanField("aktif", default=True)
    created_at = models.DateTimeField("oluşturulma", auto_now_add=True)

    class Meta:
        verbose_name = "tali acente"
        verbose_name_plural = "tali acenteler"
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["agency", "code"], name="sub_agency_code_unique_per_agency")]

    def __str__(self) -> str:
        return f"{self.name} ({self.agency.code}/{self.code})"


class AgentProfile(models.Model):
    """Ties a login to one agency: everything an agent sees is scoped by it."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_profile", verbose_name="kullanıcı"
    )
    agency = models.ForeignKey(Agency, on_delete=models.PROTECT, related_name="agents", verbose_name="acente")
    # The agency's own admin: adds and deactivates the agents of this agency (agencies.views), and
    # nothing more. A flag rather than a Group because the right is always "of this one agency".
    is_agency_admin = models.BooleanField("acente yöneticisi", default=False)
    # Set: this user works for that sub-agency and sees only what is credited to it. Null: the
    # agency's own staff.
    sub_agency = models.ForeignKey(
        SubAgency,
        on_delete=models.PROTECT,
        related_name="agents",
        null=True,
        blank=True,
        verbose_name="tali acente",
    )

    class Meta:
        verbose_name = "acente çalışanı"
        verbose_name_plural = "acente çalışanları"
        constraints = [
            # The manager sees and manages the whole agency; a sub-agency user sees only their
            # sub-agency's records (agencies.scope), so one login cannot be both.
            models.CheckConstraint(
                condition=models.Q(is_agency_admin=False) | models.Q(sub_agency__isnull=True),
                name="sub_agency_user_is_no_agency_admin",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.agency.code}"


class LoginFailure(models.Model):
    """Failed password logins of one username from one address, counted in the database.

    The count lives here rather than in a process's memory because several web workers serve
    logins: a guesser spreading tries over workers still meets one counter (agencies.auth).
    """

    username = models.CharField("kullanıcı adı", max_length=150)
    ip_address = models.CharField("IP adresi", max_length=45, blank=True)
    failures = models.PositiveIntegerField("başarısız deneme", default=0)
    # Capitalised here: Django's capfirst would write "ilk" as "Ilk".
    window_started_at = models.DateTimeField("İlk başarısız deneme")
    locked_until = models.DateTimeField("kilit bitişi", null=True, blank=True)

    class Meta:
        verbose_name = "başarısız giriş"
        verbose_name_plural = "başarısız girişler"
        constraints = [
            models.UniqueConstraint(fields=["username", "ip_address"], name="one_login_counter_per_username_ip")
        ]
        indexes = [models.Index(fields=["window_started_at"], name="login_failure_window_idx")]

    def __str__(self) -> str:
        return f"{self.username} @ {self.ip_address or '?'}: {self.failures}"


class LoginLockout(models.Model):
    """A login counter reaching its limit: the health dashboard and /metrics count these.

    Kept apart from `LoginFailure` (which forgets a counter once its window is over) so on-call
    sees how many lock-outs there were, of which kind, and which were lifted by hand, by whom.
    """

    class Scope(models.TextChoices):
        PAIR = "pair", "kullanıcı adı + adres"
        ADDRESS = "address", "adres"
        # Not a lock for the account's owner any more: past it, a login needs a code by e-mail.
        USERNAME = "username", "kullanıcı adı (e-posta kodu istenir)"

    scope = models.CharField("kapsam", max_length=16, choices=Scope.choices)
    username = models.CharField("kullanıcı adı", max_length=150, blank=True)
    ip_address = models.CharField("IP adresi", max_length=45, blank=True)
    locked_at = models.DateTimeField("kilitlenme", db_index=True)
    locked_until = models.DateTimeField("kilit bitişi")
    lifted_at = models.DateTimeField("elle kaldırılma", null=True, blank=True)
    lifted_by = models.CharField("kaldıran", max_length=150, blank=True)

    class Meta:
        verbose_name = "giriş kilidi"
        verbose_name_plural = "giriş kilitleri"
        ordering = ["-locked_at"]

    def __str__(self) -> str:
        return f"{self.get_scope_display()}: {self.username or '*'} @ {self.ip_address or '*'}"


class ApiToken(TokenProxy):
    """A login's API token as the admin lists it. DRF's own admin names it "Token", which its
    Turkish catalogue renders "İşaret" (a sign): here it is what agents call it."""

    class Meta:
        proxy = True
        verbose_name = "API anahtarı"
        verbose_name_plural = "API anahtarları"
