from django.contrib import admin

from policies.models import Cancellation
from sync.admin import DeadLetterAdmin


@admin.register(Cancellation)
class CancellationAdmin(DeadLetterAdmin):
    """Cancellations, read-only, with the one replay path: always the same reference again."""

    list_display = ["reference", "policy", "agency", "reason", "state", "attempts", "provider_code", "refund"]
    list_filter = ["state", "reason", "error_kind", "agency"]
    search_fields = ["reference", "policy__policy_no", "provider_code"]
    list_select_related = ["policy", "agency"]
    fields = [
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
        "payload_pretty",
        "error_class",
        "error_kind",
        "provider_code",
        "error_message",
        "raw_answer_pretty",
        "created_at",
        "updated_at",
        "finished_at",
    ]
    readonly_fields = fields
