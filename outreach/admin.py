"""Consent history and sent messages for platform staff: read-only, as evidence must be.
Consent texts and agencies' contact details are edited here."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from outreach.models import AgencyContact, ChannelConsent, ConsentText, OutboundMessage


class ReadOnlyAdmin(admin.ModelAdmin):
    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ChannelConsent)
class ChannelConsentAdmin(ReadOnlyAdmin):
    list_display = ["recorded_at", "customer", "agency", "channel", "given", "text", "method", "recorded_by"]
    list_filter = ["channel", "given", "method", "agency"]
    search_fields = ["customer__name"]
    list_select_related = ["customer", "agency", "text", "recorded_by"]


@admin.register(OutboundMessage)
class OutboundMessageAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "kind", "channel", "recipient", "status", "provider", "provider_code", "agency"]
    list_filter = ["kind", "channel", "status", "provider", "agency"]
    search_fields = ["public_id", "provider_message_id"]
    list_select_related = ["agency"]


@admin.register(ConsentText)
class ConsentTextAdmin(admin.ModelAdmin):
    """A new wording is a new version: published texts stay as they were agreed to."""

    list_display = ["channel", "version", "published_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["channel", "version", "text", "published_at"] if obj is not None else []

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AgencyContact)
class AgencyContactAdmin(admin.ModelAdmin):
    list_display = ["agency", "phone", "email"]
    search_fields = ["agency__name", "agency__code"]
