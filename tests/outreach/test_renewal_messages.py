"""The customer's renewal reminder: sent on each channel they consent to, once per reminder
however often the job runs, never on a channel without consent; the agents' reminder stands
whatever happens to the customer's message."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.urls import reverse

from outreach.models import OutboundMessage
from policies.models import RenewalReminder
from policies.periods import today
from policies.services.renewal_reminders import renewal_reminders_send
from tests.outreach.test_consent import record
from tests.policies.test_renewal_reminders import ending_in
from tests.quotes.policy_samples import issued_policy

pytestmark = pytest.mark.django_db


def run_job(capture, on=None) -> list[RenewalReminder]:
    with capture(execute=True):
        return renewal_reminders_send(on=on)


def customer_mails() -> list:
    return [m for m in mail.outbox if m.to == ["ayse.yilmaz@example.com"]]


def test_without_consent_the_customer_gets_nothing(agents, customer, netgsm, django_capture_on_commit_callbacks):
    ending_in(issued_policy(agents["ACENTE1"], "P-OUT-0", customer=customer), 30)
    (reminder,) = run_job(django_capture_on_commit_callbacks)
    assert reminder.days_before == 30
    assert not OutboundMessage.objects.exists() and not netgsm.state.received and not customer_mails()


def test_consented_channels_get_the_message_once_per_reminder(
    desk, agents, customer, netgsm, django_capture_on_commit_callbacks
):
    record(desk, customer, "sms", "give")
    record(desk, customer, "email", "give")
    ending_in(issued_policy(agents["ACENTE1"], "P-OUT-1", customer=customer), 30)
    run_job(django_capture_on_commit_callbacks)
    assert run_job(django_capture_on_commit_callbacks) == []  # the job again the same day
    assert run_job(django_capture_on_commit_callbacks, on=today() + timedelta(days=5)) == []

    (sms,) = netgsm.state.received
    assert sms.params["gsmno"] == "5321234567"
    assert "poliçeniz (34 ABC 123)" in sms.params["message"] and "0212 555 01 02" in sms.params["message"]
    (email,) = customer_mails()
    assert "Sayın Ayşe Yılmaz" in email.body and "iletisim@acente1.example" in email.body
    messages = OutboundMessage.objects.order_by("channel")
    assert [(m.kind, m.channel, m.status, m.sent_by) for m in messages] == [
        ("renewal", "email", "sent", None),
        ("renewal", "sms", "sent", None),
    ]
    # The next threshold is a new reminder, and a new message on each channel.
    run_job(django_capture_on_commit_callbacks, on=today() + timedelta(days=15))
    assert OutboundMessage.objects.count() == 4 and len(netgsm.state.received) == 2
    page = desk.get(reverse("customer_detail", args=[customer.pk])).content.decode()
    assert page.count("Yenileme hatırlatması") == 4 and "otomatik" in page


def test_a_withdrawn_channel_is_not_used(desk, agents, customer, netgsm, django_capture_on_commit_callbacks):
    record(desk, customer, "sms", "give")
    record(desk, customer, "email", "give")
    record(desk, customer, "sms", "withdraw")
    ending_in(issued_policy(agents["ACENTE1"], "P-OUT-2", customer=customer), 7)
    run_job(django_capture_on_commit_callbacks)
    assert not netgsm.state.received and len(customer_mails()) == 1
    assert list(OutboundMessage.objects.values_list("channel", flat=True)) == ["email"]


def test_a_provider_refusal_is_stored_and_the_reminder_stands(
    desk, agents, customer, netgsm, settings, django_capture_on_commit_callbacks
):
    settings.NETGSM_MSGHEADER = "TANIMSIZ"
    record(desk, customer, "sms", "give")
    ending_in(issued_policy(agents["ACENTE1"], "P-OUT-3", customer=customer), 15)
    (reminder,) = run_job(django_capture_on_commit_callbacks)
    message = OutboundMessage.objects.get()
    assert (message.status, message.provider_code, message.renewal_reminder) == ("failed", "40", reminder)
    assert "Gönderici adı" in message.error
    assert run_job(django_capture_on_commit_callbacks) == [] and OutboundMessage.objects.count() == 1


def test_the_renewals_list_says_what_the_customer_was_sent(
    desk, other_desk, agents, customer, netgsm, django_capture_on_commit_callbacks
):
    record(desk, customer, "sms", "give")
    ending_in(issued_policy(agents["ACENTE1"], "P-OUT-4", customer=customer), 15)
    run_job(django_capture_on_commit_callbacks)
    page = desk.get(reverse("renewal_list")).content.decode()
    assert "P-OUT-4" in page and '<span class="reminder-note">müşteriye SMS: gönderildi</span>' in page
    assert "müşteriye SMS" not in other_desk.get(reverse("renewal_list")).content.decode()
