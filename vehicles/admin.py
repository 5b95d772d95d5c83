"""The kasko value list in the platform admin: editions are uploaded, then only read.

"Add" on the editions' list is the upload form: a month and TSB's file, imported by the same
service as the `import_kasko_values` command. An edition's rows are never edited by hand: a
correction is a new upload of that month with "replace", so a row always says what TSB said.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from insurehub.money import turkish_amount
from vehicles.models import KaskoValue, KaskoValueList
from vehicles.services import ValueListInvalid, kasko_value_list_import, month_parse

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

# TSB's sheet is a few megabytes; anything much larger is not the list.
MAX_UPLOAD_BYTES = 20 * 1024 * 1024


class KaskoValueListUploadForm(forms.Form):
    month = forms.CharField(
        label="Geçerli olduğu ay", max_length=7, help_text="YYYY-AA, ör. 2026-12: listenin yayımlandığı ay."
    )
    file = forms.FileField(
        label="Liste dosyası",
        help_text="TSB kasko değer listesi: .xlsx ya da CSV (UTF-8 veya Windows-1254). Sütunlar: MARKA KODU, "
        "TİP KODU, MARKA ADI, TİP ADI ve her model yılı için bir sütun.",
    )
    replace = forms.BooleanField(label="Bu ayın listesi yüklüyse yerine koy", required=False)

    def clean_month(self) -> Any:
        try:
            return month_parse(self.cleaned_data["month"])
        except ValueListInvalid as error:
            raise forms.ValidationError(error.field_errors["month"]) from None

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError("Dosya çok büyük (en çok 20 MB).")
        return upload


class _ValueCount(TypedDict):
    value_count: int  # what KaskoValueListAdmin.get_queryset annotates


@admin.register(KaskoValueList)
class KaskoValueListAdmin(admin.ModelAdmin):
    list_display = ["label", "month", "source_name", "value_count", "imported_at", "importer"]
    # Typed as the names it is, so the one tuple is both fields and readonly_fields.
    fields: ClassVar[tuple[str, ...]] = (
        "month",
        "source_name",
        "imported_at",
        "importer",
        "value_count",
        "values_link",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[KaskoValueList]:
        return super().get_queryset(request).select_related("imported_by").annotate(value_count=Count("values"))

    @admin.display(description="liste", ordering="month")
    def label(self, edition: KaskoValueList) -> str:
        return edition.label

    @admin.display(description="değer sayısı", ordering="value_count")
    def value_count(self, edition: WithAnnotations[KaskoValueList, _ValueCount]) -> int:
        return edition.value_count

    @admin.display(description="yükleyen")
    def importer(self, edition: KaskoValueList) -> str:
        return edition.imported_by.get_username() if edition.imported_by else "komut satırı"

    @admin.display(description="değerler")
    def values_link(self, edition: KaskoValueList) -> str:
        url = reverse("admin:vehicles_kaskovalue_changelist")
        return format_html('<a href="{}?edition__id__exact={}">Listenin değerleri</a>', url, edition.pk)

    def has_change_permission(self, request: HttpRequest, obj: KaskoValueList | None = None) -> bool:
        return False

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: dict | None = None) -> HttpResponse:
        """The upload: the month and the file, through `kasko_value_list_import`; its errors
        (a bad row, a month already loaded) shown on the field they are about."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = KaskoValueListUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            assert isinstance(request.user, User)  # the admin site lets in active staff users only
            upload = form.cleaned_data["file"]
            try:
                edition = kasko_value_list_import(
                    month=form.cleaned_data["month"],
                    source_name=upload.name,
                    content=upload.read(),
                    imported_by=request.user,
                    replace=form.cleaned_data["replace"],
                )
            except ValueListInvalid as error:
                for field, problems in error.field_errors.items():
                    form.add_error(field if field in form.fields else None, problems)
            else:
                self.log_addition(request, edition, [{"added": {}}])
                count = edition.values.count()
                self.message_user(request, f"{edition.label} listesi yüklendi: {count} değer.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:vehicles_kaskovaluelist_change", args=[edition.pk]))
        opts = self.model._meta
        context = {
            **self.admin_site.each_context(request),
            "title": "Kasko değer listesi yükle",
            "opts": opts,
            "form": form,
            # The stubs ask for a ModelForm; both read only the form's fields and errors (this one has no model).
            "adminform": helpers.AdminForm(form, [(None, {"fields": list(form.fields)})], {}),  # type: ignore[arg-type]
            "errors": helpers.AdminErrorList(form, []),  # type: ignore[arg-type]
            "has_view_permission": self.has_view_permission(request),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/vehicles/kaskovaluelist/upload.html", context)


@admin.register(KaskoValue)
class KaskoValueAdmin(admin.ModelAdmin):
    list_display = ["brand_code", "brand_name", "type_code", "type_name", "model_year", "value_text", "edition"]
    list_filter = ["edition", "model_year"]
    search_fields = ["brand_name", "type_name", "=brand_code", "=type_code"]
    list_select_related = ["edition"]
    list_per_page = 100

    @admin.display(description="kasko bedeli", ordering="value")
    def value_text(self, value: KaskoValue) -> str:
        return f"{turkish_amount(value.value)} TL"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: KaskoValue | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: KaskoValue | None = None) -> bool:
        return False
