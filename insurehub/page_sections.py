"""Sections other apps add to a desk page, registered from their `AppConfig.ready()`.

The page belongs to one app and each section to another: an app of a higher layer shows what it
knows of a policy, a customer or a quote request without the page's app importing it
(tests/test_layers.py). One registry per page (`quotes.policy_page`, `customers.customer_page`,
`quotes.quote_request_page`), one way of rendering them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

from django.http import HttpRequest
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString

logger = logging.getLogger(__name__)

Shown = TypeVar("Shown")


class PageSections(Generic[Shown]):
    """(the request, the object the user may see) -> the section's HTML; a plain str is escaped."""

    def __init__(self, page: str) -> None:
        self.page = page
        self._sections: dict[str, Callable[[HttpRequest, Shown], str]] = {}

    def register(self, name: str, render: Callable[[HttpRequest, Shown], str]) -> None:
        """Show `render`'s HTML on every such page. Registering the same name again replaces it
        (ready() may run twice in a test process)."""
        self._sections[name] = render

    def render(self, request: HttpRequest, shown: Shown) -> list[SafeString]:
        """Every registered section, in the order registered. A section that fails is logged and
        left out: the agent at the desk still gets the page."""
        rendered: list[SafeString] = []
        for name, render in self._sections.items():
            try:
                rendered.append(conditional_escape(render(request, shown)))
            except Exception:
                logger.exception("%s page of %s: the section %r failed", self.page, getattr(shown, "pk", "?"), name)
        return rendered
