"""Consent per channel on the customer page: recorded against the channel's text, kept as
history, withdrawable, the latest event the customer's state; another agency's customer is not
found."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from outreach import selectors
from outreach.models import ChannelConsent, ConsentText

pytestmark = pytest.mark.django_db


def record(client: Client, customer, channel: str, action: str, method: str = "wet_signature"):
    return client.post(
        reverse("consent_record", args=[customer.pk]), {"channel": channel, "action": action, "method": method}
    )


def test_each_channel_has_a_first_text_seeded_by_the_migration():
    """Version 1 of the e-mail and the SMS text exist before anyone adds one."""
    texts = {(text.channel, text.version) for text in ConsentText.objects.all()}
    assert {("email", 1), ("sms", 1)} <= texts
    assert "6698" in ConsentText.objects.get(channel="sms", version=1).text


def test_consent_given_then_withdrawn_keeps_both_and_the_latest_counts(desk, agents, customer):
    """Giving and withdrawing SMS consent leaves two events; the customer's state is the latest."""
    response = record(desk, customer, "sms", "give", "phone")
    assert response.status_code == 302 and response["Location"].endswith("#iletisim-izinleri")
    assert selectors.consent_given(customer=customer, channel="sms")
    assert not selectors.consent_given(customer=customer, channel="email")
    record(desk, customer, "sms", "withdraw", "wet_signature")
    assert not selectors.consent_given(customer=customer, channel="sms")
    events = list(ChannelConsent.objects.filter(customer=customer).order_by("recorded_at", "pk"))
    assert [(e.channel, e.given, e.method) for e in events] == [("sms", True, "phone"), ("sms", False, "wet_signature")]
    assert all(e.recorded_by == agents["ACENTE1"] and e.text.version == 1 and e.text.channel == "sms" for e in events)


def test_the_customer_page_shows_state_form_and_history(desk, customer):
    record(desk, customer, "email", "give", "in_person")
    record(desk, customer, "email", "withdraw", "phone")
    record(desk, customer, "sms", "give", "wet_signature")
    page = desk.get(reverse("customer_detail", args=[customer.pk])).content.decode()
    assert 'id="iletisim-izinleri"' in page and "İzni kaydet" in page
    assert "İzin geri çekildi" in page and "İzin var" in page
    assert page.count("Islak imza") >= 2 and "Yüz yüze (acentede)" in page and "Geri çekti" in page


def test_bad_input_is_a_turkish_error_naming_the_field(desk, customer):
    response = record(desk, customer, "fax", "give")
    assert response.status_code == 302
    page = desk.get(response["Location"]).content.decode()
    assert "Kanal: listeden bir seçim yapın." in page and "fax" not in page
    assert not ChannelConsent.objects.exists()


def test_consent_needs_the_contact_it_is_for(desk, customer):
    """SMS consent for a customer without a phone is refused, in Turkish, naming the channel."""
    customer.phone = ""
    customer.save()
    page = desk.get(record(desk, customer, "sms", "give")["Location"]).content.decode()
    assert "telefonu kayıtlı değil" in page and not ChannelConsent.objects.exists()


def test_another_agencys_customer_is_not_found(other_desk, customer):
    """ACENTE2 posting consent for ACENTE1's customer: 404, like an unknown customer; nothing stored."""
    assert record(other_desk, customer, "sms", "give").status_code == 404
    assert other_desk.get(reverse("customer_detail", args=[customer.pk])).status_code == 404
    assert not ChannelConsent.objects.exists()


def test_admin_history_is_read_only(admin_client, desk, customer):
    record(desk, customer, "sms", "give")
    event = ChannelConsent.objects.get()
    assert admin_client.get(reverse("admin:outreach_channelconsent_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:outreach_channelconsent_add")).status_code == 403
    admin_client.post(reverse("admin:outreach_channelconsent_change", args=[event.pk]), {"given": ""})
    assert ChannelConsent.objects.get().given is True


def test_without_a_published_text_consent_is_refused_in_turkish(desk, customer):
    from outreach.models import ConsentText

    ConsentText.objects.filter(channel="sms").delete()
    page = desk.get(record(desk, customer, "sms", "give")["Location"]).content.decode()
    assert "Kanal: SMS için yayımlanmış izin metni yok." in page and not ChannelConsent.objects.exists()
