"""Renewal reminders: the agents responsible for a policy are told 30, 15 and 7 days before it ends.

Most of an agency's income is renewals, and a renewal lost is usually one nobody looked at in
time: the list of policies ending soon is there, but only for whoever opens it. So every
morning each policy in force that ends within a threshold gets one reminder for it — once:
the (policy, threshold) row is unique, so a job run twice, or again after a crash, sends
nothing new. A policy first seen inside a threshold (imported 10 days before its end) gets only
the tightest reminder due, never three at once. A policy already renewed with us (a newer policy
of the agency on the same risk, starting from its end) is not reminded at all.

Who is told: the agent who issued it, and the agency's admins (every active agent when it has
none), as for every other policy event (`notifications.services.agency_people`).

The customer is not messaged from here: a reminder to a customer is a commercial message that
needs their consent to the channel, which the outreach app keeps. Each new reminder is announced
(`policies.signals.renewal_reminder_due`, once, inside the reminder's transaction) and the
outreach app messages the customer on the channels they consented to (docs/outreach.md).
"""

from __future__ import annotations

import logging
from datetime import date, timedelta

from django.db import IntegrityError, transaction
from django.urls import reverse

from insurehub.masking import mask_and_cut
from notifications.models import Notification
from notifications.services import agency_people, notify
from policies.models import Policy, RenewalReminder
from policies.periods import today
from policies.signals import renewal_reminder_due

logger = logging.getLogger(__name__)

# Days before the end: each policy is reminded once at each of these, the tightest due first.
THRESHOLDS: tuple[int, ...] = (30, 15, 7)


def renewal_reminders_send(*, on: date | None = None) -> list[RenewalReminder]:
    """Every reminder due `on` (today in Türkiye by default) that was not sent before."""
    on = on or today()
    due = Policy.objects.filter(
        status=Policy.Status.ACTIVE, ends_on__gte=on, ends_on__lte=on + timedelta(days=max(THRESHOLDS))
    ).select_related("insurer", "issuance__requested_by", "customer")
    sent = []
    for policy in due.order_by("ends_on", "pk").iterator(chunk_size=500):
        assert policy.ends_on is not None  # the filter above reads it
        days_left = (policy.ends_on - on).days
        threshold = tightest_threshold(days_left=days_left)
        if threshold is None or _renewed(policy):
            continue
        reminder = _remind(policy, threshold=threshold, days_left=days_left, on=on)
        if reminder is not None:
            sent.append(reminder)
    if sent:
        logger.info("renewal reminders: %d sent for %s", len(sent), on.isoformat())
    return sent


def tightest_threshold(*, days_left: int) -> int | None:
    """The smallest threshold not below `days_left`: 20 days left is the 30-day reminder, 10 the
    15-day one; past every threshold (more than 30 days left), none."""
    fitting = [days for days in THRESHOLDS if days_left <= days]
    return min(fitting) if fitting else None


def _renewed(policy: Policy) -> bool:
    """A newer policy of the agency on the same risk that starts where this one ends (or later)."""
    newer = Policy.objects.filter(
        agency_id=policy.agency_id, product=policy.product, status=Policy.Status.ACTIVE, starts_on__gte=policy.ends_on
    ).exclude(pk=policy.pk)
    if policy.plate:
        return newer.filter(plate=policy.plate).exists()
    uavt = _uavt_of(policy)
    if uavt:
        return newer.filter(issuance__quote_request__input_data__uavt_code=uavt).exists()
    return False  # a risk we cannot name (an imported DASK policy): reminded, to be safe


def _uavt_of(policy: Policy) -> str:
    issuance = getattr(policy, "issuance", None) if policy.issuance_id else None
    return str(((issuance.quote_request.input_data or {}) if issuance else {}).get("uavt_code") or "")


def _remind(policy: Policy, *, threshold: int, days_left: int, on: date) -> RenewalReminder | None:
    if RenewalReminder.objects.filter(policy=policy, days_before__lte=threshold).exists():
        return None  # this one, or a tighter one already (the job was down for a while): once is enough
    issuer = policy.issuance.requested_by if policy.issuance is not None else None
    recipients = [
        person
        for person in [issuer, *agency_people(policy.agency_id, sub_agency_id=policy.sub_agency_id)]
        if person is not None
    ]
    try:
        with transaction.atomic():
            reminder = RenewalReminder.objects.create(
                policy=policy,
                days_before=threshold,
                sent_on=on,
                recipients=mask_and_cut(", ".join(sorted({person.get_username() for person in recipients})), 300),
            )
            notify(
                recipients=recipients,
                agency_id=policy.agency_id,
                kind=Notification.Kind.RENEWAL_DUE,
                key=f"renewal:{policy.pk}:{threshold}",
                title=f"Poliçe {policy.policy_no} {days_left} gün sonra bitiyor",
                body=(
                    f"{policy.insurer.name} poliçesi {policy.policy_no} {policy.ends_on:%d.%m.%Y} tarihinde bitiyor"
                    f"{_risk_text(policy)}. Yenileme teklifi için: Yenilemeler."
                ),
                link=reverse("renewal_list"),
                references=(policy.policy_no,),
            )
            renewal_reminder_due.send_robust(sender=RenewalReminder, reminder=reminder)
    except IntegrityError:
        return None  # another run of the job took it a moment ago
    return reminder


def _risk_text(policy: Policy) -> str:
    if policy.plate:
        return f" (plaka {policy.plate})"
    return ""
