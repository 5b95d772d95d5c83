"""Renewals on the desk (Yenilemesi yaklaşanlar): policies ending soon, and quoting them again."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from quotes import selectors
from quotes.models import Policy
from quotes.services.quote_requests import InputInvalid, NoInsurerAvailable
from quotes.services.renewals import RenewalNotPossible, renewal_quote_create
from quotes.views.common import page_of


def _window(value: str | None) -> int:
    """30 or 60 days; anything else is the default 30 (a toggle, not a free number)."""
    return int(value) if value in {str(days) for days in selectors.RENEWAL_WINDOWS} else selectors.RENEWAL_WINDOWS[0]


@login_required
@require_GET
def renewal_list(request: HttpRequest) -> HttpResponse:
    days = _window(request.GET.get("gun"))
    policies = selectors.renewal_list(user=request.user, days=days)
    profile = getattr(request.user, "agent_profile", None)
    context = {
        "page": page_of(request, policies),
        "days": days,
        "windows": selectors.RENEWAL_WINDOWS,
        "own_agency_id": profile.agency_id if profile else None,
    }
    return render(request, "quotes/renewal_list.html", context)


@login_required
@require_POST
def renewal_quote(request: HttpRequest, pk: int) -> HttpResponse:
    """ "Yeniden teklif al": the same risk at every insurer, then the new request's results."""
    try:
        quote_request = renewal_quote_create(user=request.user, policy_id=pk)
    except Policy.DoesNotExist:
        raise Http404("Poliçe bulunamadı.") from None
    except InputInvalid as invalid:
        messages.error(
            request,
            "Eski teklifin bilgileri bugünkü kurallara uymuyor; lütfen yeni teklif formunu kullanın. "
            + "; ".join(invalid.errors.values()),
        )
    except (RenewalNotPossible, NoInsurerAvailable, PermissionError) as refused:
        messages.error(request, str(refused))
    else:
        return redirect("quote_request_detail", public_id=quote_request.public_id)
    back = reverse("renewal_list") + "?" + urlencode({"gun": _window(request.POST.get("gun"))})
    return redirect(back)
