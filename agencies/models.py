"""Agencies (acente) and which agency each staff user works for."""

from django.conf import settings
from django.db import models


class Agency(models.Model):
    code = models.SlugField("acente kodu", max_length=32, unique=True)
    name = models.CharField("acente adı", max_length=200)
    is_active = models.BooleanField("aktif", default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "acente"
        verbose_name_plural = "acenteler"
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.code})"


class AgentProfile(models.Model):
    """Ties a login to one agency: everything an agent sees is scoped by it."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_profile")
    agency = models.ForeignKey(Agency, on_delete=models.PROTECT, related_name="agents")

    class Meta:
        verbose_name = "acente çalışanı"
        verbose_name_plural = "acente çalışanları"

    def __str__(self) -> str:
        return f"{self.user} @ {self.agency.code}"
