"""The probe's policy documents and policy periods, at every registered insurer.

`manage.py insurer_call <insurer> policy_document --data '{"policy_no": …}'` prints the usual
last line with `result: {"policy_no", "content_type", "bytes", "sha256"}`; `issue_policy` and
`policy_status` results carry `starts_on` and `ends_on` as ISO dates whatever the insurer's
own format (Çınar writes day.month.year). Everything here goes over real HTTP to the sandbox.
"""

from __future__ import annotations

import hashlib
import json
import re
from io import StringIO

import pytest
from django.core.management import call_command

from integrations.adapters.registry import registered_codes
from sandbox import DEFAULT_ACCOUNTS
from tests import samples

pytestmark = pytest.mark.django_db

ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def probe(sandbox: dict, code: str, operation: str, data: dict) -> tuple[int, dict]:
    out = StringIO()
    args = [code, operation, "--base-url", sandbox[code].base_url, "--data", json.dumps(data)]
    args += ["--credentials", json.dumps(DEFAULT_ACCOUNTS[code][0]["credentials"])]
    try:
        call_command("insurer_call", *args, stdout=out)
        status = 0
    except SystemExit as exit_:
        assert isinstance(exit_.code, int), exit_.code  # the command exits with a number
        status = exit_.code
    return status, json.loads(out.getvalue().strip().splitlines()[-1])


def issued_policy(sandbox: dict, code: str) -> dict:
    status, quote = probe(sandbox, code, "trafik_quote", samples.TRAFIK)
    assert status == 0, quote
    status, issued = probe(
        sandbox, code, "issue_policy", {"quote_no": quote["result"]["quote_no"], "payment_token": samples.PAYMENT_TOKEN}
    )
    assert status == 0, issued
    return issued["result"]


@pytest.mark.parametrize("code", registered_codes())
def test_issue_and_status_report_the_policy_period_as_iso_dates(sandbox, code):
    issued = issued_policy(sandbox, code)
    at_insurer = sandbox[code].state.ledger.policies[issued["policy_no"]]
    assert issued["starts_on"] == at_insurer.starts_on.isoformat() and ISO_DATE.match(issued["starts_on"])
    assert issued["ends_on"] == at_insurer.ends_on.isoformat() and ISO_DATE.match(issued["ends_on"])

    status, report = probe(sandbox, code, "policy_status", {"policy_no": issued["policy_no"]})
    assert status == 0, report
    assert (report["result"]["starts_on"], report["result"]["ends_on"]) == (issued["starts_on"], issued["ends_on"])


@pytest.mark.parametrize("code", registered_codes())
def test_policy_document_prints_size_and_digest_of_the_insurers_pdf(sandbox, code):
    policy_no = issued_policy(sandbox, code)["policy_no"]
    status, report = probe(sandbox, code, "policy_document", {"policy_no": policy_no})
    assert status == 0, report
    assert report["status"] == "ok"
    result = report["result"]
    assert set(result) == {"policy_no", "content_type", "bytes", "sha256"}
    assert result["policy_no"] == policy_no and result["content_type"] == "application/pdf"
    # What the insurer holds for that policy, byte for byte.
    state = sandbox[code].state
    agency = DEFAULT_ACCOUNTS[code][0]["agency_code"]
    with state.lock:
        pdf = state.ledger.document(
            {"policy_no": policy_no}, agency=agency, known_only=True, insurer_name=sandbox_insurer_name(sandbox, code)
        )
    assert result["bytes"] == len(pdf) and result["sha256"] == hashlib.sha256(pdf).hexdigest()


@pytest.mark.parametrize("code", registered_codes())
def test_policy_document_not_ready_is_waited_for_not_failed(sandbox, code):
    """The insurer says "not ready yet" for two seconds: the probe waits as asked and succeeds."""
    sandbox[code].state.configure(document_delay_seconds=2)
    policy_no = issued_policy(sandbox, code)["policy_no"]
    status, report = probe(sandbox, code, "policy_document", {"policy_no": policy_no})
    assert status == 0, report
    assert report["result"]["policy_no"] == policy_no and report["result"]["bytes"] > 0
    assert sandbox[code].state.counts()["received"]["policy_document"] >= 2


@pytest.mark.parametrize("code", registered_codes())
def test_policy_document_of_an_unknown_policy_is_a_permanent_not_found(sandbox, code):
    prefix = sandbox[code].insurer.prefix
    status, report = probe(sandbox, code, "policy_document", {"policy_no": f"{prefix}-P-NONE-000001"})
    assert status == 1
    assert (report["status"], report["error_class"], report["error_kind"]) == ("failed", "permanent", "not_found")
    assert report["result"] is None


def sandbox_insurer_name(sandbox: dict, code: str) -> str:
    """The name the sandbox prints on its PDFs (its insurer class's display name)."""
    return sandbox[code].insurer.document_name
