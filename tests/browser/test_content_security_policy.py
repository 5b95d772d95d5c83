"""The Content-Security-Policy in a real browser: a crafted link's markup never runs, markup that
slips into a page is refused, and the admin and the API docs work under the policy unchanged.

Every test here (and every browser test) also fails on any violation the page met (conftest's
`CspWatch`); the admin walk is mostly that check, over every page the admin index links to.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from .conftest import AGENT_PASSWORD

pytestmark = [pytest.mark.browser]

PAYLOAD = "<script>window.__xss = 1</script>"
ADMIN_PASSWORD = "yonetici-pass-123"


def log_in(page: Page, username: str, password: str = AGENT_PASSWORD, *, admin: bool = False) -> None:
    page.goto("/admin/login/" if admin else "/giris/")
    page.get_by_label("Kullanıcı adı").fill(username)
    page.get_by_label("Parola").fill(password)
    page.get_by_role("button", name="Oturum aç" if admin else "Giriş yap").click()
    if admin:
        expect(page.locator("#site-name")).to_be_visible()
    else:
        expect(page.get_by_role("heading", name="Yeni teklif")).to_be_visible()


def test_the_export_link_with_a_script_in_a_filter_runs_nothing(page, shot, desk_agent):
    """Issue 21's link: the export answers a Turkish error naming the field, as text, and no script runs."""
    log_in(page, desk_agent.username)
    for field, label in (("urun", "Ürün"), ("sirket", "Sigorta şirketi"), ("durum", "Durum"), ("donem", "Dönem")):
        response = page.goto(f"/policeler/disari-aktar/?format=csv&{field}={quote(PAYLOAD)}")
        assert response.status == 400 and response.headers["content-type"].startswith("text/plain")
        expect(page.locator("body")).to_contain_text(f"Geçersiz filtre. {label} ({field}): geçerli değerler:")
        expect(page.locator("body")).not_to_contain_text("script")
        assert page.evaluate("() => window.__xss") is None
    shot(page, "export-refused")
    # The list page shows the same bad filter on its field, as text.
    page.goto(f"/policeler/?urun={quote(PAYLOAD)}")
    expect(page.locator(".field.has-error")).to_contain_text(PAYLOAD)
    assert page.evaluate("() => window.__xss") is None


def test_markup_that_slips_into_a_page_is_refused_by_the_policy(page, csp_watch, desk_agent):
    """The second line of defence: were a template ever to let markup through, the browser runs
    neither an inline script nor an event handler, and says so."""
    log_in(page, desk_agent.username)
    page.goto("/policeler/")
    page.evaluate(
        """() => {
            const script = document.createElement("script");
            script.textContent = "window.__xss = 1";
            document.body.append(script);
            document.body.insertAdjacentHTML("beforeend", '<img src="/yok.png" onerror="window.__xss = 2">');
        }"""
    )
    page.wait_for_function("() => (window.__insurehubCspSeen || 0) >= 2")
    assert page.evaluate("() => window.__xss") is None
    refused = csp_watch.take()
    assert any(line.startswith("script-src-elem refused inline") for line in refused), refused
    assert any(line.startswith("script-src-attr refused inline") for line in refused), refused


def test_the_desk_pages_load_their_scripts_and_styles_under_the_policy(page, desk_agent):
    """Styles from the file (not inline), htmx and the desk's own script running: the policy blocks none."""
    log_in(page, desk_agent.username)
    for path in ("/", "/teklif/yeni/kasko/", "/talepler/", "/policeler/", "/yenilemeler/", "/musteriler/"):
        response = page.goto(path)
        assert "script-src 'self'" in response.headers["content-security-policy"]
        assert page.evaluate("() => typeof window.htmx") == "object"
        # desk.css is applied: the header bar is laid out by it, not by the browser's defaults.
        assert page.evaluate("() => getComputedStyle(document.querySelector('.bar')).display") == "flex"
    page.goto("/teklif/yeni/trafik/")
    # desk.js hides the new customer's fields until "+ Yeni müşteri" is ticked.
    expect(page.locator("#new-customer")).to_be_hidden()
    page.get_by_label("+ Yeni müşteri").check()
    expect(page.locator("#new-customer")).to_be_visible()


@pytest.fixture
def site_admin(seeded_accounts, transactional_db):
    return get_user_model().objects.create_superuser("yonetici-tarayici", password=ADMIN_PASSWORD)


def test_every_admin_page_the_index_links_to_works_under_the_policy(page, shot, site_admin):
    """Django's admin (its own static JS), our admin templates and the health dashboard: no violation."""
    log_in(page, site_admin.username, ADMIN_PASSWORD, admin=True)
    page.goto("/admin/")
    links = page.eval_on_selector_all(
        "#content-main a[href^='/admin/']", "links => links.map(a => a.getAttribute('href'))"
    )
    pages = sorted(set(links))
    assert any(link.endswith("/add/") for link in pages) and len(pages) > 15
    for path in pages:
        response = page.goto(path)
        assert response.status == 200, path
        assert "default-src 'self'" in response.headers["content-security-policy"], path
    # A change page of a real row, and the admin's own widgets built by script.
    page.goto("/admin/integrations/insurer/")
    page.locator("#result_list tbody th a").first.click()
    expect(page.locator("#content-main form")).to_be_visible()
    page.goto("/admin/integrations/health/")
    expect(page.get_by_role("heading", name="Sigorta şirketleri sağlık panosu")).to_be_visible()
    # health.css is applied: the filters are laid out in a row by it.
    assert page.evaluate("() => getComputedStyle(document.querySelector('.health form.filters')).display") == "flex"
    shot(page, "health")


def test_a_date_picker_in_the_admin_opens_under_the_policy(page, site_admin):
    """DateTimeShortcuts builds its calendar in the page with script: it must not trip the policy."""
    log_in(page, site_admin.username, ADMIN_PASSWORD, admin=True)
    page.goto("/admin/customers/customer/add/")
    page.locator("#calendarlink0").click()
    expect(page.locator("#calendarbox0")).to_be_visible()
    page.locator("#calendarbox0 td a").first.click()
    expect(page.locator("#id_kvkk_consent_at_0")).not_to_have_value("")
    page.locator("#clocklink0").click()
    expect(page.locator("#clockbox0")).to_be_visible()


def test_swagger_ui_renders_under_the_policy(page, shot, site_admin):
    """/api/docs/ from the sidecar's files, its start-up script served as a file (split view)."""
    log_in(page, site_admin.username, ADMIN_PASSWORD, admin=True)
    page.goto("/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("InsureHub API")
    expect(page.locator(".opblock").first).to_be_visible()
    shot(page, "swagger")
