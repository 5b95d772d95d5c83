"""Admin for issuances: durable work records, read-only, replayed by action after a fix.

The replay actions are the dead-letter admin's (`work.admin.DeadLetterAdmin`), shared with sync
items and policy documents; the model and its admin live here, in `quotes`.
"""

from __future__ import annotations

import json
from typing import ClassVar

from django.contrib import admin
from django.utils.html import format_html

from quotes.models import Issuance
from work.admin import WORK_ERROR_FIELDS, DeadLetterAdmin


@admin.register(Issuance)
class IssuanceAdmin(DeadLetterAdmin):
    list_display = [
        "reference",
        "agency",
        "state",
        "attempts",
        "error_kind",
        "provider_code",
        "policy_no",
        "created_at",
    ]
    list_filter = ["state", "error_kind", "error_class", "agency"]
    search_fields = ["reference", "policy_no", "provider_code"]
    # Typed as the names it is, so the one tuple is both fields and readonly_fields.
    fields: ClassVar[tuple[str, ...]] = (
        "reference",
        "insurer_quote",
        "quote_request",
        "agency",
        "requested_by",
        "state",
        "attempts",
        "throttled_attempts",
        "reclaims",
        "in_play_since",
        "maybe_sent",
        "last_sent_at",
        "reference_refused",
        "next_attempt_at",
        "lease_expires_at",
        *WORK_ERROR_FIELDS,
        "policy_no",
        "created_at",
        "updated_at",
        "finished_at",
    )
    readonly_fields = fields

    @admin.display(description="gönderilen")
    def payload_pretty(self, obj: Issuance) -> str:
        # The payment token is a secret: kept encrypted for a replay, never shown, not even
        # as ciphertext (a row from before encryption shows its last four characters only).
        payload = {**obj.payload}
        if payload.get("payment_token"):
            payload["payment_token"] = "•••" + str(payload["payment_token"])[-4:]
        if payload.get("payment_token_encrypted"):
            payload["payment_token_encrypted"] = "••• (şifreli)"  # noqa: S105 - a placeholder
        return format_html("<pre>{}</pre>", json.dumps(payload, ensure_ascii=False, indent=2))
