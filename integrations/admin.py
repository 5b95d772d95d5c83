"""Admin for what operators tune: insurers, accounts, retry policies, error mappings; the logs read-only.

Every add, change and delete of these rows (here, list-view edits and bulk deletes included, or
anywhere else) writes an `AdminChange` entry with each field's old and new value, in the same
transaction as the change (integrations.audit).
Policies and mappings are read by workers through a five-second cache: a change is in force
everywhere within seconds, with no restart.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.html import format_html, format_html_join
from django.views.decorators.debug import sensitive_post_parameters

from integrations.answers.classification import MAPPING_CACHE_SECONDS, clear_mapping_cache
from integrations.answers.taxonomy import ErrorKind
from integrations.audit import admin_change_summary, audit_value_shown, audited_models, error_mapping_check, model_field
from integrations.models import (
    PRODUCT_CHOICES,
    AdminChange,
    Attempt,
    ErrorMapping,
    Insurer,
    InsurerAccount,
    OperationPolicy,
)
from integrations.operations import Operation
from integrations.retry_policies import POLICY_CACHE_SECONDS, RetryPolicy, clear_policy_cache, default_policy

# The tunables of a policy, in the order operators read them (the list view edits them in place).
POLICY_TUNABLES = [
    "max_attempts",
    "base_delay",
    "max_delay",
    "deadline",
    "attempt_timeout",
    "unknown_max_attempts",
    "retry_budget_ratio",
    "rate_floor",
    "rate_ceiling",
    "rate_burst",
    "throttle_threshold",
]


# The requests that already carry an audited admin's change notice: once per request, however many
# rows a list-view save changes. Weak: a request is forgotten with its response.
_notice_sent: weakref.WeakSet[HttpRequest] = weakref.WeakSet()


class AuditedAdmin(admin.ModelAdmin):
    """Drops local caches after a change. The `AdminChange` entry itself is written by the
    model signals of `integrations.audit`, naming `request.user` (`AuditActorMiddleware`)."""

    # Local caches to drop after a change, so this process does not wait out its own cache.
    clear_caches: tuple = ()
    change_notice = ""

    def save_model(self, request: HttpRequest, obj: models.Model, form: forms.ModelForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        self._after_change(request)

    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        super().delete_model(request, obj)
        self._after_change(request)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        super().delete_queryset(request, queryset)
        self._after_change(request)

    def _after_change(self, request: HttpRequest) -> None:
        for clear in self.clear_caches:
            transaction.on_commit(clear)
        # Once per request: a list-view save calls save_model once per edited row.
        if self.change_notice and request not in _notice_sent:
            _notice_sent.add(request)
            self.message_user(request, self.change_notice, level=messages.INFO)

    @admin.display(description="değişiklik geçmişi")
    def audit_trail(self, obj: models.Model) -> str:
        if obj.pk is None:
            return "—"
        url = reverse("admin:integrations_adminchange_changelist")
        count = AdminChange.objects.filter(model_name=obj._meta.model_name, object_id=str(obj.pk)).count()
        return format_html(
            '<a href="{}?model_name={}&amp;object_id={}">{} kayıt</a>', url, obj._meta.model_name, obj.pk, count
        )


class InsurerForm(forms.ModelForm):
    # Insurers' test environments are plain http; a scheme typed in is kept as typed.
    base_url = forms.URLField(label="servis adresi", max_length=300, assume_scheme="https")
    products = forms.MultipleChoiceField(
        label="satılan ürünler", choices=PRODUCT_CHOICES, widget=forms.CheckboxSelectMultiple, required=False
    )

    class Meta:
        model = Insurer
        fields = ["code", "name", "base_url", "is_active", "products"]


@admin.register(Insurer)
class InsurerAdmin(AuditedAdmin):
    form = InsurerForm
    list_display = ["code", "name", "base_url", "is_active", "products_sold", "contracted_rates", "policy_link"]
    list_editable = ["is_active"]
    readonly_fields = ["audit_trail"]
    search_fields = ["code", "name"]

    def formfield_for_dbfield(self, db_field: models.Field, request: HttpRequest, **kwargs: Any) -> forms.Field | None:
        # The list view's form is built from every field: say the scheme (Django 6 changes the default).
        if isinstance(db_field, models.URLField):
            kwargs.setdefault("assume_scheme", "https")
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    @admin.display(description="satılan ürünler")
    def products_sold(self, obj: Insurer) -> str:
        return ", ".join(obj.products or []) or "—"

    @admin.display(description="sözleşmeli hızlar (istek/sn)")
    def contracted_rates(self, obj: Insurer) -> str:
        return ", ".join(f"{a.agency_code}: {a.contracted_rate:g}" for a in obj.accounts.all()) or "—"

    @admin.display(description="politikalar")
    def policy_link(self, obj: Insurer) -> str:
        url = reverse("admin:integrations_operationpolicy_changelist")
        return format_html('<a href="{}?insurer__id__exact={}">politikalar</a>', url, obj.pk)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).prefetch_related("accounts")


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


@admin.register(InsurerAccount)
class InsurerAccountAdmin(AuditedAdmin):
    form = InsurerAccountForm
    list_display = ["insurer", "agency", "agency_code", "contracted_rate", "is_active", "has_credentials"]
    list_editable = ["contracted_rate", "is_active"]
    list_filter = ["insurer", "agency"]
    list_select_related = ["insurer", "agency"]
    readonly_fields = ["has_credentials", "audit_trail"]

    @admin.display(description="kimlik bilgileri kayıtlı", boolean=True)
    def has_credentials(self, obj: InsurerAccount) -> bool:
        return bool(obj.credentials_encrypted)

    # Error reports (AdminEmailHandler and the like) must not carry typed-in credentials.
    @method_decorator(sensitive_post_parameters("new_credentials"))
    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return super().changeform_view(request, *args, **kwargs)


# The columns of the "policies in effect" table: the list view's tunables, and issuance's settling time.
POLICY_IN_EFFECT_COLUMNS = [*POLICY_TUNABLES, "settling_seconds"]


@dataclass(frozen=True)
class PolicyInEffect:
    """The policy workers apply to one insurer and operation, beside the one they would apply
    without the admin's row: the row pins every value it holds, so a later change of a code
    default reaches only the pairs that have none."""

    insurer: Insurer
    operation: Operation
    policy: RetryPolicy
    default: RetryPolicy
    override: OperationPolicy | None


def operation_policies_in_effect(*, insurers: Iterable[Insurer]) -> list[PolicyInEffect]:
    """Every (insurer, operation) pair, merged as `policy_for` merges it, in one query."""
    insurers = list(insurers)
    overrides = {(row.insurer_id, row.operation): row for row in OperationPolicy.objects.filter(insurer__in=insurers)}
    in_effect = []
    for insurer in insurers:
        for operation in Operation:
            default = default_policy(operation, insurer.code)
            override = overrides.get((insurer.pk, operation.value))
            policy = default
            if override is not None:
                policy = default.with_overrides(**{f.name: getattr(override, f.name) for f in fields(RetryPolicy)})
            in_effect.append(PolicyInEffect(insurer, operation, policy, default, override))
    return in_effect


def _insurer_code(insurer_id: object) -> str | None:
    """The code of the insurer a form names by id (`?insurer=3`), or None if it names none."""
    insurer_id = str(insurer_id or "")
    if not insurer_id.isdigit():
        return None
    return Insurer.objects.filter(pk=insurer_id).values_list("code", flat=True).first()


def _policy_value_shown(operation: Operation, name: str, value: Any) -> str:
    if name == "settling_seconds" and operation != Operation.ISSUE_POLICY:
        return "—"  # read by issuance only
    return f"{value:g}" if isinstance(value, float) else str(value)


class OperationPolicyForm(forms.ModelForm):
    class Meta:
        model = OperationPolicy
        fields = ["insurer", "operation", *POLICY_TUNABLES, "throttle_spread", "settling_seconds"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Empty follows the insurer's stated time: show that time in the empty field.
        operation = self.instance.operation or self.initial.get("operation")
        insurer_code = _insurer_code(self.instance.insurer_id or self.initial.get("insurer"))
        if operation == Operation.ISSUE_POLICY and insurer_code:
            stated = default_policy(operation, insurer_code).settling_seconds
            self.fields["settling_seconds"].widget.attrs["placeholder"] = f"{stated:g}"

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data  # what ModelForm.clean returns
        operation = cleaned.get("operation")
        if cleaned.get("settling_seconds") is not None and operation and operation != Operation.ISSUE_POLICY:
            # Only issuance reads it: a value elsewhere would look like a setting and do nothing.
            self.add_error("settling_seconds", "Sonuçlanma süresi yalnız poliçeleştirme (issue_policy) için girilir.")
        return cleaned


@admin.register(OperationPolicy)
class OperationPolicyAdmin(AuditedAdmin):
    """The list page shows every (insurer, operation) pair in force, rows or not.

    A pair without a row follows the code's default (and what the insurer's adapter states), so a
    fresh install has no rows and nothing to keep in step when a default changes; "Özelleştir"
    opens the add form prefilled with that pair's defaults, and the first save creates the row.
    "Varsayılana dön" deletes it. The rows themselves are listed below, editable in place.
    """

    form = OperationPolicyForm
    list_display = ["insurer", "operation", *POLICY_TUNABLES, "settling_seconds", "updated_at"]
    list_editable = POLICY_TUNABLES
    list_filter = ["insurer", "operation"]
    list_select_related = ["insurer"]
    actions = ["reset_to_default"]
    change_list_template = "admin/integrations/operationpolicy/change_list.html"
    clear_caches = (clear_policy_cache,)
    change_notice = f"Politika değişikliği tüm işçilerde en geç {POLICY_CACHE_SECONDS:g} sn içinde geçerli olur."

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        insurers = Insurer.objects.order_by("code")
        if (insurer_id := request.GET.get("insurer__id__exact", "")).isdigit():
            insurers = insurers.filter(pk=insurer_id)
        chosen_operation = request.GET.get("operation__exact")
        rows = [
            self._policy_in_effect_row(request, pair)
            for pair in operation_policies_in_effect(insurers=insurers)
            if chosen_operation in (None, pair.operation.value)
        ]
        labels = [model_field(OperationPolicy, name).verbose_name for name in POLICY_IN_EFFECT_COLUMNS]
        context = {
            "policies_in_effect": rows,
            "policy_columns": labels,
            "can_reset_policies": self.has_delete_permission(request),
            "title": "İşlem politikaları",
            **(extra_context or {}),
        }
        return super().changelist_view(request, extra_context=context)

    def _policy_in_effect_row(self, request: HttpRequest, pair: PolicyInEffect) -> dict[str, Any]:
        edit_url = None
        if pair.override is not None and self.has_change_permission(request, pair.override):
            edit_url = reverse("admin:integrations_operationpolicy_change", args=[pair.override.pk])
        elif pair.override is None and self.has_add_permission(request):
            edit_url = reverse("admin:integrations_operationpolicy_add") + (
                f"?insurer={pair.insurer.pk}&operation={pair.operation.value}"
            )
        cells = []
        for name in POLICY_IN_EFFECT_COLUMNS:
            value, default = getattr(pair.policy, name), getattr(pair.default, name)
            cells.append(
                {
                    "value": _policy_value_shown(pair.operation, name, value),
                    "default": _policy_value_shown(pair.operation, name, default),
                    "differs": value != default,
                }
            )
        return {"pair": pair, "cells": cells, "edit_url": edit_url}

    def get_readonly_fields(self, request: HttpRequest, obj: OperationPolicy | None = None) -> list[str]:
        # A new row's form is already filled with its defaults; the summary would only say "—".
        return ["defaults", "audit_trail"] if obj is not None else ["audit_trail"]

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        # "Varsayılana dön" is what deleting a row means here; one name for it is enough.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    @admin.action(description="Seçili politikaları varsayılana döndür", permissions=["delete"])
    def reset_to_default(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = len(queryset)
        self.delete_queryset(request, queryset)
        self.message_user(request, f"{count} işlem politikası varsayılana döndürüldü.")

    @admin.display(description="bu şirket ve işlemin varsayılanları")
    def defaults(self, obj: OperationPolicy) -> str:
        if not obj.operation:
            return "—"
        operation = Operation(obj.operation)
        policy = default_policy(operation, obj.insurer.code if obj.insurer_id else None)
        return format_html_join(
            ", ",
            "{}: {}",
            ((name, _policy_value_shown(operation, name, getattr(policy, name))) for name in POLICY_IN_EFFECT_COLUMNS),
        )

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """A new policy starts from its pair's defaults (`?insurer=3&operation=kasko_quote`), trafik otherwise.

        The settling time stays empty: empty follows the insurer's stated time, a number would pin it.
        """
        initial = super().get_changeform_initial_data(request)
        operation = initial.get("operation") or Operation.TRAFIK_QUOTE.value
        if isinstance(operation, str) and operation in {op.value for op in Operation}:
            initial.setdefault("operation", operation)
            for name, value in asdict(default_policy(operation, _insurer_code(initial.get("insurer")))).items():
                if name != "settling_seconds":
                    initial.setdefault(name, value)
        return initial


class ErrorMappingForm(forms.ModelForm):
    """Asks for a confirmation before a permanent kind that could make a second policy."""

    risk_confirmed = forms.BooleanField(
        label="İkinci poliçe riskini anladım",
        required=False,
        help_text="Yalnızca, aynı isteği ayıklamayan bir şirkette poliçeleştirme yanıtında görülmüş bir kodu "
        "kalıcı olarak sınıflarken gerekir.",
    )

    class Meta:
        model = ErrorMapping
        fields = ["insurer", "provider_code", "kind", "note"]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data  # what ModelForm.clean returns
        insurer, code, kind = cleaned.get("insurer"), cleaned.get("provider_code"), cleaned.get("kind")
        if insurer is not None and code and kind:
            try:
                error_mapping_check(
                    insurer_code=insurer.code,
                    provider_code=code,
                    kind=ErrorKind(kind),
                    risk_confirmed=bool(cleaned.get("risk_confirmed")),
                )
            except ValidationError as exc:
                self.add_error("kind", exc.message_dict["kind"])
        return cleaned


@admin.register(ErrorMapping)
class ErrorMappingAdmin(AuditedAdmin):
    form = ErrorMappingForm
    list_display = ["insurer", "provider_code", "kind", "note", "created_at"]
    # The kind is changed on the change form only, where a risky permanent mapping asks to be confirmed.
    list_editable = ["note"]
    list_filter = ["insurer", "kind"]
    list_select_related = ["insurer"]
    search_fields = ["provider_code", "note"]
    readonly_fields = ["audit_trail"]
    clear_caches = (clear_mapping_cache,)
    change_notice = f"Eşleme tüm işçilerde en geç {MAPPING_CACHE_SECONDS:g} sn içinde geçerli olur."


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin):
    list_display = [
        "started_at",
        "insurer_code",
        "operation",
        "product",
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
    list_filter = ["insurer_code", "operation", "product", "error_class", "error_kind", "ok"]
    search_fields = ["reference", "provider_code"]
    date_hierarchy = "started_at"
    change_list_template = "integrations/admin/attempt_change_list.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # /metrics counts these rows as Prometheus counters: deleting some would look like a reset.
        return False


# The audit entry's page: every column shown, none editable.
_ADMIN_CHANGE_COLUMNS = (
    "at",
    "username",
    "action",
    "model_label",
    "object_id",
    "object_repr",
    "insurer_code",
    "changes_table",
)


@admin.register(AdminChange)
class AdminChangeAdmin(admin.ModelAdmin):
    """The audit trail, read-only: nobody edits or deletes it through the admin."""

    list_display = ["at", "username", "action", "model_label", "object_repr", "insurer_code", "summary"]
    list_filter = ["action", "model_name", "insurer_code", "username"]
    search_fields = ["object_repr", "username", "insurer_code"]
    date_hierarchy = "at"
    fields = _ADMIN_CHANGE_COLUMNS
    readonly_fields = _ADMIN_CHANGE_COLUMNS

    @admin.display(description="kayıt türü", ordering="model_name")
    def model_label(self, obj: AdminChange) -> str:
        model = {m._meta.model_name: m for m in audited_models()}.get(obj.model_name)
        return str(model._meta.verbose_name) if model else obj.model_name

    @admin.display(description="değişiklikler")
    def summary(self, obj: AdminChange) -> str:
        return admin_change_summary(obj.changes)

    @admin.display(description="değişiklikler")
    def changes_table(self, obj: AdminChange) -> str:
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (c["label"], "•••", "değiştirildi (değer kaydedilmez)")
                if c.get("secret")
                else (c["label"], audit_value_shown(c.get("from")), audit_value_shown(c.get("to")))
                for c in obj.changes
            ),
        )
        return format_html("<table><tr><th>alan</th><th>önce</th><th>sonra</th></tr>{}</table>", rows)

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        # The "değişiklik geçmişi" link of every audited row filters by its id.
        return lookup == "object_id" or super().lookup_allowed(lookup, value, request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
