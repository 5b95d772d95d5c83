"""Admin for sync runs and dead letters: everything read-only, replay by action after a fix."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils.html import format_html
from django_q import admin as django_q_admin
from django_q.models import Failure, Schedule, Success

from sync.models import SyncItem, SyncRun
from work.item import DEAD_STATES, OPEN_STATES, WorkState

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations
from sync.services import (
    sync_run_enqueue,
    sync_run_start,
)
from work.admin import WORK_ERROR_FIELDS, DeadLetterAdmin


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
