"""`manage.py seed_demo`: the demo's insurers and accounts come from the sandbox's manifest, not its Python."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from integrations.adapters.registry import registered_codes
from integrations.models import Insurer, InsurerAccount
from sandbox import DEFAULT_ACCOUNTS, demo_manifest, insurer_class
from tests.fifth_insurer import only_shipped_adapters

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_seed_demo_takes_urls_and_credentials_from_the_manifest(db, tmp_path):
    """Every registered insurer points at its port in the manifest; each sample agency holds its credentials."""
    manifest = tmp_path / "insurers.json"
    manifest.write_text(json.dumps(demo_manifest("127.0.0.1", 9500)), encoding="utf-8")
    call_command("seed_demo", "--manifest", str(manifest), stdout=io.StringIO())
    for code in registered_codes():
        insurer = Insurer.objects.get(code=code)
        assert insurer.base_url == f"http://127.0.0.1:{9500 + insurer_class(code).port_offset}"
        stored = [
            (account.agency_code, account.get_credentials())
            for account in InsurerAccount.objects.filter(insurer=insurer).order_by("agency__code")
        ]
        assert stored == [(sample["agency_code"], sample["credentials"]) for sample in DEFAULT_ACCOUNTS[code]]


def test_seed_demo_without_a_manifest_asks_the_sandbox_for_one(db, monkeypatch):
    """By hand, `seed_demo --sandbox-base-port N` runs `python -m sandbox --demo-manifest` itself."""
    only_shipped_adapters(monkeypatch)  # that sandbox process serves no test-only insurer
    call_command("seed_demo", "--sandbox-base-port", "9600", stdout=io.StringIO())
    assert Insurer.objects.get(code="deniz").base_url == f"http://127.0.0.1:{9600 + insurer_class('deniz').port_offset}"


@pytest.mark.parametrize(
    ("manifest", "named"),
    [
        ("[1,", "not JSON"),
        ("{}", "'insurers'"),
        ('{"insurers": {"anka": {"base_url": "ftp://x", "accounts": []}}}', "insurers.anka.base_url"),
        ('{"insurers": {"anka": {"base_url": "http://x", "accounts": [{"agency_code": 1}]}}}', "accounts[0]"),
        ('{"insurers": {"anka": {"base_url": "http://x", "accounts": []}}}', "no base URL for insurers"),
    ],
)
def test_a_bad_manifest_is_a_clear_error(db, tmp_path, manifest, named):
    path = tmp_path / "insurers.json"
    path.write_text(manifest, encoding="utf-8")
    with pytest.raises(CommandError, match=named.replace("[", r"\[").replace("]", r"\]")):
        call_command("seed_demo", "--manifest", str(path), stdout=io.StringIO())
    assert not Insurer.objects.exists()


def test_the_demo_seed_never_imports_the_sandbox():
    """The sandbox is not shipped: the command and its service load without it."""
    code = (
        "import sys, django; django.setup();"
        "import integrations.management.commands.seed_demo, integrations.demo;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sandbox'))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "insurehub.settings.test"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
