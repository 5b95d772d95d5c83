from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from agencies.auth import ANY, login_lock_lift
from agencies.models import Agency, AgentProfile, ApiToken, LoginFailure, LoginLockout, SubAgency
from agencies.services import agent_role_problems

# DRF registers its tokens as "İşaret" under an app of their own; they are listed here instead,
# beside the logins they belong to, under their Turkish name.
admin.site.unregister(TokenProxy)


@admin.register(ApiToken)
class ApiTokenAdmin(TokenAdmin):
    pass


class LockedNowFilter(admin.SimpleListFilter):
    title = "durum"
    parameter_name = "kilit"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("var", "Şu an kilitli")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "var":
            return queryset.filter(locked_until__gt=timezone.now())
        return queryset


@admin.register(Agency)
class AgencyAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "is_active"]
    search_fields = ["code", "name"]


@admin.register(SubAgency)
class SubAgencyAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "agency", "is_active", "created_at"]
    list_filter = ["agency", "is_active"]
    search_fields = ["code", "name", "agency__code"]


class AgentProfileForm(forms.ModelForm):
    """The rule the desk keeps (`agencies.services.agent_role_problems`), kept here too: a
    sub-agency user is no agency admin, and their sub-agency is their agency's."""

    class Meta:
        model = AgentProfile
        fields = ["user", "agency", "sub_agency", "is_agency_admin"]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data  # what ModelForm.clean returns
        problems = agent_role_problems(
            agency=cleaned.get("agency"),
            sub_agency=cleaned.get("sub_agency"),
            is_agency_admin=bool(cleaned.get("is_agency_admin")),
        )
        for field, message in problems.items():
            self.add_error(field, message)
        return cleaned


@admin.register(AgentProfile)
class AgentProfileAdmin(admin.ModelAdmin):
    form = AgentProfileForm
    list_display = ["user", "agency", "sub_agency", "is_agency_admin"]
    list_filter = ["agency", "sub_agency", "is_agency_admin"]
    list_select_related = ["user", "agency", "sub_agency"]


@admin.register(LoginFailure)
class LoginFailureAdmin(admin.ModelAdmin):
    """Failed-login counters; "Kilidi kaldır" lifts a lock-out (issue 21: an admin can let an agent in)."""

    list_display = ["username", "ip_address", "failures", "window_started_at", "locked_until", "is_locked"]
    list_filter = [LockedNowFilter]
    search_fields = ["username", "ip_address"]
    readonly_fields = ["username", "ip_address", "failures", "window_started_at", "locked_until"]
    actions = ["lift_locks"]

    @admin.display(boolean=True, description="kilitli")
    def is_locked(self, row: LoginFailure) -> bool:
        return row.locked_until is not None and row.locked_until > timezone.now()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # counters are the login's to write

    def has_change_permission(self, request: HttpRequest, obj: LoginFailure | None = None) -> bool:
        return False

    @admin.action(description="Kilidi kaldır (seçilen kullanıcı adları ve adresler)", permissions=["delete"])
    def lift_locks(self, request: HttpRequest, queryset: QuerySet[LoginFailure]) -> None:
        keys = set(queryset.values_list("username", "ip_address"))
        # A username's row lifts that username from every address; an address's row, that address.
        dropped = login_lock_lift(
            usernames={username for username, _ in keys if username != ANY},
            ip_addresses={address for username, address in keys if username == ANY},
            lifted_by=request.user.get_username(),
        )
        self.message_user(request, f"Kilit kaldırıldı: {dropped} sayaç sıfırlandı.", messages.SUCCESS)


@admin.register(LoginLockout)
class LoginLockoutAdmin(admin.ModelAdmin):
    """Every lock-out that started, and who lifted it by hand: read-only history."""

    list_display = ["locked_at", "scope", "username", "ip_address", "locked_until", "lifted_at", "lifted_by"]
    list_filter = ["scope"]
    search_fields = ["username", "ip_address"]
    date_hierarchy = "locked_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: LoginLockout | None = None) -> bool:
        return False
