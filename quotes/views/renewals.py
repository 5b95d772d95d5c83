"""Renewals on the desk (Yenilemesi yaklaşanlar): policies ending soon, and quoting them again."""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from insurehub.desk_errors import desk_errors
from insurehub.desk_lists import page_of
from insurehub.request_types import AuthenticatedHttpRequest
from quotes import selectors
from quotes.renewal_page import renewal_reminder_notes
from quotes.services.renewals import quote_request_after_policy, renewal_quote_create


def _window(value: str | None) -> int:
    """30 or 60 days; anything else is the default 30 (a toggle, not a free number)."""
    return int(value) if value in {str(days) for days in selectors.RENEWAL_WINDOWS} else selectors.RENEWAL_WINDOWS[0]


@login_required
@require_GET
def renewal_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    days = _window(request.GET.get("gun"))
    policies = selectors.renewal_list(user=request.user, days=days)
    profile = getattr(request.user, "agent_profile", None)
    page = page_of(request, policies)
    # What other apps add to each reminder (the customer's own message): as a plain attribute.
    reminders = [reminder for policy in page.object_list for reminder in policy.renewal_reminders.all()]
    notes = renewal_reminder_notes(reminders)
    for reminder in reminders:
        reminder.desk_note = notes.get(reminder.pk, "")
    context = {
        "page": page,
        "days": days,
        "windows": selectors.RENEWAL_WINDOWS,
        "own_agency_id": profile.agency_id if profile else None,
    }
    return render(request, "quotes/renewal_list.html", context)


@login_required
@require_POST
def renewal_quote(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """ "Yeniden teklif al": the same risk at every insurer, then the new request's results."""
    with desk_errors() as outcome:
        quote_request = renewal_quote_create(user=request.user, policy_id=pk)
    if outcome.ok:
        return redirect("quote_request_detail", public_id=quote_request.public_id)
    messages.error(request, outcome.message)
    back = reverse("renewal_list") + "?" + urlencode({"gun": _window(request.POST.get("gun"))})
    return redirect(back)


@login_required
@require_POST
def quote_request_after_policy_view(request: AuthenticatedHttpRequest, public_id: UUID, policy_pk: int) -> HttpResponse:
    """ "Eski poliçe bitince başlayan yeni teklif al" on the confirm page of an overlapping trafik quote."""
    with desk_errors() as outcome:
        quote_request = quote_request_after_policy(user=request.user, public_id=public_id, policy_id=policy_pk)
    if outcome.ok:
        return redirect("quote_request_detail", public_id=quote_request.public_id)
    messages.error(request, outcome.message)
    return redirect("quote_request_detail", public_id=public_id)
