"""The agency admin's form for a new agent: it only collects; `agencies.services.agent_create` decides."""

from django import forms


class AgentCreateForm(forms.Form):
    username = forms.CharField(label="Kullanıcı adı", max_length=150, required=False)
    first_name = forms.CharField(label="Ad", max_length=150, required=False)
    last_name = forms.CharField(label="Soyad", max_length=150, required=False)
    password = forms.CharField(
        label="Parola", required=False, strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
