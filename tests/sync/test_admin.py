"""Admin: runs and dead letters are shown read-only; replay and "sync now" work from there."""

from __future__ import annotations

import pytest
from django.urls import reverse

from sync import services as svc
from sync.models import SyncItem, SyncRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def failed_item(make_policies, sandbox, quick_status_policy) -> SyncItem:
    policy = make_policies("anka", ["ANKA-P-404"], at_insurer=None)[0]
    svc.sync_run_start(trigger="command")
    item = SyncItem.objects.get(policy=policy)
    assert svc.sync_item_process(item.pk) == "FAILED"
    return item


def test_dead_letter_pages_show_payload_and_raw_answer(admin_client, failed_item):
    """The list filters by state and kind; a record shows what was sent and what the insurer said."""
    changelist = admin_client.get(
        reverse("admin:sync_syncitem_changelist") + "?state__exact=FAILED&error_kind=not_found"
    )
    assert changelist.status_code == 200 and b"ANKA-P-404" in changelist.content
    page = admin_client.get(reverse("admin:sync_syncitem_change", args=[failed_item.pk]))
    assert page.status_code == 200
    assert b"&quot;policy_no&quot;: &quot;ANKA-P-404&quot;" in page.content and b"NOT_FOUND" in page.content
    assert admin_client.get(reverse("admin:sync_syncrun_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:quotes_issuance_changelist")).status_code == 200


def test_replay_action_requeues_the_selection(admin_client, failed_item, django_capture_on_commit_callbacks):
    """ "Seçilenleri yeniden dene (replay)" sends the selected dead letters back to the queue."""
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:sync_syncitem_changelist"),
            {"action": "replay_selected", "_selected_action": [failed_item.pk]},
            follow=True,
        )
    assert "1 kayıt en eskiden başlayarak yeniden kuyruğa alındı." in response.content.decode()
    assert SyncItem.objects.get(pk=failed_item.pk).state == "QUEUED"


def test_sync_now_button_starts_a_run_for_the_workers(
    admin_client, make_policies, sent_tasks, django_capture_on_commit_callbacks
):
    """The button above the run list starts an admin run and hands it to a drain; GET does nothing."""
    make_policies("cinar", ["CNR-P-1"])
    url = reverse("admin:sync_syncrun_start")
    assert b"\xc5\x9eimdi e\xc5\x9fitle" in admin_client.get(reverse("admin:sync_syncrun_changelist")).content
    assert admin_client.get(url).status_code == 405
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url)
    run = SyncRun.objects.get()
    assert run.trigger == "admin" and sent_tasks == [("sync.tasks.sync_drain", None)]
    assert run.items.get().state == "QUEUED"
