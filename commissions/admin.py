"""Commission agreements and sub-agency shares for platform staff, audited like what tunes an
insurer; entries read-only.

Every add, change and delete of an agreement or a share writes an `AdminChange` entry (who, when, each
field from → to) through `integrations.audit`, in the same transaction. Correcting an agreement
changes no policy's commission by itself: `recompute_commissions` applies it.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import models
from django.http import HttpRequest

from commissions.models import CommissionAgreement, PolicyCommission, SubAgencyShare
from commissions.services import commission_agreement_problems, sub_agency_share_problems
from integrations.admin import AuditedAdmin


class CommissionAgreementForm(forms.ModelForm):
    class Meta:
        model = CommissionAgreement
        fields = ["agency", "insurer", "product", "rate", "base", "effective_from"]

    def clean(self) -> dict[str, Any]:
        """The desk's and the API's rules (`commission_agreement_problems`), on the same fields."""
        super().clean()
        data = self.cleaned_data  # what ModelForm.clean returns
        if self.errors or data.get("agency") is None:
            return data
        problems = commission_agreement_problems(
            agency=data["agency"],
            insurer=data.get("insurer"),
            product=data.get("product", ""),
            rate=data.get("rate"),
            base=data.get("base", ""),
            effective_from=data.get("effective_from"),
            exclude_pk=self.instance.pk,
        )
        if problems:
            raise ValidationError(problems)
        return data


@admin.register(CommissionAgreement)
class CommissionAgreementAdmin(AuditedAdmin):
    form = CommissionAgreementForm
    list_display = ["agency", "insurer", "product", "rate", "base", "effective_from", "created_by", "created_at"]
    list_filter = ["insurer", "product", "base", "agency"]
    search_fields = ["agency__code", "agency__name", "insurer__code"]
    date_hierarchy = "effective_from"
    readonly_fields = ["created_by", "created_at", "audit_trail"]
    change_notice = "Var olan poliçelerin komisyonu değişmez; uygulamak için recompute_commissions çalıştırın."

    def save_model(self, request: HttpRequest, obj: models.Model, form: forms.ModelForm, change: bool) -> None:
        if not change:
            assert isinstance(obj, CommissionAgreement)  # this admin's model
            assert isinstance(request.user, User)  # the admin site lets in active staff users only
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


class SubAgencyShareForm(forms.ModelForm):
    class Meta:
        model = SubAgencyShare
        fields = ["sub_agency", "rate", "effective_from"]

    def clean(self) -> dict[str, Any]:
        """The desk's and the API's rules (`sub_agency_share_problems`), on the same fields."""
        super().clean()
        data = self.cleaned_data  # what ModelForm.clean returns
        sub_agency = data.get("sub_agency")
        if self.errors or sub_agency is None:
            return data
        problems = sub_agency_share_problems(
            agency=sub_agency.agency,
            sub_agency=sub_agency,
            rate=data.get("rate"),
            effective_from=data.get("effective_from"),
            exclude_pk=self.instance.pk,
        )
        if problems:
            raise ValidationError(problems)
        return data


@admin.register(SubAgencyShare)
class SubAgencyShareAdmin(AuditedAdmin):
    form = SubAgencyShareForm
    list_display = ["sub_agency", "rate", "effective_from", "created_by", "created_at"]
    list_filter = ["sub_agency__agency"]
    search_fields = ["sub_agency__code", "sub_agency__name", "sub_agency__agency__code"]
    date_hierarchy = "effective_from"
    readonly_fields = ["created_by", "created_at", "audit_trail"]
    change_notice = "Var olan poliçelerin tali acente payı değişmez; uygulamak için recompute_commissions çalıştırın."

    def save_model(self, request: HttpRequest, obj: models.Model, form: forms.ModelForm, change: bool) -> None:
        if not change:
            assert isinstance(obj, SubAgencyShare)  # this admin's model
            assert isinstance(request.user, User)  # the admin site lets in active staff users only
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(PolicyCommission)
class PolicyCommissionAdmin(admin.ModelAdmin):
    """What each policy earned and gave back: written by issuance, cancellation and
    `recompute_commissions` only."""

    list_display = [
        "policy",
        "kind",
        "amount",
        "sub_agency_amount",
        "rate",
        "base",
        "base_amount",
        "reckoning",
        "computed_at",
    ]
    list_filter = ["kind", "reckoning", "base", "policy__insurer", "policy__agency", "sub_agency"]
    search_fields = ["policy__policy_no"]
    list_select_related = ["policy__insurer"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [field.name for field in PolicyCommission._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
