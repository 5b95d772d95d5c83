"""No page says back what a crafted link put in its query string (reflected XSS, issue 21).

Every GET route the URL walk finds is asked with markup in each query parameter the code reads:
the names come from the filter forms themselves and from the views' own `request.GET` look-ups
(found in the source, so a new parameter is covered without editing a list here). A page may
repeat the value escaped, or not at all; never as markup, and never with a 500.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from quotes.views.policies import PolicyFilterForm
from quotes.views.quote_requests import QuoteRequestFilterForm
from tests.hardening.test_security import PUBLIC, url_samples

REPO_ROOT = Path(__file__).resolve().parents[2]
APPS = (
    "agencies",
    "console",
    "customers",
    "documents",
    "insurehub",
    "integrations",
    "notifications",
    "outreach",
    "quotes",
    "sync",
)
PAYLOAD = '"><script>window.reflected=1</script><img src=x onerror=alert(1)>'


def query_parameters() -> set[str]:
    """Every query parameter name the desk reads: the filter forms' fields and `GET.get("…")` calls."""
    names = {*PolicyFilterForm.base_fields, *QuoteRequestFilterForm.base_fields}
    pattern = re.compile(r"GET(?:\.get\(|\[)\"(\w+)\"")
    for app in APPS:
        for source in (REPO_ROOT / app).rglob("*.py"):
            names.update(pattern.findall(source.read_text()))
    # Django's admin reads these on every change list.
    return names | {"q", "o", "p", "e"}


def test_the_parameter_list_is_found_in_the_source():
    names = query_parameters()
    assert {"format", "urun", "sirket", "durum", "donem", "arama", "sayfa", "window"} <= names


def shows_markup(response) -> bool:
    if getattr(response, "streaming", False) or not response["Content-Type"].startswith("text/html"):
        return False
    return "<script>window.reflected" in response.content.decode(errors="replace")


def reflected(client: Client, *, one_at_a_time: bool) -> list[tuple[str, str, int]]:
    """(path, parameter, status) of each answer that ran the payload back as markup, or failed.

    All parameters at once meets every check a view makes first; one at a time also reaches the
    checks behind it (the export refused a bad `format` before it read the filters).
    """
    names = sorted(query_parameters())
    queries = [(name, {name: PAYLOAD}) for name in names] if one_at_a_time else [("*", dict.fromkeys(names, PAYLOAD))]
    found = []
    for route, path in url_samples():
        if route in PUBLIC or route.endswith("logout") or (one_at_a_time and path.startswith("/admin/")):
            continue
        for name, query in queries:
            response = client.get(path, query)
            if response.status_code >= 500 or shows_markup(response):
                found.append((path, name, response.status_code))
    return found


@pytest.mark.django_db
def test_no_desk_page_reflects_a_query_parameter_as_markup(agents):
    client = Client()
    client.force_login(agents["ACENTE1"])
    assert reflected(client, one_at_a_time=False) == []
    assert reflected(client, one_at_a_time=True) == []


@pytest.mark.django_db
def test_no_admin_or_console_page_reflects_a_query_parameter_as_markup(seeded_accounts):
    user = get_user_model().objects.create_superuser("yonetici", "yonetici@example.com", "test-pass-123")
    client = Client()
    client.force_login(user)
    assert reflected(client, one_at_a_time=False) == []
