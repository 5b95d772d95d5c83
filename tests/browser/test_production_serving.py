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
    except requests.ConnectionError:
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
    """serve.sh with production settings: htmx and admin CSS load (200), login works with __Host- cookies."""
    base_url, _ = production_site
    context = browser.new_context(base_url=base_url, locale="tr-TR")
    context.set_default_timeout(20_000)
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
        assert page.evaluate("typeof window.htmx") == "object"
        cookies = {cookie["name"]: cookie for cookie in context.cookies()}
        assert cookies["__Host-sessionid"]["secure"] and cookies["__Host-sessionid"]["httpOnly"]

        page.goto("/admin/login/")
        page.get_by_role("button", name="Oturum aç").wait_for()
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
