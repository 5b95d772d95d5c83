"""Notifications: one per person per event, in the app and by e-mail, and nobody else's."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.urls import reverse

from agencies.models import Agency, AgentProfile
from notifications.models import Notification
from notifications.services import notify

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people():
    agency = Agency.objects.create(code="BILD1", name="Bildirim Acentesi")
    other_agency = Agency.objects.create(code="BILD2", name="Öteki Acente")
    users = {}
    for name, home in (("ayse", agency), ("mehmet", agency), ("zeynep", other_agency)):
        user = get_user_model().objects.create_user(name, email=f"{name}@acente.example", password="test-pass-123")
        AgentProfile.objects.create(user=user, agency=home)
        users[name] = user
    return agency, users


def test_an_event_notifies_each_person_once_in_the_app_and_by_mail(people):
    agency, users = people
    args = {"agency_id": agency.pk, "kind": Notification.Kind.ISSUANCE_DONE, "key": "issuance:1:SUBMITTED"}
    first = notify(recipients=[users["ayse"], users["ayse"]], title="Poliçe düzenlendi", link="/policeler/", **args)
    again = notify(recipients=[users["ayse"]], title="Poliçe düzenlendi", **args)
    assert len(first) == 1 and again == []
    assert [message.to for message in mail.outbox] == [["ayse@acente.example"]]
    assert mail.outbox[0].subject == "[InsureHub] Poliçe düzenlendi" and "/policeler/" in mail.outbox[0].body
    assert Notification.objects.get().emailed_at is not None


def test_a_title_shows_the_references_it_names_and_masks_the_rest(people):
    """`AK-P-3B0009-000094` holds a valid VKN across its dash: named as a reference it stays
    whole, while an identity number in the same title is still masked."""
    agency, users = people
    [notice] = notify(
        recipients=[users["ayse"]],
        agency_id=agency.pk,
        kind=Notification.Kind.ISSUANCE_DONE,
        key="issuance:2:SUBMITTED",
        title="Poliçe AK-P-3B0009-000094 düzenlendi (10000000146)",
        references=("AK-P-3B0009-000094",),
    )
    assert notice.title == "Poliçe AK-P-3B0009-000094 düzenlendi (100******46)"
    assert mail.outbox[0].subject == "[InsureHub] Poliçe AK-P-3B0009-000094 düzenlendi (100******46)"


def test_a_mail_server_that_fails_costs_the_mail_only(people, settings):
    agency, users = people
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 1  # nothing listens
    created = notify(
        recipients=[users["mehmet"]], agency_id=agency.pk, kind=Notification.Kind.POLICY_ENDED, key="p:1", title="İptal"
    )
    assert len(created) == 1 and Notification.objects.get().emailed_at is None


def test_the_list_shows_only_ones_own_and_opening_marks_read(people):
    agency, users = people
    mine = notify(
        recipients=[users["ayse"]],
        agency_id=agency.pk,
        kind=Notification.Kind.DOCUMENT_READY,
        key="d:1",
        title="Belge hazır",
        link="/policeler/",
    )[0]
    notify(recipients=[users["zeynep"]], agency_id=agency.pk, kind="document_ready", key="d:2", title="Zeynep'in")
    client = Client()
    client.force_login(users["ayse"])
    html = client.get(reverse("notification_list")).content.decode()
    assert "Belge hazır" in html and "Zeynep" not in html
    assert "(1)" in client.get(reverse("policy_list")).content.decode()  # the unread count in the nav
    theirs = Notification.objects.get(recipient=users["zeynep"])
    assert client.post(reverse("notification_open", args=[theirs.pk])).url == reverse("notification_list")
    assert Notification.objects.get(pk=theirs.pk).read_at is None
    response = client.post(reverse("notification_open", args=[mine.pk]))
    assert response.url == "/policeler/" and Notification.objects.get(pk=mine.pk).read_at is not None


def test_an_external_link_is_never_followed(people):
    agency, users = people
    n = notify(
        recipients=[users["ayse"]],
        agency_id=agency.pk,
        kind="document_ready",
        key="x",
        title="t",
        link="https://evil.example/",
    )[0]
    client = Client()
    client.force_login(users["ayse"])
    assert client.post(reverse("notification_open", args=[n.pk])).url == reverse("notification_list")
