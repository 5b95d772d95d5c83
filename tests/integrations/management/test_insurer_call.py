"""The operator probe `manage.py insurer_call`: its arguments and its one-line JSON are an interface."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from integrations.adapters.registry import registered_codes
from sandbox import DEFAULT_ACCOUNTS
from tests import samples

pytestmark = pytest.mark.django_db
REPO = Path(__file__).resolve().parents[3]


def probe(*args: str) -> tuple[int, dict]:
    out = StringIO()
    try:
        call_command("insurer_call", *args, stdout=out)
        code = 0
    except SystemExit as exit_:
        assert isinstance(exit_.code, int), exit_.code  # the command exits with a number
        code = exit_.code
    last_line = out.getvalue().strip().splitlines()[-1]
    return code, json.loads(last_line)


def creds(code: str) -> str:
    return json.dumps(DEFAULT_ACCOUNTS[code][0]["credentials"])


@pytest.mark.parametrize("code", registered_codes())
def test_probe_prints_ok_json_and_exits_zero(sandbox, code):
    """A successful trafik quote prints status ok with the normalised result, exit 0."""
    status, report = probe(
        code,
        "trafik_quote",
        "--base-url",
        sandbox[code].base_url,
        "--data",
        json.dumps(samples.TRAFIK),
        "--credentials",
        creds(code),
    )
    assert status == 0
    assert set(report) == {"status", "error_class", "error_kind", "provider_code", "attempts", "result"}
    assert report["status"] == "ok" and report["error_class"] is None and report["error_kind"] is None
    assert report["attempts"] == 1
    assert set(report["result"]) >= {"quote_no", "premium", "currency", "valid_until"}
    assert isinstance(report["result"]["premium"], str)


def test_probe_reports_a_permanent_failure_and_exits_one(sandbox):
    """A business refusal prints status failed with class, kind and the raw code, exit 1."""
    sandbox["bogazici"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "BS-300"}])
    status, report = probe(
        "bogazici",
        "trafik_quote",
        "--base-url",
        sandbox["bogazici"].base_url,
        "--data",
        json.dumps(samples.TRAFIK),
        "--credentials",
        creds("bogazici"),
    )
    assert status == 1
    assert report == {
        "status": "failed",
        "error_class": "permanent",
        "error_kind": "business_reject",
        "provider_code": "BS-300",
        "attempts": 1,
        "result": None,
    }


def test_probe_issues_with_the_given_reference(sandbox):
    """Issuance through the probe carries the caller's reference; a second run with it issues nothing new."""
    base, cred = sandbox["cinar"].base_url, creds("cinar")
    _, quote = probe(
        "cinar", "trafik_quote", "--base-url", base, "--data", json.dumps(samples.TRAFIK), "--credentials", cred
    )
    data = json.dumps({"quote_no": quote["result"]["quote_no"], "payment_token": "tok_1", "reference": "REF-PROBE-1"})
    _, first = probe("cinar", "issue_policy", "--base-url", base, "--data", data, "--credentials", cred)
    _, second = probe("cinar", "issue_policy", "--base-url", base, "--data", data, "--credentials", cred)
    assert first["status"] == second["status"] == "ok"
    assert first["result"]["policy_no"] == second["result"]["policy_no"]
    assert sandbox["cinar"].state.counts()["issued_total"] == 1


def test_probe_uses_the_stored_account_with_agency(seeded_accounts, sandbox):
    """Without --base-url/--credentials the stored account is used; --agency picks one."""
    status, report = probe("anka", "trafik_quote", "--data", json.dumps(samples.TRAFIK), "--agency", "ACENTE2")
    assert status == 0 and report["status"] == "ok"
    assert sandbox["anka"].state.counts()["received_by_account"] == {"ACENTE2": 1}


def test_probe_refuses_ambiguous_stored_account(seeded_accounts):
    """Two agencies have Anka accounts: the probe asks which one instead of guessing."""
    with pytest.raises(CommandError, match="--agency"):
        call_command("insurer_call", "anka", "trafik_quote", "--data", "{}")


def test_probe_refuses_bad_json(sandbox):
    """--data that is not a JSON object is an error naming the option."""
    with pytest.raises(CommandError, match="--data"):
        call_command("insurer_call", "anka", "trafik_quote", "--base-url", sandbox["anka"].base_url, "--data", "[1")


def test_probe_as_a_process_prints_json_last_line(sandbox, tmp_path):
    """Run as an operator would: a separate process, exit status and the JSON as the last stdout line."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "insurehub.settings.test", "INSUREHUB_VAR_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=REPO, env=env, check=True)
    sandbox["deniz"].state.add_faults(
        [{"operation": "trafik_quote", "fault": "error", "code": "UNDERWRITING_DECLINED"}]
    )
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "insurer_call",
            "deniz",
            "trafik_quote",
            "--base-url",
            sandbox["deniz"].base_url,
            "--data",
            json.dumps(samples.TRAFIK),
            "--credentials",
            creds("deniz"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert (report["error_class"], report["error_kind"], report["provider_code"]) == (
        "permanent",
        "business_reject",
        "UNDERWRITING_DECLINED",
    )
