from django.contrib import admin

from agencies.models import Agency, AgentProfile


@admin.register(Agency)
class AgencyAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "is_active"]
    search_fields = ["code", "name"]


@admin.register(AgentProfile)
class AgentProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "agency"]
    list_filter = ["agency"]
