"""Agencies (acente) and which agency each staff user works for."""

from django.conf import settings
from django.db import models


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


class AgentProfile(models.Model):
    """Ties a login to one agency: everything an agent sees is scoped by it."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_profile", verbose_name="kullanıcı"
    )
    agency = models.ForeignKey(Agency, on_delete=models.PROTECT, related_name="agents", verbose_name="acente")
    # The agency's own admin: adds and deactivates the agents of this agency (agencies.views), and
    # nothing more. A flag rather than a Group because the right is always "of this one agency".
    is_agency_admin = models.BooleanField("acente yöneticisi", default=False)

    class Meta:
        verbose_name = "acente çalışanı"
        verbose_name_plural = "acente çalışanları"

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
