"""The Content-Security-Policy: on every page, strict, and nothing in our templates that it would refuse.

The browser side (a violation fails any browser test; markup slipped into a page does not run)
is in tests/browser/test_content_security_policy.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.hardening.test_security import url_samples

REPO_ROOT = Path(__file__).resolve().parents[2]
APPS = ("agencies", "console", "customers", "documents", "insurehub", "integrations", "notifications", "quotes", "sync")


def directives(header: str) -> dict[str, set[str]]:
    parsed = {}
    for part in header.split(";"):
        name, *sources = part.split()
        parsed[name] = set(sources)
    return parsed


def assert_strict(header: str, where: str) -> None:
    policy = directives(header)
    for name in ("script-src", "style-src", "default-src"):
        assert policy.get(name) == {"'self'"}, (where, name, policy.get(name))
    assert policy["object-src"] == {"'none'"} and policy["base-uri"] == {"'none'"}, where
    assert policy["frame-ancestors"] == {"'none'"}, where
    assert "unsafe" not in header, (where, header)


def test_a_desk_page_answers_the_strict_policy(desk):
    response = desk.get("/policeler/")
    assert response.status_code == 200
    assert_strict(response["Content-Security-Policy"], "/policeler/")


def test_error_pages_and_the_login_page_carry_the_policy_too(desk):
    for response, where in (
        (Client().get("/giris/"), "login"),
        (desk.get("/boyle-bir-sayfa-yok/"), "404"),
        (desk.get("/acente/calisanlar/"), "403"),
        (desk.get("/policeler/disari-aktar/", {"format": "pdf"}), "export 400"),
    ):
        assert_strict(response["Content-Security-Policy"], where)


def every_html_answer(client: Client) -> list[tuple[str, int, str]]:
    answers = []
    for name, path in url_samples():
        if name.endswith("logout"):
            continue
        response = client.get(path)
        if response["Content-Type"].startswith("text/html"):
            answers.append((path, response.status_code, response.get("Content-Security-Policy", "")))
    return answers


@pytest.mark.django_db
def test_every_html_page_of_the_desk_the_admin_and_the_api_carries_the_policy(agents):
    """The URL walk as an agent and as a superuser: whatever answers HTML carries the strict policy."""
    agent = Client()
    agent.force_login(agents["ACENTE1"])
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("yonetici", "yonetici@example.com", "parola-123"))
    answers = every_html_answer(agent) + every_html_answer(admin) + every_html_answer(Client())
    assert len(answers) > 100
    for path, status, header in answers:
        assert header, (path, status)
        assert_strict(header, path)


def test_the_api_answers_json_not_the_browsable_pages(desk):
    """DRF's HTML pages carry inline styles the policy refuses; a browser gets JSON like any client."""
    response = desk.get("/api/policies/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"


def test_swagger_ui_serves_its_start_up_script_as_a_file(desk):
    page = desk.get("/api/docs/").content.decode()
    assert '<script src="/api/docs/?script="></script>' in page
    assert re.search(r"<script>|<style", page) is None
    script = desk.get("/api/docs/", {"script": ""})
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()


# --- nothing in our templates or our HTML-making code that the policy would refuse ----------------

COMMENT = re.compile(r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}|{#.*?#}", re.S)
REFUSED = {
    "inline <script>": re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I),
    "<style> block": re.compile(r"<style\b", re.I),
    "style attribute": re.compile(r"\sstyle\s*=", re.I),
    "event handler attribute": re.compile(r"\son[a-z]+\s*=", re.I),
    "javascript: URL": re.compile(r"javascript:", re.I),
}


def our_templates() -> list[Path]:
    folders = [REPO_ROOT / "templates", *(REPO_ROOT / app / "templates" for app in APPS)]
    return sorted(path for folder in folders if folder.exists() for path in folder.rglob("*.html"))


def test_the_template_scan_reads_every_template():
    names = {path.name for path in our_templates()}
    assert {"base.html", "quote_request_new.html", "_live_script.html", "health.html", "500.html"} <= names


@pytest.mark.parametrize("template", our_templates(), ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_no_template_has_inline_script_style_or_handlers(template):
    text = COMMENT.sub("", template.read_text())
    found = [what for what, pattern in REFUSED.items() if pattern.search(text)]
    assert found == []


def test_no_python_code_writes_inline_script_style_or_handlers_into_html():
    """format_html and friends in the apps: the same rules as the templates."""
    strings = re.compile(r"""(['"])(?:(?!\1).)*<[a-z][^'"]*\1""", re.I)
    found = []
    for app in APPS:
        for source in (REPO_ROOT / app).rglob("*.py"):
            if "migrations" in source.parts:
                continue
            for literal in strings.finditer(source.read_text()):
                for what, pattern in REFUSED.items():
                    if pattern.search(literal.group(0)):
                        found.append((str(source.relative_to(REPO_ROOT)), what, literal.group(0)[:80]))
    assert found == []
