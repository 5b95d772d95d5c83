"""Production serving: `scripts/serve.sh` (migrate, collectstatic, gunicorn) with production settings,
driven by Chromium.

Production settings are used as deployed, with one switch a TLS-terminating proxy also needs:
`DJANGO_SECURE_SSL_REDIRECT=0`. Cookies stay `Secure` under `__Host-` names; Chromium keeps such
cookies over plain HTTP only for a potentially trustworthy origin, which http://127.0.0.1 is, so a
working login here also shows the cookies are accepted as production sets them.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from cryptography.fernet import Fernet

from tests.browser.conftest import CspWatch
from tests.conftest import wait_until

pytestmark = [pytest.mark.browser]

REPO_ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "uretim-parola-123"

CREATE_AGENT = """
import django
django.setup()
from django.contrib.auth import get_user_model
from agencies.models import Agency, AgentProfile
agency = Agency.objects.create(code="ACENTE1", name="Örnek Acente")
user = get_user_model().objects.create_user("ajan-uretim", password=%r)
AgentProfile.objects.create(user=user, agency=agency)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2, allow_redirects=False).status_code < 500
    except (requests.ConnectionError, requests.Timeout):  # a worker still booting on a busy machine: not yet
        return False


@pytest.fixture
def production_site(tmp_path) -> Iterator[tuple[str, dict[str, str]]]:
    """The site served by `scripts/serve.sh` on a free loopback port, on a fresh SQLite file."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
        "INSUREHUB_CREDENTIALS_KEY": Fernet.generate_key().decode(),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'insurehub.sqlite3'}",
        "INSUREHUB_VAR_DIR": str(tmp_path),
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "SITE_URL": f"http://127.0.0.1:{port}",
        "WEB_BIND": f"127.0.0.1:{port}",
        "WEB_WORKERS": "1",
        "WEB_THREADS": "4",
        "PYTHON": sys.executable,
    }
    # serve.sh defaults to production; the test run's own settings and switches stay out.
    for name in ("DJANGO_SETTINGS_MODULE", "INSUREHUB_USE_TEST_DB", "DJANGO_DEBUG", "REDIS_URL",
                 "PYTEST_CURRENT_TEST", "DJANGO_ALLOW_ASYNC_UNSAFE"):  # fmt: skip
        env.pop(name, None)
    log_path = tmp_path / "serve.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [str(REPO_ROOT / "scripts" / "serve.sh")], cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_until(lambda: server.poll() is not None or answers(base_url + "/giris/"), timeout=90, interval=0.3)
        except AssertionError:
            pytest.fail("serve.sh did not answer:\n" + log_path.read_text())
        assert server.poll() is None, "serve.sh exited:\n" + log_path.read_text()
        # The agent is made as an operator would: a process with production settings on the same database.
        created = subprocess.run(
            [sys.executable, "-c", CREATE_AGENT % PASSWORD],
            cwd=REPO_ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "insurehub.settings.production"},
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        yield base_url, env
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # gunicorn's master and its workers stop gracefully
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def test_gunicorn_serves_login_desk_and_static_files_with_production_settings(browser, production_site, tmp_path):
    """serve.sh with production settings: htmx and admin CSS load (200), login works with __Host- cookies,
    and the Content-Security-Policy refuses nothing the desk or the admin needs."""
    base_url, _ = production_site
    context = browser.new_context(base_url=base_url, locale="tr-TR")
    context.set_default_timeout(20_000)
    csp_watch = CspWatch(context)
    statics: dict[str, tuple[int, str]] = {}  # path under /static/ -> (status, content type)

    def remember_static(response) -> None:
        if "/static/" in response.url:
            path = response.url.split("/static/", 1)[1]
            statics[path] = (response.status, response.headers.get("content-type", ""))

    context.on("response", remember_static)
    try:
        page = context.new_page()
        page.goto("/")
        assert page.url.startswith(base_url + "/giris/"), page.url
        assert page.evaluate("typeof window.htmx") == "object"

        page.get_by_label("Kullanıcı adı").fill("ajan-uretim")
        page.get_by_label("Parola").fill(PASSWORD)
        page.get_by_role("button", name="Giriş yap").click()
        page.get_by_role("heading", name="Yeni teklif").wait_for()
        assert page.url == base_url + "/"
        # htmx is a deferred script: it runs once the page is parsed, which may be after the heading shows.
        page.wait_for_load_state("load")
        assert page.evaluate("typeof window.htmx") == "object"
        cookies = {cookie["name"]: cookie for cookie in context.cookies()}
        assert cookies["__Host-sessionid"]["secure"] and cookies["__Host-sessionid"]["httpOnly"]

        page.goto("/admin/login/")
        page.get_by_role("button", name="Oturum aç").wait_for()
        csp_watch.assert_clean()
    finally:
        context.close()

    htmx = [name for name in statics if name.startswith("django_htmx/htmx")]
    assert htmx, statics
    # Hashed names from the manifest (cacheable for ever), served by WhiteNoise with status 200.
    assert all(statics[name][0] == 200 and "javascript" in statics[name][1] for name in htmx), statics
    assert all(name.count(".") >= 2 for name in htmx), htmx
    admin_css = [name for name in statics if name.startswith("admin/css/") and name.endswith(".css")]
    assert admin_css, statics
    assert all(statics[name][0] == 200 and statics[name][1].startswith("text/css") for name in admin_css), statics
    assert (tmp_path / "static" / "staticfiles.json").exists()  # collectstatic ran into STATIC_ROOT
    desk = [name for name in statics if name.startswith("insurehub/desk.") and name.count(".") >= 2]
    assert {name.rsplit(".", 1)[1] for name in desk} == {"css", "js"}, statics
    # The 500 page names the stylesheet without its hash (no manifest look-up that could fail).
    plain = requests.get(base_url + "/static/insurehub/desk.css", timeout=10)
    assert plain.status_code == 200 and plain.headers["Content-Type"].startswith("text/css")


CREATE_WAITING_REQUEST = """
import django
django.setup()
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from integrations.demo import demo_data_seed
from integrations.adapters.registry import registered_codes
from integrations.models import InsurerAccount
from quotes.models import InsurerQuote, QuoteRequest
from sandbox import DEFAULT_ACCOUNTS
urls = {code: "https://sigorta.invalid/" + code for code in registered_codes()}
demo_data_seed(base_urls=urls, accounts=DEFAULT_ACCOUNTS)
user = get_user_model().objects.get(username="ajan-uretim")
request = QuoteRequest.objects.create(
    agency=user.agent_profile.agency, created_by=user, product="trafik", input_data={}, plate="34ABC123",
    owner_id="10000000146", deadline_at=timezone.now() + timedelta(minutes=5),
)
for account in InsurerAccount.objects.filter(agency=request.agency).select_related("insurer"):
    InsurerQuote.objects.create(request=request, insurer=account.insurer, account=account)
