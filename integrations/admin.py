"""Admin for what operators tune: insurers, accounts, retry policies, error mappings; attempts read-only."""

from __future__ import annotations

from django import forms
from django.contrib import admin

from integrations.models import Attempt, ErrorMapping, Insurer, InsurerAccount, OperationPolicy


class InsurerAccountForm(forms.ModelForm):
    """Credentials are write-only: typed in as JSON, stored encrypted, never shown back."""

    new_credentials = forms.JSONField(
        label="Yeni kimlik bilgileri (JSON)",
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text='Ör. {"api_key": "…"}. Boş bırakılırsa mevcut bilgiler korunur.',
    )

    class Meta:
        model = InsurerAccount
        fields = ["agency", "insurer", "agency_code", "contracted_rate", "is_active"]

    def clean_new_credentials(self) -> dict | None:
        value = self.cleaned_data.get("new_credentials")
        if value in (None, ""):
            return None
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise forms.ValidationError("Kimlik bilgileri metin değerli bir JSON nesnesi olmalıdır.")
        return value

    def save(self, commit: bool = True) -> InsurerAccount:
        account = super().save(commit=False)
        if self.cleaned_data.get("new_credentials"):
            account.set_credentials(self.cleaned_data["new_credentials"])
        if commit:
            account.save()
        return account


@admin.register(Insurer)
class InsurerAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "base_url", "is_active", "products"]
    list_editable = ["is_active"]


@admin.register(InsurerAccount)
class InsurerAccountAdmin(admin.ModelAdmin):
    form = InsurerAccountForm
    list_display = ["insurer", "agency", "agency_code", "contracted_rate", "is_active"]
    list_filter = ["insurer", "agency"]


@admin.register(OperationPolicy)
class OperationPolicyAdmin(admin.ModelAdmin):
    list_display = [
        "insurer",
        "operation",
        "max_attempts",
        "base_delay",
        "max_delay",
        "deadline",
        "attempt_timeout",
        "unknown_max_attempts",
        "retry_budget_ratio",
        "rate_floor",
        "rate_ceiling",
        "throttle_threshold",
    ]
    list_editable = list_display[2:]
    list_filter = ["insurer", "operation"]


@admin.register(ErrorMapping)
class ErrorMappingAdmin(admin.ModelAdmin):
    list_display = ["insurer", "provider_code", "kind", "note", "created_at"]
    list_filter = ["insurer", "kind"]


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin):
    list_display = [
        "started_at",
        "insurer_code",
        "operation",
        "call",
        "attempt_no",
        "ok",
        "http_status",
        "provider_code",
        "error_class",
        "error_kind",
        "latency_ms",
        "wait_seconds",
        "wait_reason",
    ]
    list_filter = ["insurer_code", "operation", "error_class", "error_kind", "ok"]
    search_fields = ["reference", "provider_code"]
    date_hierarchy = "started_at"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
