from django.contrib import admin
from django.http import HttpRequest

from notifications.models import Notification


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("created_at", "recipient", "agency", "kind", "title", "read_at", "emailed_at")
    list_filter = ("kind", "agency")
    search_fields = ("title", "recipient__username")
    readonly_fields = [f.name for f in Notification._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
