"""The demo `scripts/run.sh` starts: DEBUG off, so a missing page is the Turkish 404, never Django's
debug page with every URL; its static files still served; its insurer credentials still read.

The web server is the one run.sh runs (`manage.py runserver`), under the settings module run.sh
picks, in a process of its own (settings are read once per process).
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.insurehub.test_entry_points import REPO_ROOT, server_env

RUN_SH = REPO_ROOT / "scripts" / "run.sh"


def run_sh_settings_module() -> str:
    """The settings module run.sh exports when the caller has not chosen one."""
    found = re.search(r'DJANGO_SETTINGS_MODULE="\$\{DJANGO_SETTINGS_MODULE:-([\w.]+)\}"', RUN_SH.read_text())
    assert found, "run.sh no longer chooses a default settings module the way this test reads it"
    return found.group(1)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url: str) -> tuple[int, str, str]:
    """Status, Content-Type and body, whatever the status."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory) -> Iterator[str]:
    """`manage.py runserver` as run.sh starts it, on a free port and an empty var dir."""
    env = server_env(
        tmp_path_factory.mktemp("demo-var"),
        DJANGO_SETTINGS_MODULE=run_sh_settings_module(),
        DJANGO_SECRET_KEY=None,
        INSUREHUB_CREDENTIALS_KEY=None,
        SITE_URL=None,
    )
    port = _free_port()
    log = open(Path(tmp_path_factory.getbasetemp()) / "demo-runserver.log", "wb")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=REPO_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                log.close()
                pytest.fail(f"runserver did not come up; see {log.name}")
            time.sleep(0.25)
    yield base
    server.terminate()
    server.wait(timeout=15)
    log.close()


def test_a_missing_page_is_the_turkish_404_never_the_debug_page(demo_site):
    status, _, html = fetch(f"{demo_site}/boyle-bir-sayfa-yok/")
    assert status == 404
    assert "Sayfa bulunamadı" in html and 'lang="tr"' in html
    assert "DEBUG = True" not in html and "URLconf" not in html and "urlpatterns" not in html


STATIC_FILES = ["/static/insurehub/desk.css", "/static/insurehub/desk.js", "/static/admin/css/base.css"]


@pytest.mark.parametrize("path", STATIC_FILES)
def test_static_files_are_still_served_with_debug_off(demo_site, path):
    status, content_type, body = fetch(f"{demo_site}{path}")
    assert status == 200 and body
    assert content_type.split(";")[0] in {"text/css", "text/javascript", "application/javascript"}


def test_the_login_page_renders(demo_site):
    status, _, html = fetch(f"{demo_site}/giris/")
    assert status == 200 and "desk.css" in html


ENCRYPT = """
import django
django.setup()
from integrations.credentials import encrypt_credentials
print(encrypt_credentials({"user": "acente"}))
"""
DECRYPT = """
import sys
import django
django.setup()
from integrations.credentials import decrypt_credentials
print(decrypt_credentials(sys.stdin.read().strip())["user"])
"""


def test_the_demo_reads_credentials_stored_under_the_developer_settings(tmp_path):
    """Accounts seeded with DEBUG on (the developer settings) decrypt in the demo, with no key set."""
    local = server_env(tmp_path, DJANGO_SETTINGS_MODULE="insurehub.settings.local", INSUREHUB_CREDENTIALS_KEY=None)
    local.pop("DJANGO_SECRET_KEY")
    demo = {**local, "DJANGO_SETTINGS_MODULE": run_sh_settings_module()}

    def run(code: str, env: dict, stdin: str = "") -> str:
        command = [sys.executable, "-c", code]
        done = subprocess.run(command, cwd=REPO_ROOT, env=env, input=stdin, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run(DECRYPT, demo, stdin=run(ENCRYPT, local)) == "acente"


def test_the_demo_settings_refuse_a_production_machine(tmp_path):
    env = server_env(tmp_path, INSUREHUB_ENV="production", DJANGO_SETTINGS_MODULE=run_sh_settings_module())
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "INSUREHUB_ENV=production" in done.stderr
