"""Sections other apps add to the desk's quote request page (sending the offer to the customer,
say), registered from their `AppConfig.ready()` like the policy page's (`quotes.policy_page`)."""

from __future__ import annotations

from insurehub.page_sections import PageSections
from quotes.models import QuoteRequest

# (the request, the quote request the user may see) -> the section's HTML, after the results.
quote_request_page_sections: PageSections[QuoteRequest] = PageSections("quote request")
