"""The agent's own notifications: a list, and marking them read."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from insurehub.request_types import AuthenticatedHttpRequest
from notifications.models import Notification
from notifications.services import notification_mark_read


@login_required
@require_GET
def notification_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    notifications = Notification.objects.filter(recipient=request.user)
    page = Paginator(notifications, 25).get_page(request.GET.get("sayfa"))
    return render(request, "notifications/notification_list.html", {"page": page})


@login_required
@require_POST
def notification_open(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Mark read and go where it points; someone else's notification is simply not found."""
    notification = Notification.objects.filter(recipient=request.user, pk=pk).first()
    if notification is None:
        return redirect("notification_list")
    notification_mark_read(user=request.user, pk=pk)
    if notification.link and url_has_allowed_host_and_scheme(notification.link, allowed_hosts=None):
        return redirect(notification.link)
    return redirect("notification_list")


@login_required
@require_POST
def notification_read_all(request: AuthenticatedHttpRequest) -> HttpResponse:
    notification_mark_read(user=request.user)
    return redirect("notification_list")
