"""Sections other apps add to the desk's customer page (the customer's consent per channel and
the messages sent to them, say), registered from their `AppConfig.ready()` like the policy
page's (`quotes.policy_page`): the page stays this app's and never imports theirs."""

from __future__ import annotations

from customers.models import Customer
from insurehub.page_sections import PageSections

# (the request, the customer the user may see) -> the section's HTML, after the customer's facts.
customer_page_sections: PageSections[Customer] = PageSections("customer")
# The customer's history (renewals, quote requests, policies: the quotes app's), at the page's end.
customer_history_sections: PageSections[Customer] = PageSections("customer history")
