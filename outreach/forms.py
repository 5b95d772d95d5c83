"""The desk's two small forms: a consent event, and which channel the offer goes by."""

from __future__ import annotations

from django import forms

from outreach.models import Channel, ChannelConsent

ACTIONS = [("give", "İzin verdi"), ("withdraw", "İznini geri çekti")]
# The field's label leads the message (form_errors_text); the value typed is never repeated.
CHOICE_ERRORS = {"invalid_choice": "listeden bir seçim yapın.", "required": "bir seçim yapın."}


class ConsentForm(forms.Form):
    channel = forms.ChoiceField(label="Kanal", choices=Channel.choices, error_messages=CHOICE_ERRORS)
    action = forms.ChoiceField(label="İşlem", choices=ACTIONS, error_messages=CHOICE_ERRORS)
    method = forms.ChoiceField(
        label="Alınma şekli", choices=ChannelConsent.Method.choices, error_messages=CHOICE_ERRORS
    )


class OfferSendForm(forms.Form):
    channel = forms.ChoiceField(label="Kanal", choices=Channel.choices, error_messages=CHOICE_ERRORS)


def form_errors_text(form: forms.Form) -> str:
    """ "Kanal: Geçerli bir seçim yapın." — each error with its field's label, for a flash message."""
    parts: list[str] = []
    for name, errors in form.errors.items():
        label = form.fields[name].label if name in form.fields else ""
        parts.extend(f"{label}: {error}" if label else str(error) for error in errors)
    return " ".join(parts)
