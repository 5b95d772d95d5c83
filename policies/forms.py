"""The cancellation form: it collects text; the rules live in the service."""

from __future__ import annotations

from django import forms
from django.core.files.uploadedfile import UploadedFile

from policies.models import REASON_CHOICES


class CancellationForm(forms.Form):
    reason = forms.ChoiceField(
        label="İptal nedeni",
        required=False,
        choices=[("", "Seçiniz"), *REASON_CHOICES],
        error_messages={"invalid_choice": "Bir iptal nedeni seçin."},
    )
    effective_on = forms.CharField(
        label="İptal tarihi",
        required=False,
        max_length=10,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Mükerrer poliçe iptali her zaman poliçe başlangıcından geçerlidir (primin tamamı iade edilir).",
    )


class PortfolioUploadForm(forms.Form):
    file = forms.FileField(
        label="Portföy dosyası",
        required=False,
        help_text=(
            "CSV (UTF-8 ya da Excel'in Windows-1254'ü, virgül ya da noktalı virgül) veya Excel (.xlsx). "
            "İlk satır sütun adları: insurer, policy_no, product, plate, owner_id, status; "
            "isteğe bağlı starts_on, ends_on (ve agency_code: yalnızca kendi acentenizin kodu)."
        ),
    )

    def clean_file(self) -> UploadedFile:
        upload = self.cleaned_data.get("file")
        if upload is None:
            raise forms.ValidationError("Bir dosya seçin.")
        return upload
