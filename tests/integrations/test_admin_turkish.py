"""Every label the admin shows for the project's models is Turkish, and capitalises as Turkish.

Django writes a label's first letter with `capfirst`, which turns "i" into "I" (Turkish wants
"İ"): a label starting with a lowercase "i" or "ı" would show as "Işlem". Such labels are
written already capitalised, or worded otherwise.
"""

from __future__ import annotations

import re

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.admin.utils import flatten_fieldsets, label_for_field
from django.db import models
from django.utils.text import camel_case_to_spaces, capfirst

PROJECT_APPS = ("agencies", "integrations", "quotes", "sync", "customers", "documents", "notifications", "policies",
                "commissions", "vehicles")  # fmt: skip

# Words that give away an English label. Words that are Turkish as well ("not", "an", "ok",
# "no" as in "poliçe no") are left out on purpose.
ENGLISH_WORDS = frozenset(
    """
    account accounts action agency answer at attempt attempts bucket by call class code count
    counts created customer data date deadline denied details document error expires failures
    file finished first input insurer issuance issued key kind last latency lease maybe
    message minute name next observed owner payload plate policy premium previous product
    provider quote rate raw reason reference replay request requested retries retry run sample
    selected sent size started state status successes synced time tokens total trigger until
    updated user valid wait window
    """.split()
)

# Labels that may equal their field's name with spaces for underscores ("ID" is Django's own).
ALLOWED_AS_NAMED = frozenset({"id"})


def _project_models() -> list[type[models.Model]]:
    return [model for label in PROJECT_APPS for model in apps.get_app_config(label).get_models()]


def _problems(label: object, where: str) -> list[str]:
    text = str(label)
    problems = []
    if text.startswith(("i", "ı")):
        problems.append(f"{where}: {text!r} would show as {capfirst(text)!r}")
    english = sorted(set(re.findall(r"\w+", text.lower())) & ENGLISH_WORDS)
    if english:
        problems.append(f"{where}: {text!r} has English words {english}")
    return problems


def test_the_project_apps_have_models():
    """Guards the walk below: an app list gone wrong would make it pass on nothing."""
    names = {model.__name__ for model in _project_models()}
    assert {"Insurer", "Attempt", "SyncItem", "Agency", "Issuance", "Policy", "PolicyDocument"} <= names
    assert {"Customer", "Notification"} <= names


@pytest.mark.parametrize("model", _project_models(), ids=lambda model: model._meta.label)
def test_model_names_are_turkish(model):
    opts = model._meta
    assert "verbose_name" in opts.original_attrs, f"{opts.label} has Django's default name {opts.verbose_name!r}"
    assert "verbose_name_plural" in opts.original_attrs, f"{opts.label} has no plural name"
    assert str(opts.verbose_name) != camel_case_to_spaces(opts.object_name)
    problems = _problems(opts.verbose_name, opts.label) + _problems(opts.verbose_name_plural, opts.label)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("model", _project_models(), ids=lambda model: model._meta.label)
def test_field_labels_are_turkish(model):
    problems = []
    for field in [*model._meta.concrete_fields, *model._meta.local_many_to_many]:
        where = f"{model._meta.label}.{field.name}"
        label = str(field.verbose_name)
        if label == field.name.replace("_", " ") and field.name not in ALLOWED_AS_NAMED:
            problems.append(f"{where}: no Turkish label (Django's default {label!r})")
            continue
        problems += _problems(label, where)
        if field.help_text:
            problems += _problems(field.help_text, f"{where} help text")
    assert not problems, "\n".join(problems)


def _project_admins() -> list[admin.ModelAdmin]:
    return [model_admin for model, model_admin in admin.site._registry.items() if model._meta.app_label in PROJECT_APPS]


