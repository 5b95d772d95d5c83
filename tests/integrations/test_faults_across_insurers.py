"""Transport faults and garbage answers, the same way at every insurer (real HTTP, sandbox faults)."""

from __future__ import annotations

import pytest

from integrations.adapters.registry import registered_codes
from integrations.calling.calls import insurer_operation_run, new_reference
from integrations.models import Attempt, Insurer, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from tests import samples

pytestmark = pytest.mark.django_db
INSURERS = registered_codes()


@pytest.fixture
def fast_policies(seeded_accounts):
    """Short timeouts and backoff so hang/drop faults resolve in about a second."""
    for insurer in Insurer.objects.all():
        for operation in ("trafik_quote", "issue_policy"):
            OperationPolicy.objects.update_or_create(
                insurer=insurer,
                operation=operation,
                defaults={
                    "max_attempts": 3,
                    "base_delay": 0.05,
                    "max_delay": 0.2,
                    "deadline": 15.0,
                    "attempt_timeout": 1.0,
                },
            )
    clear_policy_cache()
    yield
    clear_policy_cache()


def trafik(endpoint_for, code, **kwargs):
    return insurer_operation_run(endpoint=endpoint_for(code), operation="trafik_quote", data=samples.TRAFIK, **kwargs)


def business_calls(server) -> int:
    counts = server.state.counts()
    return counts["total_received"] - counts["received"].get("token", 0)


@pytest.mark.parametrize("code", INSURERS)
@pytest.mark.parametrize("status", [502, 503])
def test_html_gateway_page_is_retryable_and_retried(endpoint_for, sandbox, fast_policies, code, status):
    """An HTML error page from a gateway is classified unavailable and the retry succeeds."""
    sandbox[code].state.add_faults([{"operation": "trafik_quote", "fault": "html", "http_status": status}])
    outcome = trafik(endpoint_for, code)
    assert outcome.ok and outcome.attempts == 2
    first = Attempt.objects.filter(call="main").order_by("started_at").first()
    assert first.error_class == "retryable" and first.http_status == status


@pytest.mark.parametrize("code", INSURERS)
def test_connection_reset_is_retryable(endpoint_for, sandbox, fast_policies, code):
    """A connection reset before any answer is a retryable connection error."""
    sandbox[code].state.add_faults([{"operation": "trafik_quote", "fault": "reset"}])
    outcome = trafik(endpoint_for, code)
    assert outcome.ok and outcome.attempts == 2
    first = Attempt.objects.filter(call="main").order_by("started_at").first()
    assert (first.error_kind, first.provider_code) == ("connection", "CONNECTION_RESET")


@pytest.mark.parametrize("code", INSURERS)
def test_hang_becomes_a_timeout_within_the_attempt_timeout(endpoint_for, sandbox, fast_policies, code):
    """An insurer that sends no byte is cut at the policy's attempt timeout, then retried."""
    sandbox[code].state.add_faults([{"operation": "trafik_quote", "fault": "hang", "seconds": 3}])
    outcome = trafik(endpoint_for, code)
    assert outcome.ok and outcome.attempts == 2
    first = Attempt.objects.filter(call="main").order_by("started_at").first()
    assert (first.error_kind, first.provider_code) == ("timeout", "READ_TIMEOUT")
    assert 900 <= first.latency_ms < 2500


@pytest.mark.parametrize("code", INSURERS)
@pytest.mark.parametrize("fault", ["empty", "garbage"])
def test_unreadable_answers_are_classified_never_a_crash(endpoint_for, sandbox, fast_policies, code, fault):
    """Empty, truncated or mistyped bodies become a classified failure with the raw sample kept."""
    sandbox[code].state.add_faults([{"operation": "trafik_quote", "fault": fault, "times": 10}])
    outcome = trafik(endpoint_for, code)
    assert not outcome.ok
    assert outcome.error.error_class in {"unknown", "retryable"}
    assert outcome.attempts <= 3
    assert Attempt.objects.filter(call="main", ok=False).count() == outcome.attempts


@pytest.mark.parametrize("code", INSURERS)
def test_a_valid_answer_with_a_wrong_content_type_is_still_read(endpoint_for, sandbox, fast_policies, code):
    """A real answer mislabelled text/html is read by its body: refusing it would only cost a retry."""
    sandbox[code].state.add_faults([{"operation": "trafik_quote", "fault": "wrong_content_type"}])
    outcome = trafik(endpoint_for, code)
    assert outcome.ok and outcome.attempts == 1


@pytest.mark.parametrize("code", INSURERS)
@pytest.mark.parametrize("drop", ["reset", "hang"])
def test_commit_then_drop_yields_exactly_one_policy(endpoint_for, sandbox, fast_policies, code, drop):
    """The insurer issued but the answer was lost: the platform ends with that one policy, never two."""
    quote = trafik(endpoint_for, code)
    assert quote.ok, quote.error
    sandbox[code].state.add_faults(
        [{"operation": "issue_policy", "fault": "commit_then_drop", "drop": drop, "seconds": 3}]
    )
    outcome = insurer_operation_run(
        endpoint=endpoint_for(code),
        operation="issue_policy",
        data={"quote_no": quote.result.quote_no, "payment_token": samples.PAYMENT_TOKEN},
        reference=new_reference(),
    )
    assert outcome.ok, outcome.error
    assert sandbox[code].state.counts()["policies_by_quote"][quote.result.quote_no] == [outcome.result.policy_no]


@pytest.mark.parametrize("code", INSURERS)
def test_every_call_received_is_an_attempt_recorded(endpoint_for, sandbox, fast_policies, code):
    """Calls the insurer counted equal rows in the attempt log, faults included."""
    sandbox[code].state.add_faults(
        [
            {"operation": "trafik_quote", "fault": "html", "http_status": 502},
            {"operation": "trafik_quote", "fault": "reset", "after": 2},
        ]
    )
    for _ in range(3):
        trafik(endpoint_for, code)
    assert sandbox[code].state.counts()["total_received"] == Attempt.objects.count()
