"""What an admin account can reach: insurer addresses and django-q callables."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_q.models import Failure, Schedule

from integrations.audit import SYSTEM_ACTOR
from integrations.models import AdminChange, Insurer

pytestmark = pytest.mark.django_db


def insurer_form(insurer: Insurer, **changes: Any) -> dict[str, Any]:
    data = {
        "code": insurer.code,
        "name": insurer.name,
        "base_url": insurer.base_url,
        "is_active": "on" if insurer.is_active else "",
        "products": list(insurer.products),
        "_save": "Kaydet",
        **changes,
    }
    return {key: value for key, value in data.items() if value != ""}


def staff_with(*codenames: str) -> Client:
    user = get_user_model().objects.create_user("operator", password="operator-pass-123", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


# --- Insurer.base_url ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "allow_http", "ok"),
    [
        ("https://api.anka.example/v1", False, True),
        ("http://api.anka.example/v1", False, False),
        ("http://127.0.0.1:8001", False, False),
        ("http://127.0.0.1:8001", True, True),
        ("http://localhost:8001", True, True),
        ("http://[::1]:8001", True, True),
        # The switch is for a sandbox on this machine, never for someone else's server.
        ("http://collector.example", True, False),
        ("http://10.0.0.5:8001", True, False),
        ("https://user:pass@api.anka.example", False, False),
        ("ftp://api.anka.example", True, False),
    ],
)
def test_insurer_address_must_be_https_outside_a_local_sandbox(settings, url, allow_http, ok):
    """https always; plain http only to loopback, and only under DEBUG or INSURER_ALLOW_HTTP."""
    settings.DEBUG, settings.INSURER_ALLOW_HTTP = False, allow_http
    insurer = Insurer(code="x", name="X", base_url=url)
    if ok:
        insurer.full_clean()
    else:
        with pytest.raises(ValidationError) as caught:
            insurer.full_clean()
        assert list(caught.value.message_dict) == ["base_url"]


def test_debug_allows_a_loopback_sandbox(settings):
    """The demo (DEBUG) talks to its sandbox over plain http on this machine."""
    settings.DEBUG, settings.INSURER_ALLOW_HTTP = True, False
    Insurer(code="x", name="X", base_url="http://127.0.0.1:8001").full_clean()


def test_editing_other_fields_does_not_check_the_address(settings):
    """A list-view toggle (base_url not edited) is never refused for an address set earlier."""
    settings.DEBUG, settings.INSURER_ALLOW_HTTP = False, False
    Insurer(code="x", name="X", base_url="http://127.0.0.1:8001").full_clean(exclude=["base_url"])


def test_admin_refuses_a_plain_http_address_and_keeps_the_old_one(settings, admin_client, seeded_accounts):
    """An admin pointing an insurer at their own http server gets a Turkish error; nothing changes."""
    settings.INSURER_ALLOW_HTTP = False
    anka = Insurer.objects.get(code="anka")
    before = anka.base_url
    url = reverse("admin:integrations_insurer_change", args=[anka.pk])
    response = admin_client.post(url, insurer_form(anka, base_url="http://collector.example/anka"))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["base_url"] == ["Servis adresi https ile başlamalıdır."]
    assert Insurer.objects.get(pk=anka.pk).base_url == before


def test_address_changes_are_audited_from_and_to(admin_client, admin_user, seeded_accounts):
    """A changed base_url is an audit entry naming who changed it, from what, to what."""
    anka = Insurer.objects.get(code="anka")
    before = anka.base_url
    url = reverse("admin:integrations_insurer_change", args=[anka.pk])
    response = admin_client.post(url, insurer_form(anka, base_url="https://api.anka.example/v2"))
    assert response.status_code == 302
    entry = AdminChange.objects.exclude(username=SYSTEM_ACTOR).get(model_name="insurer", object_id=str(anka.pk))
    assert entry.username == admin_user.username
    assert {"field": "base_url", "label": "servis adresi", "from": before, "to": "https://api.anka.example/v2"} in (
        entry.changes
    )


def test_health_dashboard_shows_every_insurers_address_host(admin_client, seeded_accounts):
    """Each insurer's scheme and host are on the dashboard, so a changed address is seen."""
    Insurer.objects.filter(code="anka").update(base_url="https://svc:secret@api.anka.example/v1/quotes")
    html = admin_client.get(reverse("integrations_health")).content.decode()
    for insurer in Insurer.objects.exclude(code="anka"):
        host = insurer.base_url.split("/")[2]
        assert f"<code>http://{host}</code>" in html or f"<code>https://{host}</code>" in html, insurer.code
    assert "<code>https://api.anka.example</code>" in html
    assert "secret" not in html and "/v1/quotes" not in html


# --- django-q ---------------------------------------------------------------------------------------

DJANGO_Q_PERMS = [
    f"{action}_{model}"
    for action in ("view", "add", "change", "delete")
    for model in ("schedule", "failure", "success")
]


def test_schedules_are_superuser_only_to_add_change_or_delete(admin_client):
    """A staff member with every django-q permission still cannot make the workers run a callable."""
    schedule = Schedule.objects.create(name="s", func="sync.tasks.sync_nightly")
    operator = staff_with(*DJANGO_Q_PERMS)
    add = reverse("admin:django_q_schedule_add")
    change = reverse("admin:django_q_schedule_change", args=[schedule.pk])
    delete = reverse("admin:django_q_schedule_delete", args=[schedule.pk])
    assert operator.get(add).status_code == 403
    assert operator.post(add, {"func": "os.system", "args": "'id'", "schedule_type": "O"}).status_code == 403
    assert operator.post(delete, {"post": "yes"}).status_code == 403
    page = operator.get(change)
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()  # read-only
    assert operator.post(change, {"func": "os.system", "schedule_type": "O"}).status_code == 403
    assert Schedule.objects.get(pk=schedule.pk).func == "sync.tasks.sync_nightly"
    assert admin_client.get(add).status_code == 200  # a superuser still may


def test_resubmitting_tasks_is_superuser_only(admin_client):
    """Re-sending a stored task runs its callable again: the action is offered to superusers only."""
    operator = staff_with(*DJANGO_Q_PERMS)
    url = reverse("admin:django_q_failure_changelist")
    Failure.objects.create(
        id="t1",
        name="t1",
        func="os.system",
        args=("id",),
        started=timezone.now(),
        stopped=timezone.now(),
        success=False,
    )
    assert "resubmit_task" not in operator.get(url).content.decode()
    for action in ("resubmit_task", "resubmit_tasks"):  # django-q's own name, and ours
        operator.post(url, {"action": action, "_selected_action": ["t1"]})
        assert Failure.objects.filter(pk="t1").exists()  # not resubmitted (that deletes it)
    assert "resubmit_tasks" in admin_client.get(url).content.decode()
