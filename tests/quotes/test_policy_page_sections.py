"""Sections other apps add to the policy page (quotes.policy_page): shown in order, escaped unless
marked safe, and one that fails leaves the page itself standing."""

from __future__ import annotations

import pytest
from django.utils.html import format_html

from insurehub.page_sections import PageSections
from quotes import policy_page

from .policy_samples import issued_policy

pytestmark = pytest.mark.django_db


@pytest.fixture
def sections(monkeypatch):
    registered: PageSections = PageSections("policy")
    monkeypatch.setattr(policy_page, "_SECTIONS", registered)
    return registered


def test_registered_sections_are_shown_and_a_failing_one_is_left_out(agents, desk, sections):
    policy = issued_policy(agents["ACENTE1"], "ANK-SECTIONS")

    def failing(request, policy):
        raise RuntimeError("section broke")

    policy_page.policy_page_section_register("safe", lambda request, p: format_html('<p id="s1">{}</p>', p.policy_no))
    policy_page.policy_page_section_register("broken", failing)
    policy_page.policy_page_section_register("plain", lambda request, p: "<b>kaçış</b>")
    response = desk.get(f"/policeler/{policy.pk}/")
    page = response.content.decode()
    assert response.status_code == 200
    assert '<p id="s1">ANK-SECTIONS</p>' in page
    assert "&lt;b&gt;kaçış&lt;/b&gt;" in page and "<b>kaçış</b>" not in page