def test_admin_columns_fields_actions_and_fieldsets_are_turkish():
    """What the admin itself names: list columns, filters, form fields, actions and fieldset titles."""
    model_admins = _project_admins()
    assert len(model_admins) >= 10
    problems = []
    for model_admin in model_admins:
        model = model_admin.model
        where = type(model_admin).__name__
        names = [*model_admin.list_display, *(model_admin.readonly_fields or ())]
        names += [name for name in model_admin.list_filter if isinstance(name, str) and "__" not in name]
        if model_admin.fields:
            names += list(model_admin.fields)
        if model_admin.fieldsets:
            names += flatten_fieldsets(model_admin.fieldsets)
            for title, _options in model_admin.fieldsets:
                if title:
                    problems += _problems(title, f"{where} fieldset")
        for name in dict.fromkeys(names):
            if name == "action_checkbox":
                continue
            label = label_for_field(name, model, model_admin)
            problems += _problems(label, f"{where}.{name}")
        for action in model_admin.actions or ():
            function = getattr(model_admin, action) if isinstance(action, str) else action
            description = getattr(function, "short_description", None)
            assert description, f"{where}: action {action!r} has no description"
            problems += _problems(description, f"{where} action {action!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_the_operation_label_is_capitalised_as_turkish(admin_client):
    """The operation policy page shows "İşlem", never "Işlem"."""
    page = admin_client.get("/admin/integrations/operationpolicy/add/").content.decode()
    assert "İşlem" in page
    assert "Işlem" not in page


@pytest.mark.parametrize("model", _project_models(), ids=lambda model: model._meta.label)
def test_choice_labels_are_turkish_not_the_codes_they_stand_for(model):
    """An operation, an error's class or kind: the admin's columns and filters show the label."""
    problems = []
    for field in model._meta.concrete_fields:
        for value, label in field.flatchoices:
            where = f"{model._meta.label}.{field.name}={value!r}"
            if str(label) == str(value) and "_" in str(value):
                problems.append(f"{where}: shown as its code")
            problems += _problems(label, where)
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_the_admin_is_titled_and_lists_every_app_and_model_in_turkish(admin_client):
    """Its header and titles, the tokens ("İşaret" in DRF's catalogue) and django-q2's app."""
    page = admin_client.get("/admin/").content.decode()
    assert "InsureHub yönetim paneli" in page and "<title>Yönetim | InsureHub yönetimi</title>" in page
    assert "Django site yöneticisi" not in page and "Django yönetimi" not in page
    assert "API anahtarları" in page and "İşaret" not in page
    assert "Arka plan işleri" in page and "Django Q" not in page
    for model in admin.site._registry:
        for name in (model._meta.verbose_name_plural, model._meta.app_config.verbose_name):
            assert not re.search(r"\b(Django|Token|Tokens|İşaret|İşaretler)\b", str(name)), (model, name)


@pytest.mark.django_db
def test_operations_and_error_kinds_read_turkish_in_the_admin_lists(admin_client):
    """The operation a retry policy is for, and the error filters of a dead-letter list."""
    policies = admin_client.get("/admin/integrations/operationpolicy/add/").content.decode()
    assert ">Poliçeleştirme<" in policies and ">issue_policy<" not in policies
    issuances = admin_client.get("/admin/quotes/issuance/").content.decode()
    assert "Şirket reddetti" in issuances and "Kısıtlama (hız sınırı)" in issuances and "Kalıcı" in issuances


@pytest.mark.django_db
def test_the_admin_index_links_the_health_dashboard_for_those_who_may_read_it(admin_client, client):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.urls import reverse

    dashboard = reverse("integrations_health")
    assert f'href="{dashboard}"' in admin_client.get("/admin/").content.decode()
    staff = get_user_model().objects.create_user("destek", password="uzun-ve-zor-parola-42", is_staff=True)
    client.force_login(staff)
    assert dashboard not in client.get("/admin/").content.decode()
    staff.user_permissions.add(Permission.objects.get(codename="view_attempt"))
    assert f'href="{dashboard}"' in client.get("/admin/").content.decode()
