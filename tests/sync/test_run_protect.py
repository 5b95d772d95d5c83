"""A sync run keeps its items: deleting it would take the dead letters a replay sends."""

from __future__ import annotations

import pytest
from django.db.models import ProtectedError
from django.urls import reverse

from sync.models import SyncRun
from sync.services import sync_run_start

pytestmark = pytest.mark.django_db


def test_a_run_with_items_cannot_be_deleted_and_the_admin_says_why(admin_client, make_policies):
    """Refused in the model (PROTECT) and in the admin, which lists what protects it."""
    make_policies("anka", ["AK-P-1", "AK-P-2"])
    run = sync_run_start(trigger=SyncRun.Trigger.COMMAND)
    assert run.items.count() == 2
    with pytest.raises(ProtectedError):
        run.delete()
    url = reverse("admin:sync_syncrun_delete", args=[run.pk])
    page = admin_client.get(url)
    assert page.status_code == 200 and page.context["protected"]
    admin_client.post(url, {"post": "yes"})
    assert SyncRun.objects.filter(pk=run.pk).exists() and run.items.count() == 2


def test_an_empty_run_can_still_be_deleted(admin_client, seeded_accounts):
    """PROTECT guards items, not runs: a run that found nothing goes as before."""
    run = SyncRun.objects.create(trigger=SyncRun.Trigger.COMMAND)
    assert admin_client.post(reverse("admin:sync_syncrun_delete", args=[run.pk]), {"post": "yes"}).status_code == 302
    assert not SyncRun.objects.filter(pk=run.pk).exists()
