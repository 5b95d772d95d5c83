"""Admin for policy documents: read-only records; dead letters replayed by action after a fix."""

from __future__ import annotations

from typing import ClassVar

from django.contrib import admin

from documents.models import PolicyDocument
from work.admin import WORK_ERROR_FIELDS, DeadLetterAdmin


@admin.register(PolicyDocument)
class PolicyDocumentAdmin(DeadLetterAdmin):
    """No file link here: the PDF is served only through the desk and the API, to its agency."""

    list_display = [
        "id",
        "policy_no",
        "insurer",
        "agency",
        "state",
        "attempts",
        "throttled_attempts",
        "error_kind",
        "provider_code",
        "size",
        "fetched_at",
        "next_attempt_at",
    ]
    list_filter = ["state", "error_kind", "error_class", "policy__insurer", "agency"]
    list_select_related = ["policy__insurer", "agency"]
    search_fields = ["policy__policy_no", "provider_code", "sha256"]
    # Typed as the names it is, so the one tuple is both fields and readonly_fields.
    fields: ClassVar[tuple[str, ...]] = (
        "policy",
        "agency",
        "state",
        "attempts",
        "throttled_attempts",
        "reclaims",
        "in_play_since",
        "next_attempt_at",
        "lease_expires_at",
        *WORK_ERROR_FIELDS,
        "stored_name",
        "content_type",
        "size",
        "sha256",
        "fetched_at",
        "created_at",
        "updated_at",
        "finished_at",
    )
    readonly_fields = fields

    @admin.display(description="poliçe no", ordering="policy__policy_no")
    def policy_no(self, obj: PolicyDocument) -> str:
        return obj.policy.policy_no

    @admin.display(description="dosya (depodaki adı)")
    def stored_name(self, obj: PolicyDocument) -> str:
        # The name only, never the FileField's link: no URL may lead to the file around the views.
        return obj.file.name or "—"

    @admin.display(description="şirket")
    def insurer(self, obj: PolicyDocument) -> str:
        return obj.policy.insurer.code
