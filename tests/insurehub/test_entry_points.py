"""The server entry points (WSGI, ASGI) default to production settings, and refuse to start without secrets.

Each case runs in a fresh interpreter: settings are read once per process, and the entry point's
default only applies when DJANGO_SETTINGS_MODULE is unset, as on a server that forgot it.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

REPO_ROOT = Path(__file__).resolve().parents[2]


def server_env(tmp_path: Path, **overrides: str | None) -> dict[str, str]:
    """The environment of a server process: no settings module chosen, fresh secrets, a throw-away var dir."""
    env = {
        **os.environ,
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
        "INSUREHUB_CREDENTIALS_KEY": Fernet.generate_key().decode(),
        "INSUREHUB_VAR_DIR": str(tmp_path),
        "SITE_URL": "https://desk.example.com",
    }
    for name in ("DJANGO_SETTINGS_MODULE", "INSUREHUB_USE_TEST_DB", "DJANGO_DEBUG", "DATABASE_URL", "REDIS_URL"):
        env.pop(name, None)
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def import_entry_point(env: dict[str, str], module: str) -> subprocess.CompletedProcess:
    code = (
        f"import {module}\n"
        "from django.conf import settings\n"
        "import os\n"
        "print(os.environ['DJANGO_SETTINGS_MODULE'], settings.DEBUG)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("module", ["insurehub.wsgi", "insurehub.asgi"])
def test_entry_point_without_a_settings_module_runs_production(tmp_path, module):
    """Imported with no DJANGO_SETTINGS_MODULE, the app is on production settings with DEBUG off."""
    result = import_entry_point(server_env(tmp_path), module)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["insurehub.settings.production", "False"]


@pytest.mark.parametrize("module", ["insurehub.wsgi", "insurehub.asgi"])
@pytest.mark.parametrize(
    "missing", ["DJANGO_SECRET_KEY", "INSUREHUB_CREDENTIALS_KEY"], ids=["no-secret", "no-credentials-key"]
)
def test_entry_point_without_a_settings_module_refuses_to_start_without_secrets(tmp_path, module, missing):
    """No settings module and a missing secret: start-up stops with ImproperlyConfigured, not a demo key."""
    result = import_entry_point(server_env(tmp_path, **{missing: None}), module)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and missing in result.stderr


CREDENTIALS_ROUND_TRIP = """
import django
django.setup()
from integrations.credentials import decrypt_credentials, encrypt_credentials
print(decrypt_credentials(encrypt_credentials({"user": "acente"}))["user"])
"""


def test_credentials_key_is_derived_from_the_secret_only_under_debug(tmp_path):
    """Without INSUREHUB_CREDENTIALS_KEY, the local settings (DEBUG) derive a key; with DEBUG off, nothing does."""
    local = server_env(tmp_path, DJANGO_SETTINGS_MODULE="insurehub.settings.local", INSUREHUB_CREDENTIALS_KEY=None)
    run = [sys.executable, "-c", CREDENTIALS_ROUND_TRIP]
    derived = subprocess.run(run, cwd=REPO_ROOT, env=local, capture_output=True, text=True, timeout=60, check=False)
    assert derived.returncode == 0, derived.stderr
    assert derived.stdout.strip() == "acente"

    refused = subprocess.run(
        run, cwd=REPO_ROOT, env={**local, "DJANGO_DEBUG": "0"}, capture_output=True, text=True, timeout=60, check=False
    )
    assert refused.returncode != 0
    assert "ImproperlyConfigured" in refused.stderr and "INSUREHUB_CREDENTIALS_KEY" in refused.stderr
