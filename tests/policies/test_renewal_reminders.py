"""Renewal reminders: 30, 15 and 7 days before a policy ends, once each, to whoever is responsible."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.urls import reverse

from agencies.models import Agency, AgentProfile
from notifications.models import Notification
from policies.models import Policy, RenewalReminder
from policies.periods import today
from policies.services.renewal_reminders import renewal_reminders_send, tightest_threshold
from tests.quotes.policy_samples import imported_policy, issued_policy

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_of_acente1(agents):
    user = get_user_model().objects.create_user("yonetici-acente1", password="x-pass-12345", email="y@acente.example")
    AgentProfile.objects.create(user=user, agency=Agency.objects.get(code="ACENTE1"), is_agency_admin=True)
    return user


def ending_in(policy: Policy, days: int) -> Policy:
    Policy.objects.filter(pk=policy.pk).update(starts_on=today() + timedelta(days=days - 365),
                                               ends_on=today() + timedelta(days=days))  # fmt: skip
    policy.refresh_from_db()
    return policy


@pytest.mark.parametrize(
    ("days_left", "threshold"), [(31, None), (30, 30), (16, 30), (15, 15), (8, 15), (7, 7), (0, 7), (-1, 7)]
)
def test_the_tightest_threshold_due(days_left, threshold):
    assert tightest_threshold(days_left=days_left) == threshold


def test_the_issuing_agent_and_the_agency_admins_are_reminded_once_at_each_threshold(agents, admin_of_acente1):
    policy = ending_in(issued_policy(agents["ACENTE1"], "P-REN-1"), 30)
    (first,) = renewal_reminders_send()
    assert first.days_before == 30 and first.recipients == "ajan-acente1, yonetici-acente1"
    notified = Notification.objects.filter(kind=Notification.Kind.RENEWAL_DUE)
    assert sorted(n.recipient.username for n in notified) == ["ajan-acente1", "yonetici-acente1"]
    assert "P-REN-1" in notified.first().title and "30 gün" in notified.first().title
    assert renewal_reminders_send() == []  # the job again the same day: nothing new
    assert renewal_reminders_send(on=today() + timedelta(days=10)) == []  # 20 days left: still the 30-day one

    (second,) = renewal_reminders_send(on=today() + timedelta(days=15))
    (third,) = renewal_reminders_send(on=today() + timedelta(days=23))
    assert (second.days_before, third.days_before) == (15, 7)
    assert renewal_reminders_send(on=today() + timedelta(days=29)) == []
    assert RenewalReminder.objects.filter(policy=policy).count() == 3
    assert Notification.objects.filter(kind=Notification.Kind.RENEWAL_DUE).count() == 6


def test_a_reminder_is_mailed_after_commit_to_whoever_has_an_address(
    agents, admin_of_acente1, django_capture_on_commit_callbacks
):
    ending_in(issued_policy(agents["ACENTE1"], "P-REN-10"), 7)
    with django_capture_on_commit_callbacks(execute=True):
        renewal_reminders_send()
    assert [m.to for m in mail.outbox if "P-REN-10" in m.subject] == [["y@acente.example"]]


def test_a_policy_first_seen_inside_a_threshold_gets_only_the_tightest_reminder(agents):
    ending_in(imported_policy("ACENTE1", "anka", "P-REN-2"), 10)
    (reminder,) = renewal_reminders_send()
    assert reminder.days_before == 15
    assert renewal_reminders_send(on=today() + timedelta(days=1)) == []


def test_after_the_job_was_down_no_looser_reminder_follows_a_tighter_one(agents):
    policy = ending_in(imported_policy("ACENTE1", "anka", "P-REN-3"), 5)
    RenewalReminder.objects.create(policy=policy, days_before=7, sent_on=today())
    assert renewal_reminders_send() == []


def test_a_policy_already_renewed_with_us_is_not_reminded(agents):
    old = ending_in(imported_policy("ACENTE1", "anka", "P-REN-4", plate="06XYZ42"), 7)
    imported_policy("ACENTE1", "bogazici", "P-REN-5", plate="06XYZ42", starts_on=old.ends_on,
                    ends_on=old.ends_on + timedelta(days=365))  # fmt: skip
    assert renewal_reminders_send() == []


def test_ended_cancelled_and_far_policies_are_not_reminded(agents):
    ending_in(imported_policy("ACENTE1", "anka", "P-REN-6", status=Policy.Status.CANCELLED), 7)
    ending_in(imported_policy("ACENTE1", "anka", "P-REN-7"), 45)
    ending_in(imported_policy("ACENTE1", "anka", "P-REN-8"), -1)
    assert renewal_reminders_send() == []


def test_the_renewals_list_shows_who_was_reminded_and_another_agency_sees_nothing(agents):
    policy = ending_in(issued_policy(agents["ACENTE1"], "P-REN-9"), 7)
    renewal_reminders_send()
    desk = Client()
    desk.force_login(agents["ACENTE1"])
    html = desk.get(reverse("renewal_list")).content.decode()
    assert f"{today():%d.%m.%Y} (7 gün kala): ajan-acente1" in html
    other = Client()
    other.force_login(agents["ACENTE2"])
    assert policy.policy_no not in other.get(reverse("renewal_list")).content.decode()
    notified = Notification.objects.filter(kind=Notification.Kind.RENEWAL_DUE)
    assert {n.recipient.username for n in notified} == {"ajan-acente1"}


def test_the_daily_schedule_is_registered():
    from work.schedules import schedules

    assert any(spec.func == "policies.tasks.renewal_reminders_daily" for spec in schedules())
