"""Customers in the platform admin: for staff support, with identity numbers masked in the list."""

from __future__ import annotations

from django.contrib import admin

from customers.models import Customer
from integrations.masking import mask_identity


@admin.register(Customer)
class CustomerAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "masked_identity",
        "agency",
        "phone",
        "kvkk_consent_at",
        "kvkk_consent_channel",
        "created_at",
    ]
    list_filter = ["agency", "kvkk_consent_channel"]
    # A full TCKN/VKN finds its customer ("=": exact), a part of one finds nothing: the list is
    # not a way to enumerate numbers.
    search_fields = ["name", "=identity_no"]
    list_select_related = ["agency"]
    readonly_fields = ["created_by", "created_at", "updated_at"]
    raw_id_fields = ["agency"]
    fieldsets = [
        (None, {"fields": ["agency", "name", "identity_no"]}),
        ("İletişim", {"fields": ["phone", "email", "address"]}),
        ("KVKK", {"fields": ["kvkk_consent_at", "kvkk_consent_channel"]}),
        ("Kayıt", {"fields": ["created_by", "created_at", "updated_at"]}),
    ]

    @admin.display(description="TCKN / VKN", ordering="identity_no")
    def masked_identity(self, customer: Customer) -> str:
        return mask_identity(customer.identity_no)
