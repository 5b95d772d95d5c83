"""The cancellation form: it collects text; the rules live in the service."""

from __future__ import annotations

from django import forms

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
