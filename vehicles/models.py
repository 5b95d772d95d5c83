"""The insurers' shared kasko value list (TSB kasko değer listesi), one edition per month.

Türkiye Sigorta Birliği publishes the list every month: for each vehicle type (a brand code and
a type code, the codes every insurer's kasko service takes) its value in lira for each model
year. Editions are kept, not overwritten: a quote priced last month was priced on last month's
list, and an import that went wrong is seen next to the one before it. The current edition is
the one for the latest month.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

TURKISH_MONTHS = (
    "Ocak",
    "Şubat",
    "Mart",
    "Nisan",
    "Mayıs",
    "Haziran",
    "Temmuz",
    "Ağustos",
    "Eylül",
    "Ekim",
    "Kasım",
    "Aralık",
)


class KaskoValueList(models.Model):
    """One month's edition of the list, as imported from the file TSB published."""

    # The first day of the month the list is valid for: a month is the list's whole identity.
    month = models.DateField("geçerli olduğu ay", unique=True)
    source_name = models.CharField("kaynak dosya", max_length=255)
    imported_at = models.DateTimeField("yüklenme zamanı", auto_now_add=True)
    # Empty when a command loaded it without naming anyone (the demo's sample, a cron job).
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        related_name="+",
        null=True,
        blank=True,
        verbose_name="yükleyen",
    )

    class Meta:
        verbose_name = "kasko değer listesi"
        verbose_name_plural = "kasko değer listeleri"
        ordering = ["-month"]
        constraints = [
            models.CheckConstraint(condition=models.Q(month__day=1), name="kasko_value_list_month_is_first_day"),
        ]

    def __str__(self) -> str:
        return f"Kasko değer listesi, {self.label}"

    @property
    def label(self) -> str:
        """ "Aralık 2026": how agents and the TSB name an edition."""
        return f"{TURKISH_MONTHS[self.month.month - 1]} {self.month.year}"


class KaskoValue(models.Model):
    """One vehicle type's value for one model year, in one edition.

    `brand_key` and `type_key` are the names folded for search (`customers.name_search`), kept
    beside the names when the list is imported: a list is written once and searched all month.
    """

    edition = models.ForeignKey(KaskoValueList, on_delete=models.CASCADE, related_name="values", verbose_name="liste")
    brand_code = models.CharField("marka kodu", max_length=3)
    type_code = models.CharField("tip kodu", max_length=3)
    brand_name = models.CharField("marka adı", max_length=100)
    type_name = models.CharField("tip adı", max_length=200)
    brand_key = models.CharField("marka (aranan)", max_length=100, editable=False)
    type_key = models.CharField("tip (aranan)", max_length=200, editable=False)
    model_year = models.PositiveSmallIntegerField("model yılı")
    value = models.DecimalField("kasko bedeli (TL)", max_digits=14, decimal_places=2)

    class Meta:
        verbose_name = "kasko değeri"
        verbose_name_plural = "kasko değerleri"
        ordering = ["brand_name", "type_name", "-model_year"]
        constraints = [
            models.UniqueConstraint(
                fields=["edition", "brand_code", "type_code", "model_year"], name="one_kasko_value_per_type_and_year"
            ),
            models.CheckConstraint(condition=models.Q(value__gt=0), name="kasko_value_is_positive"),
        ]
        indexes = [models.Index(fields=["edition", "brand_code", "type_code"], name="kasko_value_type")]

    def __str__(self) -> str:
        return f"{self.brand_name} {self.type_name} {self.model_year}"
