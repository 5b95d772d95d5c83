from django.contrib import admin

from agencies.models import Agency, AgentProfile


@admin.register(Agency)
class AgencyAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "is_active"]
    search_fields = ["code", "name"]


@admin.register(AgentProfile)
class AgentProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "agency", "is_agency_admin"]
    list_filter = ["agency", "is_agency_admin"]
