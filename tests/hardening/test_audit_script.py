"""scripts/audit.sh: how it judges a pip-audit report (AUDIT_REPORT skips running pip-audit itself)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CLEAN = {"name": "django", "version": "5.2.19", "vulns": []}
VULNERABLE = {
    "name": "requests",
    "version": "2.0.0",
    "vulns": [{"id": "PYSEC-2023-74", "fix_versions": ["2.31.0"], "aliases": ["CVE-2023-32681"]}],
}
SKIPPED = {"name": "tenacity", "skip_reason": "Dependency not found on PyPI and could not be audited: tenacity (9.2.1)"}


def judge(tmp_path: Path, dependencies: list[dict], **env: str) -> subprocess.CompletedProcess:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"dependencies": dependencies, "fixes": []}))
    return subprocess.run(
        [shutil.which("bash") or "/bin/bash", "scripts/audit.sh"],
        cwd=REPO_ROOT,
        env={**os.environ, "AUDIT_REPORT": str(report), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_known_vulnerability_fails_naming_package_advisory_and_fix(tmp_path):
    result = judge(tmp_path, [CLEAN, VULNERABLE])
    assert result.returncode == 1
    assert "VULNERABLE requests==2.0.0: PYSEC-2023-74 (CVE-2023-32681); fixed in 2.31.0" in result.stdout


def test_clean_audit_passes(tmp_path):
    result = judge(tmp_path, [CLEAN])
    assert result.returncode == 0 and "audited 1 of 1 dependencies; 0 known vulnerabilities" in result.stdout


@pytest.mark.parametrize(("strict", "status"), [("0", 0), ("1", 3)])
def test_unreachable_service_is_reported_and_fails_only_when_strict(tmp_path, strict, status):
    result = judge(tmp_path, [CLEAN, SKIPPED], AUDIT_STRICT=strict)
    assert result.returncode == status
    assert "NOT AUDITED: 1 dependencies could not be checked" in result.stdout


def test_vulnerability_fails_even_when_some_could_not_be_checked(tmp_path):
    assert judge(tmp_path, [VULNERABLE, SKIPPED]).returncode == 1
