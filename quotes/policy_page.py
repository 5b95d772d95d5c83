"""Sections other apps add to the desk's policy page (its commission, say), registered from their
`AppConfig.ready()`. The page is this app's and the sections are theirs: an app of a higher
layer shows what it knows of a policy without this app importing it (tests/test_layers.py)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest
from django.utils.safestring import SafeString

from insurehub.page_sections import PageSections
from policies.models import Policy

# (the request, the policy the user may see) -> the section's HTML; a plain str is escaped.
PolicyPageSection = Callable[[HttpRequest, Policy], str]

_SECTIONS: PageSections[Policy] = PageSections("policy")


def policy_page_section_register(name: str, render: PolicyPageSection) -> None:
    """Show `render`'s HTML on every policy page, after the policy's own facts. Registering the
    same name again replaces it (ready() may run twice in a test process)."""
    _SECTIONS.register(name, render)


def policy_page_sections(request: HttpRequest, policy: Policy) -> list[SafeString]:
    """Every registered section, in the order registered. A section that fails is logged and left
    out: the agent at the desk still gets the policy page."""
    return _SECTIONS.render(request, policy)
