"""The customer page's history: their coming renewals, quote requests and policies.

The page is the customers app's and the history is this app's: it is added through the page's
hook (`customers.customer_page.customer_history_sections`), so customers never imports quotes.
"""

from __future__ import annotations

from typing import cast

from django.contrib.auth.models import User
from django.http import HttpRequest
from django.template.loader import render_to_string

from customers.models import Customer
from quotes import selectors

HISTORY_LIMIT = 50


def customer_history_section(request: HttpRequest, customer: Customer) -> str:
    """The "Yenilemesi yaklaşanlar", "Teklif talepleri" and "Poliçeler" cards."""
    user = cast(User, request.user)  # the customer page is behind login_required
    context = {
        "quote_requests": selectors.customer_quote_requests(user=user, customer=customer)[:HISTORY_LIMIT],
        "policies": selectors.customer_policies(user=user, customer=customer)[:HISTORY_LIMIT],
        "renewals": selectors.customer_renewals(user=user, customer=customer),
        "renewal_days": selectors.CUSTOMER_RENEWAL_WINDOW.days,
    }
    return render_to_string("quotes/_customer_history.html", context, request=request)
