"""Customers in the platform admin: for staff support, with identity numbers masked in the list."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from customers.erasure import customer_erase
from customers.models import Customer, CustomerErasure
from customers.selectors import customer_matching
from customers.services import CustomerInvalid
from insurehub.masking import mask_identity
from insurehub.request_types import AuthenticatedHttpRequest


class ErasureForm(forms.Form):
    request_note = forms.CharField(
        label="Başvuru bilgisi",
        max_length=300,
        help_text="Silme isteğinin nasıl geldiği: dilekçe tarihi ve numarası, e-posta tarihi. Kişisel bilgi yazmayın.",
        widget=forms.TextInput(attrs={"size": 80}),
    )


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
    # A full TCKN/VKN finds its customer (exactly), a part of one finds nothing: the list is not a
    # way to enumerate numbers. Names as on the desk (`get_search_results`).
    search_fields = ["name", "=identity_no"]
    list_select_related = ["agency"]
    readonly_fields = ["created_by", "created_at", "updated_at"]
    raw_id_fields = ["agency"]
    actions = ["erase_customers"]
    fieldsets = [
        (None, {"fields": ["agency", "name", "identity_no"]}),
        ("İletişim", {"fields": ["phone", "email", "address"]}),
        ("KVKK", {"fields": ["kvkk_consent_at", "kvkk_consent_channel"]}),
        ("Kayıt", {"fields": ["created_by", "created_at", "updated_at"]}),
    ]

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Customer], search_term: str
    ) -> tuple[QuerySet[Customer], bool]:
        """The desk's customer search, not Django's `icontains`: SQLite's LIKE folds ASCII only, so
        "AYŞE" would not find "Ayşe" and "ışık" not "IŞIK" (`customers.name_search`)."""
        return queryset.filter(customer_matching(search_term)), False

    @admin.display(description="TCKN / VKN", ordering="identity_no")
    def masked_identity(self, customer: Customer) -> str:
        return mask_identity(customer.identity_no)

    @admin.action(description="KVKK: müşterinin kişisel bilgilerini sil (poliçeler kalır)", permissions=["change"])
    def erase_customers(self, request: AuthenticatedHttpRequest, queryset: QuerySet[Customer]) -> HttpResponse | None:
        """A confirmation page asking how the request came in; then `customer_erase` for each."""
        form = ErasureForm(request.POST if "erase_confirmed" in request.POST else None)
        if form.is_bound and form.is_valid():
            erased = 0
            for customer in queryset:
                try:
                    customer_erase(
                        customer=customer, erased_by=request.user, request_note=form.cleaned_data["request_note"]
                    )
                    erased += 1
                except CustomerInvalid as invalid:
                    problems = "; ".join(text for texts in invalid.field_errors.values() for text in texts)
                    self.message_user(request, f"#{customer.pk}: {problems}", messages.ERROR)
            if erased:
                self.message_user(request, f"{erased} müşterinin kişisel bilgileri silindi.", messages.SUCCESS)
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "KVKK: kişisel bilgileri sil",
            "customers": queryset,
            "form": form,
            "opts": self.model._meta,
            "action_checkbox_name": ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/customers/customer/erase_confirm.html", context)


@admin.register(CustomerErasure)
class CustomerErasureAdmin(admin.ModelAdmin):
    """The erasures carried out: read-only, the audit of who erased whom and when."""

    list_display = ["erased_at", "customer", "agency", "erased_by", "request_note", "quote_requests_scrubbed"]
    list_filter = ["agency"]
    date_hierarchy = "erased_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: CustomerErasure | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: CustomerErasure | None = None) -> bool:
        return False
