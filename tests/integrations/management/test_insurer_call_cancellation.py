"""The probe's cancellation and production list, at every registered insurer.

`manage.py insurer_call <insurer> cancel_policy --data '{"policy_no", "reason", "effective_on",
"reference"}'` prints the usual last line with the contract's platform result
`{"policy_no", "status": "CANCELLED", "refund", "cancelled_on"}`; `policy_list --data
'{"issued_from", "issued_to"}'` prints `{"policies": [...]}`, every page's items in the insurer's
order, whatever its own words and date format. Everything here goes over real HTTP to the sandbox.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from integrations.adapters.registry import registered_codes
from sandbox import DEFAULT_ACCOUNTS

pytestmark = pytest.mark.django_db

REPORT_KEYS = {"status", "error_class", "error_kind", "provider_code", "attempts", "result"}


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


def seed(sandbox: dict, code: str, suffix: str, **changes) -> str:
    """A policy of ACENTE1's from the insurer's portal: 1629.27 TRY, 2026-06-01 .. 2027-06-01."""
    policy_no = f"{sandbox[code].insurer.prefix}-P-{suffix}"
    policy = {
        "policy_no": policy_no,
        "status": "ACTIVE",
        "agency": "ACENTE1",
        "product": "trafik",
        "premium": "1629.27",
        "starts_on": "2026-06-01",
        "ends_on": "2027-06-01",
        "issued_on": "2026-11-02",
    }
    sandbox[code].state.seed_policies([{**policy, **changes}])
    return policy_no


@pytest.mark.parametrize("code", registered_codes())
def test_cancel_policy_prints_the_contracts_result(sandbox, code):
    """The contract's example, at every insurer: 812.40 back, cancelled from 2026-12-01; a second
    run under the same reference prints the same result and cancels nothing more."""
    policy_no = seed(sandbox, code, "PROBE-IPTAL")
    data = {
        "policy_no": policy_no,
        "reason": "customer_request",
        "effective_on": "2026-12-01",
        "reference": "REF-IPTAL-1",
    }
    status, report = probe(sandbox, code, "cancel_policy", data)
    assert status == 0, report
    assert set(report) == REPORT_KEYS and report["status"] == "ok"
    assert report["result"] == {
        "policy_no": policy_no,
        "status": "CANCELLED",
        "refund": "812.40",
        "cancelled_on": "2026-12-01",
    }
    status, again = probe(sandbox, code, "cancel_policy", data)
    assert status == 0 and again["result"] == report["result"]
    assert sandbox[code].state.counts()["cancellations_by_policy"] == {policy_no: 1}


@pytest.mark.parametrize("code", registered_codes())
def test_cancel_policy_prints_a_refusal(sandbox, code):
    policy_no = seed(sandbox, code, "PROBE-BITTI", status="EXPIRED")
    data = {"policy_no": policy_no, "reason": "other", "effective_on": "2026-12-01"}
    status, report = probe(sandbox, code, "cancel_policy", data)
    assert status == 1
    assert (report["status"], report["error_class"], report["error_kind"], report["result"]) == (
        "failed",
        "permanent",
        "business_reject",
        None,
    )


@pytest.mark.parametrize("code", registered_codes())
def test_policy_list_prints_the_policies(sandbox, code):
    """Newest issue first, the platform's words and ISO dates, premium a decimal string, an empty
    quote number for a policy issued on the insurer's portal."""
    older = seed(sandbox, code, "PROBE-ESKI", issued_on="2026-11-02", product="dask")
    newer = seed(sandbox, code, "PROBE-YENI", issued_on="2026-11-20", status="CANCELLED", premium="4312.50")
    seed(sandbox, code, "PROBE-EKIM", issued_on="2026-10-31")
    status, report = probe(sandbox, code, "policy_list", {"issued_from": "2026-11-01", "issued_to": "2026-11-30"})
    assert status == 0, report
    assert set(report) == REPORT_KEYS and report["status"] == "ok"
    period = {"starts_on": "2026-06-01", "ends_on": "2027-06-01"}
    assert report["result"] == {
        "policies": [
            {
                "policy_no": newer,
                "quote_no": "",
                "product": "trafik",
                "status": "CANCELLED",
                **period,
                "premium": "4312.50",
            },
            {"policy_no": older, "quote_no": "", "product": "dask", "status": "ACTIVE", **period, "premium": "1629.27"},
        ]
    }


@pytest.mark.parametrize("code", registered_codes())
def test_policy_list_prints_a_refused_range(sandbox, code):
    status, report = probe(sandbox, code, "policy_list", {"issued_from": "2026-11-01", "issued_to": "2026-12-15"})
    assert status == 1 and (report["error_class"], report["error_kind"]) == ("permanent", "validation")
