"""Admin for sync runs and dead letters: everything read-only, replay by action after a fix."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils.html import format_html
from django_q import admin as django_q_admin
from django_q.models import Failure, Schedule, Success

from integrations.work.item import WorkState
from sync.models import SyncItem, SyncRun

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations
from sync.services import (
    DEAD_STATES,
    OPEN_STATES,
    DeadLetterReplay,
    dead_letters_replay_outcome,
    sync_run_enqueue,
    sync_run_start,
)

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


@admin.register(SyncItem)
class SyncItemAdmin(DeadLetterAdmin):
    list_display = [
        "id",
        "run",
        "policy_no",
        "insurer",
        "state",
        "attempts",
        "error_kind",
        "provider_code",
        "observed_status",
        "next_attempt_at",
        "updated_at",
    ]
    list_filter = ["state", "error_kind", "error_class", "policy__insurer", "run__trigger"]
    list_select_related = ["run"]
    search_fields = ["policy__policy_no", "provider_code"]
    # Typed as the names it is, so the one tuple is both fields and readonly_fields.
    fields: ClassVar[tuple[str, ...]] = (
        "run",
        "policy",
        "state",
        "attempts",
        "throttled_attempts",
        "reclaims",
        "in_play_since",
        "next_attempt_at",
        "lease_expires_at",
        *WORK_ERROR_FIELDS,
        "previous_status",
        "observed_status",
        "created_at",
        "updated_at",
        "finished_at",
    )
    readonly_fields = fields

    @admin.display(description="poliçe no")
    def policy_no(self, obj: SyncItem) -> str:
        return obj.payload.get("policy_no", "")

    @admin.display(description="şirket")
    def insurer(self, obj: SyncItem) -> str:
        return obj.payload.get("insurer", "")


class _RunCounts(TypedDict):
    """What SyncRunAdmin.get_queryset annotates each run with."""

    n_total: int
    n_done: int
    n_open: int
    n_dead: int


@admin.register(SyncRun)
class SyncRunAdmin(admin.ModelAdmin):
    list_display = ["id", "trigger", "started_at", "finished_at", "total", "done", "open_items", "dead", "items_link"]
    list_filter = ["trigger"]
    readonly_fields = ["trigger", "started_at", "finished_at", "counts"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_total=Count("items"),
                n_done=Count("items", filter=Q(items__state=WorkState.SUBMITTED)),
                n_open=Count("items", filter=Q(items__state__in=OPEN_STATES)),
                n_dead=Count("items", filter=Q(items__state__in=DEAD_STATES)),
            )
        )

    @admin.display(description="poliçe", ordering="n_total")
    def total(self, obj: WithAnnotations[SyncRun, _RunCounts]) -> int:
        return obj.n_total

    @admin.display(description="tamam", ordering="n_done")
    def done(self, obj: WithAnnotations[SyncRun, _RunCounts]) -> int:
        return obj.n_done

    @admin.display(description="süren")
    def open_items(self, obj: WithAnnotations[SyncRun, _RunCounts]) -> int:
        return obj.n_open

    @admin.display(description="ölü (başarısız + ertelenen)", ordering="n_dead")
    def dead(self, obj: WithAnnotations[SyncRun, _RunCounts]) -> int:
        return obj.n_dead

    @admin.display(description="kayıtlar")
    def items_link(self, obj: SyncRun) -> str:
        url = reverse("admin:sync_syncitem_changelist") + f"?run__id__exact={obj.pk}"
        return format_html('<a href="{}">kayıtlar</a>', url)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_start_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("sync.add_syncrun")

    def get_urls(self) -> list:
        start = path("start/", self.admin_site.admin_view(self.start_view), name="sync_syncrun_start")
        return [start, *super().get_urls()]

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        extra_context = {**(extra_context or {}), "can_start_sync": self.has_start_permission(request)}
        return super().changelist_view(request, extra_context)

    def start_view(self, request: HttpRequest) -> HttpResponse:
        """Start a run now and hand it to the workers (a button above the run list)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_start_permission(request):
            raise PermissionDenied
        run = sync_run_start(trigger=SyncRun.Trigger.ADMIN)
        queued = sync_run_enqueue(run)
        self.message_user(request, f"Eşitleme #{run.pk} başladı: {queued} poliçe kuyruğa alındı.")
        return redirect("admin:sync_syncrun_changelist")


# --- django-q: only superusers may run arbitrary callables ---------------------------------------
# A Schedule names any importable function and its arguments, and the workers run it: whoever may
# add or change one can run code as the platform. Re-sending a stored task does the same. Both are
# for superusers only; everyone else with access may still look.


class SuperuserOnlyScheduleAdmin(django_q_admin.ScheduleAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser


@admin.action(description="Seçilen görevleri yeniden kuyruğa al", permissions=["resubmit"])
def resubmit_tasks(model_admin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    django_q_admin.resubmit_task(model_admin, request, queryset)


class _SuperuserResubmit:
    actions = [resubmit_tasks]

    def has_resubmit_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser


class SuperuserResubmitTaskAdmin(_SuperuserResubmit, django_q_admin.TaskAdmin):
    pass


class SuperuserResubmitFailAdmin(_SuperuserResubmit, django_q_admin.FailAdmin):
    pass


for _model, _model_admin in (
    (Schedule, SuperuserOnlyScheduleAdmin),
    (Success, SuperuserResubmitTaskAdmin),
    (Failure, SuperuserResubmitFailAdmin),
):
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)
    admin.site.register(_model, _model_admin)