print(request.public_id)
"""
# An insurer's answer stored on its row as a worker stores it (the argument: which rows, by insurer code).
STORE_ANSWERS = """
import sys
import django
django.setup()
from datetime import timedelta
from decimal import Decimal
from django.utils import timezone
from quotes.models import InsurerQuote
rows = InsurerQuote.objects.filter(request__public_id=sys.argv[1])
if sys.argv[2] != "*":
    rows = rows.filter(insurer__code=sys.argv[2])
rows.update(state="SUCCEEDED", premium=Decimal("4312.50"), currency="TRY", quote_no="Q-1",
            valid_until=timezone.now() + timedelta(minutes=15), finished_at=timezone.now())
"""


def test_gunicorn_pushes_answers_to_the_results_page(browser, production_site):
    """serve.sh's gthread workers carry the results stream: answers stored by another process
    reach the open page without a reload, and the last one ends the stream."""
    base_url, env = production_site
    production = {**env, "DJANGO_SETTINGS_MODULE": "insurehub.settings.production"}

    def python(script: str, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", script, *args], cwd=REPO_ROOT, env=production,
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    public_id = python(CREATE_WAITING_REQUEST)
    context = browser.new_context(base_url=base_url, locale="tr-TR")
    context.set_default_timeout(20_000)
    csp_watch = CspWatch(context)
    try:
        page = context.new_page()
        page.goto("/giris/")
        page.get_by_label("Kullanıcı adı").fill("ajan-uretim")
        page.get_by_label("Parola").fill(PASSWORD)
        page.get_by_role("button", name="Giriş yap").click()
        page.get_by_role("heading", name="Yeni teklif").wait_for()
        page.goto(f"/talepler/{public_id}/")
        page.locator('#results[data-streaming="1"]').wait_for(state="attached")
        page.evaluate("() => { window.sameDocument = true; }")
        first = page.locator("tr.result").first.get_attribute("data-insurer")

        python(STORE_ANSWERS, public_id, first)
        page.locator(f'tr[data-insurer="{first}"][data-state="SUCCEEDED"]').wait_for(state="attached")
        python(STORE_ANSWERS, public_id, "*")
        page.locator('#results[data-complete="true"]').wait_for(state="attached")

        assert page.evaluate("() => window.sameDocument") is True
        seen = page.evaluate("() => Object.values(window.insurehubRowsSeen)")
        assert seen and {entry["via"] for entry in seen} == {"stream"}
        csp_watch.assert_clean()
    finally:
        context.close()


def test_the_access_log_masks_identity_numbers_in_urls(production_site, tmp_path):
    """gunicorn writes each request line whole; a TCKN in a query (an old bookmark, a client that
    still searches by GET) reaches the log store masked, as every other log line is."""
    base_url, _ = production_site
    answer = requests.get(base_url + "/musteriler/?q=10000000146&vkn=1234567890", timeout=10, allow_redirects=True)
    assert answer.status_code == 200  # the login page, with the query carried in `next`
    log = tmp_path / "serve.log"
    wait_until(lambda: "/musteriler/" in log.read_text(errors="replace"), timeout=10)
    text = log.read_text(errors="replace")
    access_lines = [line for line in text.splitlines() if "/musteriler/" in line or "next=" in line]
    assert access_lines, text
    assert "10000000146" not in text, access_lines
    assert "100******46" in text, access_lines
