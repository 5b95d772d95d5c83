"""The unread count beside "Bildirimler" in the desk's navigation."""

from __future__ import annotations

from django.http import HttpRequest

from notifications.services import unread_count as count_unread


def unread_count(request: HttpRequest) -> dict[str, int]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"notifications_unread": count_unread(user)}
