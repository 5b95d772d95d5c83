"""Commissions: the rate an agency agreed with an insurer per product, and what each policy earned.

An agreement is never ended by hand: the next one for the same agency, insurer and product
(a later `effective_from`) takes over from its day, so the history is the list of agreements
itself. A policy's commission is a small ledger: the amount earned when it was issued and, if
it is cancelled, a reversal entry (negative) for the refund's share. Each entry copies the
figures it was reckoned from (premium, base, rate), so it still reads right after the
agreement is corrected.

A sub-agency (tali acente) selling under the agency gets a share of the agency's commission on
what it sells: `SubAgencyShare`, a percent from a day on, kept as history exactly like the
agreements. Each entry of a policy credited to a sub-agency records the share it applied and the
sub-agency's part of its amount.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from integrations.models import PRODUCT_CHOICES, Insurer
from policies.models import Cancellation, Policy


class CommissionBase(models.TextChoices):
    """What the rate is applied to, as the agreement with the insurer says."""

    GROSS = "gross", "Brüt prim"
    NET = "net", "Net prim (vergi ve fonlar düşülmüş)"


class CommissionAgreement(models.Model):
    """The commission rate one agency agreed with one insurer for one product, from a day on."""

    agency = models.ForeignKey(
        "agencies.Agency", on_delete=models.PROTECT, related_name="commission_agreements", verbose_name="acente"
    )
    insurer = models.ForeignKey(Insurer, on_delete=models.PROTECT, related_name="+", verbose_name="sigorta şirketi")
    product = models.CharField("ürün", max_length=16, choices=PRODUCT_CHOICES)
    rate = models.DecimalField("komisyon oranı (%)", max_digits=5, decimal_places=2)
    base = models.CharField("hesap tabanı", max_length=8, choices=CommissionBase.choices)
    effective_from = models.DateField("geçerlilik başlangıcı")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="giren",
    )
    created_at = models.DateTimeField("girilme", auto_now_add=True)

    class Meta:
        verbose_name = "komisyon anlaşması"
        verbose_name_plural = "komisyon anlaşmaları"
        ordering = ["agency", "insurer", "product", "-effective_from"]
        constraints = [
            # On any day exactly one agreement (the latest started) is in force: two starting the
            # same day would leave it to chance.
            models.UniqueConstraint(
                fields=["agency", "insurer", "product", "effective_from"], name="one_commission_agreement_per_start"
            ),
            models.CheckConstraint(
                condition=Q(rate__gt=0) & Q(rate__lte=100), name="commission_rate_between_0_and_100"
            ),
            models.CheckConstraint(condition=Q(base__in=CommissionBase.values), name="commission_base_known"),
        ]

    def __str__(self) -> str:
        return f"{self.agency.code} {self.insurer.code} {self.product} %{self.rate} ({self.effective_from:%d.%m.%Y})"


class SubAgencyShare(models.Model):
    """The part of the agency's commission one sub-agency earns on the policies it sells, in
    percent, from a day on. Like an agreement, never ended by hand: the next one takes over."""

    sub_agency = models.ForeignKey(
        "agencies.SubAgency", on_delete=models.PROTECT, related_name="commission_shares", verbose_name="tali acente"
    )
    rate = models.DecimalField("pay oranı (%)", max_digits=5, decimal_places=2)
    effective_from = models.DateField("geçerlilik başlangıcı")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="giren",
    )
    created_at = models.DateTimeField("girilme", auto_now_add=True)

    class Meta:
        verbose_name = "tali acente komisyon payı"
        verbose_name_plural = "tali acente komisyon payları"
        ordering = ["sub_agency", "-effective_from"]
        constraints = [
            models.UniqueConstraint(fields=["sub_agency", "effective_from"], name="one_sub_agency_share_per_start"),
            models.CheckConstraint(
                condition=Q(rate__gt=0) & Q(rate__lte=100), name="sub_agency_share_between_0_and_100"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sub_agency.code} %{self.rate} ({self.effective_from:%d.%m.%Y})"


class PolicyCommission(models.Model):
    """One entry of a policy's commission: the amount earned at issuance (ACCRUAL, ≥ 0) or, once
    the insurer cancelled the policy, its reversal (REVERSAL, ≤ 0). At most one of each per policy,
    so neither a repeated signal nor a second recompute can count one twice.

    A reversal comes from our own cancellation (`cancellation`, with the insurer's refund) or
    from the nightly sync finding the policy cancelled at the insurer (`found_cancelled_on`, the
    day it was found: no refund is known then, so it is reckoned by the days left)."""

    class Kind(models.TextChoices):
        ACCRUAL = "accrual", "Komisyon"
        REVERSAL = "reversal", "İptal iadesi"

    class Reckoning(models.TextChoices):
        """How an entry was reckoned: the agreement's rate, or a reversal's share of it."""

        RATE = "rate", "Anlaşmadaki oran"
        REFUND = "refund", "İade primi oranında"
        DAYS = "days", "Kalan gün oranında"

    policy = models.ForeignKey(
        Policy, on_delete=models.PROTECT, related_name="commission_entries", verbose_name="poliçe"
    )
    kind = models.CharField("tür", max_length=8, choices=Kind.choices)
    agreement = models.ForeignKey(
        CommissionAgreement, on_delete=models.PROTECT, related_name="entries", verbose_name="komisyon anlaşması"
    )
    cancellation = models.ForeignKey(
        Cancellation, on_delete=models.PROTECT, null=True, blank=True, related_name="+", verbose_name="poliçe iptali"
    )
    # The figures it was reckoned from, as they were then.
    premium = models.DecimalField("brüt prim", max_digits=12, decimal_places=2)
    base = models.CharField("hesap tabanı", max_length=8, choices=CommissionBase.choices)
    base_amount = models.DecimalField("komisyon matrahı", max_digits=12, decimal_places=2)
    rate = models.DecimalField("komisyon oranı (%)", max_digits=5, decimal_places=2)
    refund = models.DecimalField("İade primi", max_digits=12, decimal_places=2, null=True, blank=True)
    found_cancelled_on = models.DateField("şirkette iptal bulunduğu gün", null=True, blank=True)
    reckoning = models.CharField("hesaplama", max_length=8, choices=Reckoning.choices)
    amount = models.DecimalField("tutar", max_digits=12, decimal_places=2)
    computed_at = models.DateTimeField("hesaplanma")
    # The sub-agency's part of `amount` (same sign), when the policy is credited to one: the share
    # in force on the issue day, copied as it was. 0 with no share (or no sub-agency).
    sub_agency = models.ForeignKey(
        "agencies.SubAgency",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="tali acente",
    )
    sub_agency_share = models.ForeignKey(
        SubAgencyShare, on_delete=models.PROTECT, null=True, blank=True, related_name="entries", verbose_name="pay"
    )
    sub_agency_rate = models.DecimalField("tali acente payı (%)", max_digits=5, decimal_places=2, null=True, blank=True)
    sub_agency_amount = models.DecimalField("tali acente tutarı", max_digits=12, decimal_places=2, default=0)

    class Meta:
        verbose_name = "poliçe komisyonu"
        verbose_name_plural = "poliçe komisyonları"
        ordering = ["policy", "computed_at"]
        constraints = [
            models.UniqueConstraint(fields=["policy", "kind"], name="one_commission_entry_per_kind"),
            models.CheckConstraint(
                condition=(
                    Q(kind="accrual")
                    & Q(amount__gte=0)
                    & Q(cancellation__isnull=True)
                    & Q(found_cancelled_on__isnull=True)
                )
                | (
                    Q(kind="reversal")
                    & Q(amount__lte=0)
                    # Our cancellation, or the sync's finding: exactly one says why.
                    & (
                        (Q(cancellation__isnull=False) & Q(found_cancelled_on__isnull=True))
                        | (Q(cancellation__isnull=True) & Q(found_cancelled_on__isnull=False))
                    )
                ),
                name="commission_entry_sign_by_kind",
            ),
            # The sub-agency's part never exceeds the entry, and has its sign.
            models.CheckConstraint(
                condition=(
                    Q(amount__gte=0) & Q(sub_agency_amount__gte=0) & Q(sub_agency_amount__lte=models.F("amount"))
                )
                | (Q(amount__lte=0) & Q(sub_agency_amount__lte=0) & Q(sub_agency_amount__gte=models.F("amount"))),
                name="commission_sub_agency_part_within_entry",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.policy} {self.kind} {self.amount}"
