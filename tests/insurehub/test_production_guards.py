"""A server cannot start half-configured: SITE_URL required, the developer settings refused (issue 21)."""

from __future__ import annotations

import pytest

from tests.insurehub.test_entry_points import REPO_ROOT, server_env

SETTINGS_SITE_URL = "import django; django.setup(); from django.conf import settings; print(settings.SITE_URL)"


def run(env: dict[str, str], *args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("site_url", [None, "", "desk.example.com", "http://desk.example.com"])
def test_production_refuses_a_missing_or_plain_http_site_url(tmp_path, site_url):
    """E-mail links would point at 127.0.0.1 or go out over plain http."""
    env = server_env(tmp_path, DJANGO_SETTINGS_MODULE="insurehub.settings.production", SITE_URL=site_url)
    result = run(env, "-c", SETTINGS_SITE_URL)
    assert result.returncode != 0 and "SITE_URL must be set" in result.stderr


def test_production_takes_an_https_site_url_without_its_trailing_slash(tmp_path):
    env = server_env(
        tmp_path, DJANGO_SETTINGS_MODULE="insurehub.settings.production", SITE_URL="https://desk.example.com/"
    )
    result = run(env, "-c", SETTINGS_SITE_URL)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "https://desk.example.com"


@pytest.mark.parametrize("command", ["qcluster", "migrate", "check"])
def test_manage_py_refuses_the_developer_settings_on_a_production_machine(tmp_path, command):
    """INSUREHUB_ENV=production and no DJANGO_SETTINGS_MODULE: manage.py stops before loading anything."""
    result = run(server_env(tmp_path, INSUREHUB_ENV="production"), "manage.py", command)
    assert result.returncode != 0
    assert "refusing the developer settings" in result.stderr


def test_the_developer_settings_refuse_a_production_machine_whoever_loads_them(tmp_path):
    env = server_env(tmp_path, INSUREHUB_ENV="production", DJANGO_SETTINGS_MODULE="insurehub.settings.local")
    result = run(env, "-c", SETTINGS_SITE_URL)
    assert result.returncode != 0 and "developer settings" in result.stderr


def test_elsewhere_manage_py_still_defaults_to_the_developer_settings(tmp_path):
    result = run(server_env(tmp_path, INSUREHUB_ENV=None), "manage.py", "check")
    assert result.returncode == 0, result.stderr
