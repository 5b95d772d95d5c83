from typing import ClassVar

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from integrations.models import Insurer
from policies.models import Cancellation, PolicyFinding, ProductionListCheck, RenewalReminder
from work.admin import WORK_ERROR_FIELDS, DeadLetterAdmin


@admin.register(Cancellation)
class CancellationAdmin(DeadLetterAdmin):
    """Cancellations, read-only, with the one replay path: always the same reference again."""

    list_display = ["reference", "policy", "agency", "reason", "state", "attempts", "provider_code", "refund"]
    list_filter = ["state", "reason", "error_kind", "agency"]
    search_fields = ["reference", "policy__policy_no", "provider_code"]
    list_select_related = ["policy", "agency"]
    # Typed as the names it is, so the one tuple is both fields and readonly_fields.
    fields: ClassVar[tuple[str, ...]] = (
        "reference",
        "policy",
        "agency",
        "requested_by",
        "reason",
        "effective_on",
        "refund_estimate",
        "refund",
        "cancelled_on",
        "state",
        "attempts",
        "throttled_attempts",
        "reclaims",
        "maybe_sent",
        "next_attempt_at",
        "lease_expires_at",
        *WORK_ERROR_FIELDS,
        "created_at",
        "updated_at",
        "finished_at",
    )
    readonly_fields = fields


class InsurerFilter(admin.SimpleListFilter):
    """By insurer code (`?sirket=anka`): the health dashboard links here per insurer."""

    title = "sigorta şirketi"
    parameter_name = "sirket"
    insurer_path = ""

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return list(Insurer.objects.order_by("name").values_list("code", "name"))

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(**{self.insurer_path: self.value()}) if self.value() else queryset


class CheckInsurerFilter(InsurerFilter):
    insurer_path = "account__insurer__code"


class FindingInsurerFilter(InsurerFilter):
    insurer_path = "policy__insurer__code"


@admin.register(ProductionListCheck)
class ProductionListCheckAdmin(DeadLetterAdmin):
    """One account's production list read for a range: a list that could not be read is a dead
    letter, replayed (the same range read again) after the fix."""

    list_display = [
        "id",
        "account",
        "issued_from",
        "issued_to",
        "state",
        "attempts",
        "listed",
        "error_kind",
        "provider_code",
        "finished_at",
    ]
    list_filter = ["state", "error_kind", "error_class", CheckInsurerFilter, "account__agency"]
    search_fields = ["provider_code", "account__agency__code"]
    list_select_related = ["account__insurer", "account__agency"]
    # Typed as the names it is, so the one tuple is both fields and readonly_fields.
    fields: ClassVar[tuple[str, ...]] = (
        "account",
        "issued_from",
        "issued_to",
        "listed",
        "state",
        "attempts",
        "throttled_attempts",
        "reclaims",
        "in_play_since",
        "next_attempt_at",
        "lease_expires_at",
        *WORK_ERROR_FIELDS,
        "created_at",
        "updated_at",
        "finished_at",
    )
    readonly_fields = fields


class ResolvedFilter(admin.SimpleListFilter):
    title = "çözüm"
    parameter_name = "cozum"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("acik", "Açık"), ("cozuldu", "Çözüldü")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "acik":
            return queryset.filter(resolved_at__isnull=True)
        if self.value() == "cozuldu":
            return queryset.filter(resolved_at__isnull=False)
        return queryset


@admin.register(PolicyFinding)
class PolicyFindingAdmin(admin.ModelAdmin):
    """What the reconciliation found, read-only: a duplicate is resolved by cancelling it on the
    desk, a finding the insurer's next list answers heals by itself."""

    list_display = ["found_at", "kind", "agency", "insurer", "policy_no", "original_no", "note", "resolved_at"]
    list_filter = ["kind", ResolvedFilter, FindingInsurerFilter, "agency"]
    search_fields = ["policy__policy_no", "original__policy_no", "note"]
    list_select_related = ["agency", "policy__insurer", "original"]
    date_hierarchy = "found_at"
    # Typed as the names it is, so the one tuple is both fields and readonly_fields.
    fields: ClassVar[tuple[str, ...]] = ("kind", "agency", "policy", "original", "note", "found_at", "resolved_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: PolicyFinding | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: PolicyFinding | None = None) -> bool:
        return False

    @admin.display(description="şirket", ordering="policy__insurer__code")
    def insurer(self, obj: PolicyFinding) -> str:
        return obj.policy.insurer.code

    @admin.display(description="poliçe no", ordering="policy__policy_no")
    def policy_no(self, obj: PolicyFinding) -> str:
        return obj.policy.policy_no

    @admin.display(description="asıl poliçe")
    def original_no(self, obj: PolicyFinding) -> str:
        return obj.original.policy_no if obj.original else "—"


@admin.register(RenewalReminder)
class RenewalReminderAdmin(admin.ModelAdmin):
    """Who was reminded of which policy's end, and when: read-only (the daily job writes them)."""

    list_display = ["sent_on", "policy", "days_before", "recipients"]
    list_filter = ["days_before"]
    search_fields = ["policy__policy_no", "recipients"]
    date_hierarchy = "sent_on"
    raw_id_fields = ["policy"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
