"""The operator probe at the edges: back to back at low traffic, a refused retry said out loud,
an issuance whose outcome is unknown, lookups the budget never refuses."""

from __future__ import annotations

import json
import time

import pytest

from integrations.adapters.registry import registered_codes
from integrations.models import Attempt, Insurer, OperationPolicy
from integrations.pacing.shared_state import shared_state
from integrations.retry_policies import clear_policy_cache
from sandbox.registry import insurer_class as sandbox_insurer
from tests import samples
from tests.integrations.management.test_insurer_call import creds, probe

pytestmark = pytest.mark.django_db

INSURERS = registered_codes()


def call(sandbox, code: str, operation: str, data: dict) -> tuple[int, dict]:
    return probe(
        code,
        operation,
        "--base-url",
        sandbox[code].base_url,
        "--data",
        json.dumps(data),
        "--credentials",
        creds(code),
    )


def quote_no(sandbox, code: str) -> str:
    status, report = call(sandbox, code, "trafik_quote", samples.TRAFIK)
    assert status == 0, report
    return report["result"]["quote_no"]


def issue(sandbox, code: str, number: str) -> tuple[int, dict]:
    return call(sandbox, code, "issue_policy", {"quote_no": number, "payment_token": samples.PAYMENT_TOKEN})


def drain_budget(code: str) -> None:
    state = shared_state()
    while state.budget_try_spend(code):
        pass


@pytest.mark.parametrize("code", INSURERS)
def test_probes_back_to_back_with_one_off_faults_all_get_their_retry(sandbox, code):
    """Ten probes within seconds, each first attempt failing once: every one is retried and ok."""
    for i in range(10):
        sandbox[code].state.add_faults([{"operation": "trafik_quote", **sandbox_insurer(code).transient_faults[i % 3]}])
        status, report = call(sandbox, code, "trafik_quote", samples.TRAFIK)
        assert (status, report["status"], report["attempts"]) == (0, "ok", 2), (i, report)
        assert "retry_refused" not in report
    assert sandbox[code].state.counts()["received"]["trafik_quote"] == 20


@pytest.mark.parametrize("code", INSURERS)
def test_retries_that_fail_too_are_not_refused_at_low_traffic(sandbox, code):
    """Every first attempt fails and every third probe's retry fails as well: still nothing is
    refused — the budget bites only when failures are a large share of real volume."""
    for i in range(12):
        fault = sandbox_insurer(code).transient_faults[i % 3]
        sandbox[code].state.add_faults([{"operation": "trafik_quote", **fault, "times": 2 if i % 3 == 0 else 1}])
        status, report = call(sandbox, code, "trafik_quote", samples.TRAFIK)
        assert "retry_refused" not in report, (i, report)
        assert status == 0 and report["attempts"] == (3 if i % 3 == 0 else 2), (i, report)


def test_a_refused_retry_is_said_in_the_json_and_the_attempt_log(sandbox):
    """With the insurer's budget spent, the probe says why it did not retry."""
    drain_budget("anka")
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "BAD_GATEWAY"}])
    status, report = call(sandbox, "anka", "trafik_quote", samples.TRAFIK)
    assert status == 1
    assert report["status"] == "failed" and report["attempts"] == 1
    assert report["retry_refused"] == "budget"
    assert report["error_kind"] == "unavailable" and report["provider_code"] == "BAD_GATEWAY"
    row = Attempt.objects.get(operation="trafik_quote")
    assert row.wait_reason == "retry-refused:budget"


def test_a_lookup_after_a_lost_answer_is_never_refused_by_the_budget(sandbox, seeded_accounts):
    """Commit-then-drop with the budget spent: asking Boğaziçi is not a retry, so it is asked,
    and the policy the lost answer made is the probe's result."""
    number = quote_no(sandbox, "bogazici")
    drain_budget("bogazici")
    sandbox["bogazici"].state.add_faults([{"operation": "issue_policy", "fault": "commit_then_drop"}])
    status, report = issue(sandbox, "bogazici", number)
    assert status == 0, report
    counts = sandbox["bogazici"].state.counts()
    assert counts["policies_by_quote"] == {number: [report["result"]["policy_no"]]}
    assert counts["received"]["issue_policy"] == 1 and counts["received"]["issue_lookup"] == 1


@pytest.mark.parametrize("code", ["anka", "cinar"])
def test_a_deduplicated_resend_is_a_lookup_the_budget_never_refuses(sandbox, code):
    """At Anka and Çınar the re-send under the same key is the question: free of the budget."""
    number = quote_no(sandbox, code)
    drain_budget(code)
    sandbox[code].state.add_faults([{"operation": "issue_policy", "fault": "commit_then_drop"}])
    status, report = issue(sandbox, code, number)
    assert status == 0, report
    assert sandbox[code].state.counts()["policies_by_quote"] == {number: [report["result"]["policy_no"]]}


def test_bogazici_unknown_outcome_when_the_deadline_leaves_no_room_to_settle(sandbox, seeded_accounts):
    """A Policelestir slower than the read timeout, and a deadline shorter than the settling
    time: the probe reports an unknown outcome and never re-sends blindly."""
    OperationPolicy.objects.update_or_create(
        insurer=Insurer.objects.get(code="bogazici"),
        operation="issue_policy",
        defaults={
            "max_attempts": 5,
            "base_delay": 0.05,
            "max_delay": 0.2,
            "deadline": 4.0,
            "attempt_timeout": 1.0,
            "settling_seconds": 10.0,
        },
    )
    clear_policy_cache()
    number = quote_no(sandbox, "bogazici")
    sandbox["bogazici"].state.add_faults([{"operation": "issue_policy", "fault": "latency", "seconds": 2.0}])
    status, report = issue(sandbox, "bogazici", number)
    assert status == 1
    assert report["status"] == "failed" and report["outcome"] == "unknown"
    assert report["error_class"] == "retryable" and report["error_kind"] == "timeout"
    time.sleep(2.0)  # the slow send commits at the insurer
    counts = sandbox["bogazici"].state.counts()
    assert counts["received"]["issue_policy"] == 1
    assert len(counts["policies_by_quote"][number]) == 1
    clear_policy_cache()


def test_deniz_lagging_polls_end_in_the_policy(sandbox):
    """404 and 503 from the poll cluster right after the 202 are waited out."""
    number = quote_no(sandbox, "deniz")
    sandbox["deniz"].state.add_faults(
        [
            {"operation": "issue_poll", "fault": "error", "code": "NOT_FOUND", "times": 2},
            {"operation": "issue_poll", "fault": "error", "code": "SERVICE_UNAVAILABLE", "times": 1},
        ]
    )
    status, report = issue(sandbox, "deniz", number)
    assert status == 0, report
    assert sandbox["deniz"].state.counts()["policies_by_quote"] == {number: [report["result"]["policy_no"]]}
