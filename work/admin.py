"""The admin every kind of durable record shares: read-only rows, replay by action after a fix.

Each app's admin for its records (issuances, sync items, documents, cancellations, production
checks) extends `DeadLetterAdmin`, so replay behaves the same everywhere and goes through the one
replay path (`work.replay`).
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from work.item import DEAD_STATES
from work.replay import DeadLetterReplay, dead_letters_replay_outcome

# What every durable record's admin shows of its payload and its last error (WorkItem's fields and
# DeadLetterAdmin's readable views of them), in the same order for every kind of record.
WORK_ERROR_FIELDS = [
    "payload_pretty",
    "error_class",
    "error_kind",
    "provider_code",
    "error_message",
    "raw_answer_pretty",
]


class DeadLetterAdmin(admin.ModelAdmin):
    """Read-only durable work records, with replay actions for the FAILED and DEFERRED ones."""

    actions = ["replay_selected", "replay_same_kind"]
    list_filter = ["state", "error_kind", "error_class"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # dead letters are kept: they are what a replay sends

    def has_replay_permission(self, request: HttpRequest) -> bool:
        opts = self.model._meta
        return request.user.has_perm(f"{opts.app_label}.change_{opts.model_name}")

    @admin.action(description="Seçilenleri yeniden dene", permissions=["replay"])
    def replay_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        ids = list(queryset.values_list("pk", flat=True))
        self._replay(request, ids, dead_letters_replay_outcome(ids=ids, model=self.model))

    @admin.action(description="Seçilenlerle aynı hata türündeki tüm kayıtları yeniden dene", permissions=["replay"])
    def replay_same_kind(self, request: HttpRequest, queryset: QuerySet) -> None:
        kinds = set(queryset.filter(state__in=DEAD_STATES).values_list("error_kind", flat=True))
        ids = list(self.model.objects.filter(state__in=DEAD_STATES, error_kind__in=kinds).values_list("pk", flat=True))
        outcome = dead_letters_replay_outcome(ids=ids, model=self.model) if ids else DeadLetterReplay([], {})
        self._replay(request, ids, outcome)

    def _replay(self, request: HttpRequest, ids: list[int], outcome: DeadLetterReplay) -> None:
        self.message_user(request, f"{len(outcome.replayed)} kayıt en eskiden başlayarak yeniden kuyruğa alındı.")
        name = self.model._meta.verbose_name
        records = self.model.objects.in_bulk(list(outcome.held))
        for pk, reason in outcome.held.items():
            # Said plainly, per record: "skipped, not failed" would be wrong (it is failed, and stays so).
            reference = getattr(records.get(pk), "reference", "")
            self.message_user(
                request,
                f"Yeniden denenmedi, olduğu gibi bırakıldı: {name} #{pk}{f' ({reference})' if reference else ''}. "
                f"{reason}",
                level=messages.WARNING,
            )
        skipped = len(set(ids) - set(outcome.replayed) - set(outcome.held))
        if skipped:
            self.message_user(
                request,
                f"{skipped} kayıt başarısız ya da ertelenmiş olmadığı için atlandı.",
                level=messages.WARNING,
            )

    @admin.display(description="gönderilen")
    def payload_pretty(self, obj: Any) -> str:
        return format_html("<pre>{}</pre>", json.dumps(obj.payload, ensure_ascii=False, indent=2))

    @admin.display(description="şirketin yanıtı (ham)")
    def raw_answer_pretty(self, obj: Any) -> str:
        return format_html('<pre class="raw-answer">{}</pre>', obj.raw_answer or "—")
