"""The agency manager's forms for a new agent and a new sub-agency: they only collect;
`agencies.services` decides."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms

from agencies.models import SubAgency


def _sub_agency_choices(form: forms.Form, sub_agencies: Iterable[SubAgency]) -> None:
    """The active sub-agencies offered in the form's `sub_agency_id`, after the agency's own staff."""
    field = form.fields["sub_agency_id"]
    assert isinstance(field, forms.TypedChoiceField)  # declared as one on the form
    field.choices = [("", "Acentenin kendisi")] + [
        (sub_agency.pk, sub_agency.name) for sub_agency in sub_agencies if sub_agency.is_active
    ]


class AgentCreateForm(forms.Form):
    username = forms.CharField(label="Kullanıcı adı", max_length=150, required=False)
    first_name = forms.CharField(label="Ad", max_length=150, required=False)
    last_name = forms.CharField(label="Soyad", max_length=150, required=False)
    password = forms.CharField(
        label="Parola", required=False, strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    # Blank: the agency's own staff. The service checks the choice is one of the agency's active
    # sub-agencies; the choices offered are only what the page lists.
    sub_agency_id = forms.TypedChoiceField(
        label="Tali acente", required=False, coerce=int, empty_value=None, choices=[("", "Acentenin kendisi")]
    )

    def __init__(self, *args: Any, sub_agencies: Iterable[SubAgency] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _sub_agency_choices(self, sub_agencies)


class AgentMoveForm(forms.Form):
    """One agent's sub-agency, chosen on their row (blank: the agency's own staff)."""

    sub_agency_id = forms.TypedChoiceField(label="Tali acente", required=False, coerce=int, empty_value=None)

    def __init__(self, *args: Any, sub_agencies: Iterable[SubAgency] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _sub_agency_choices(self, sub_agencies)


class SubAgencyCreateForm(forms.Form):
    code = forms.CharField(label="Tali acente kodu", max_length=32, required=False)
    name = forms.CharField(label="Tali acente adı", max_length=200, required=False)
