""".env.example names every environment variable the settings read."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT

READ = re.compile(r'(?:environ\.get|env\.get|env_int|env_bool|environ\[|env\[)\(?\s*"([A-Z][A-Z0-9_]+)"')


def listed() -> set[str]:
    text = (REPO_ROOT / ".env.example").read_text(encoding="utf-8")
    return {line.split("=", 1)[0] for line in text.splitlines() if line and not line.startswith("#")}


def test_every_variable_the_settings_read_is_listed_with_a_comment():
    """A variable someone adds to settings and forgets here fails this test."""
    names = set()
    for module in ("base.py", "production.py", "local.py"):
        names |= set(READ.findall((REPO_ROOT / "insurehub" / "settings" / module).read_text(encoding="utf-8")))
    names |= {"AWS_S3_ENDPOINT_URL", "AWS_S3_REGION_NAME", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
    assert names and not names - listed(), sorted(names - listed())
    lines = (REPO_ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        if line and not line.startswith("#"):
            assert lines[index - 1].startswith("# "), f"{line} has no comment line above it"
