"""Telling agents what finished while they were not watching: in the app, and by e-mail.

An issuance that was still running when the agent left the page, a document the insurer
produced later, a policy the nightly sync found cancelled: each becomes one notification per
person, idempotent by event (`key`), so a retried task or a replayed record never repeats it.
Each app words its own events (`quotes.notices`, `documents.notices`, `sync.notices`) and calls
`notify` here, so this app knows none of their models.
Mail is sent after the surrounding transaction commits, and a mail server that is down costs
the e-mail only (logged), never the work that triggered it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import partial

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from agencies.models import AgentProfile
from insurehub.masking import mask_and_cut
from notifications.models import Notification

logger = logging.getLogger(__name__)

Kind = Notification.Kind


def notify(
    *,
    recipients: Iterable[User],
    agency_id: int,
    kind: str,
    key: str,
    title: str,
    body: str = "",
    link: str = "",
    references: Iterable[str] = (),
) -> list[Notification]:
    """One notification per recipient for this event; those already notified are skipped.
    `references` are the insurer's numbers the title quotes (policy, quote): shown as they are,
    never masked as if they were identities, while the rest of the title is masked."""
    references = tuple(references)
    created = []
    for user in {user.pk: user for user in recipients if user is not None and user.is_active}.values():
        try:
            with transaction.atomic():
                notification = Notification.objects.create(
                    recipient=user,
                    agency_id=agency_id,
                    kind=kind,
                    key=key[:120],
                    title=mask_and_cut(title, 200, keep=references),
                    body=body,
                    link=link,
                )
        except IntegrityError:
            continue  # this person already has it: the event was seen before
        created.append(notification)
        if user.email:
            transaction.on_commit(partial(_email, notification.pk))
    return created


def _email(notification_id: int) -> None:
    notification = Notification.objects.select_related("recipient").get(pk=notification_id)
    link = f"\n\n{settings.SITE_URL.rstrip('/')}{notification.link}" if notification.link else ""
    try:
        send_mail(
            subject=f"[InsureHub] {notification.title}",
            message=f"{notification.body}{link}".strip(),
            from_email=None,
            recipient_list=[notification.recipient.email],
        )
    except Exception:
        logger.exception("notification %s: e-mail to its recipient failed; kept in the app", notification_id)
        return
    Notification.objects.filter(pk=notification_id).update(emailed_at=timezone.now())


def agency_people(agency_id: int, *, sub_agency_id: int | None = None) -> list[User]:
    """Who hears about an agency's policy when nobody in particular asked for it: its admins,
    else every active agent of the agency's own staff; and, for a policy credited to a
    sub-agency, that sub-agency's active users. A sub-agency user never hears of a record outside
    their sub-agency (the scope rule, `agencies.scope`, holds for what is told as for what is read)."""
    profiles = AgentProfile.objects.filter(agency_id=agency_id, user__is_active=True).select_related("user")
    staff = [profile for profile in profiles if profile.sub_agency_id is None]
    people = [profile.user for profile in staff if profile.is_agency_admin] or [profile.user for profile in staff]
    if sub_agency_id is not None:
        people += [profile.user for profile in profiles if profile.sub_agency_id == sub_agency_id]
    return people


def unread_count(user: User) -> int:
    return Notification.objects.filter(recipient=user, read_at__isnull=True).count()


def notification_mark_read(*, user: User, pk: int | None = None) -> int:
    """Mark one (or, without `pk`, all) of the user's own notifications read."""
    unread = Notification.objects.filter(recipient=user, read_at__isnull=True)
    if pk is not None:
        unread = unread.filter(pk=pk)
    return unread.update(read_at=timezone.now())


def policy_link(policy_id: int) -> str:
    """The policy's desk page; the list where that page is not served (a site without it)."""
    try:
        return reverse("policy_detail", args=[policy_id])
    except NoReverseMatch:
        return reverse("policy_list")
