"""The admin shows document records read-only, without a link to the file, and replays dead ones."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from documents import services
from documents.models import PolicyDocument
from policies.models import Policy

pytestmark = pytest.mark.django_db


def test_admin_lists_and_replays_a_failed_document(client, issue):
    policy = issue("anka")
    Policy.objects.filter(pk=policy.pk).update(policy_no="ANK-P-DOESNOTEXIST")
    policy.refresh_from_db()
    document = services.document_request(policy=policy)
    assert services.document_process(document.pk) == "FAILED"
    admin_user = get_user_model().objects.create_superuser("yonetici", password="test-pass-123")
    client.force_login(admin_user)
    assert client.get("/admin/documents/policydocument/").status_code == 200
    page = client.get(f"/admin/documents/policydocument/{document.pk}/change/")
    assert page.status_code == 200 and "/media/" not in page.content.decode()
    response = client.post(
        "/admin/documents/policydocument/",
        {"action": "replay_selected", "_selected_action": [document.pk]},
    )
    assert response.status_code == 302
    assert PolicyDocument.objects.get(pk=document.pk).state == "QUEUED"
