"""Overload stays inside the contract: every exchange takes a send slot of the account, and a call
whose slot lies beyond its deadline is refused here, never sent (issue 14, target 8).

Real sandbox insurers over loopback and the real shared send-rate state (the database). The
account's slots are "taken by others" by moving its theoretical arrival time (TAT) forward, as a
crowd of workers sharing the account would: the next free slot is then a known time away.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from integrations.answers.results import Quote
from integrations.answers.taxonomy import LOCAL_RATE_LIMIT, ErrorClass, ErrorKind, plain_message
from integrations.calling.calls import Endpoint, insurer_operation_run, new_reference
from integrations.calling.engine import IssuanceHistory
from integrations.insurers.cinar import adapter as cinar
from integrations.models import Attempt, RetryBudgetBucket, SendRateState
from integrations.pacing.send_rate import SharedSendRate
from integrations.pacing.shared_state import shared_state
from integrations.retry_policies import RetryPolicy, policy_for
from sandbox import DEFAULT_ACCOUNTS
from tests import samples

pytestmark = pytest.mark.django_db

SLOTS_TAKEN_FOR = 1000.0  # seconds: far beyond any operation's deadline


def _slots_taken(account_key: str, *, rate: float, seconds: float = SLOTS_TAKEN_FOR) -> float:
    """The account's next send slot is `seconds` away; returns the TAT written."""
    now = time.time()
    tat = now + seconds
    SendRateState.objects.update_or_create(
        account_key=account_key,
        defaults={"rate": rate, "known_good": rate, "tat": tat, "window_started": now},
    )
    return tat


def _endpoint(sandbox: dict, code: str, *, rate: float, key: str = "") -> Endpoint:
    account = DEFAULT_ACCOUNTS[code][0]
    return Endpoint(
        insurer_code=code,
        base_url=sandbox[code].base_url,
        credentials=account["credentials"],
        account_key=key or f"{code}:{account['agency_code']}",
        contracted_rate=rate,
    )


def test_a_quote_whose_slot_lies_beyond_its_deadline_is_refused_locally_and_not_sent(sandbox):
    endpoint = _endpoint(sandbox, "anka", rate=10.0)
    tat = _slots_taken(endpoint.account_key, rate=9.8)

    outcome = insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=samples.TRAFIK)

    error = outcome.error
    assert error is not None and error.provider_code == LOCAL_RATE_LIMIT
    assert error.kind is ErrorKind.THROTTLED and error.error_class is ErrorClass.RETRYABLE
    assert not error.ambiguous  # nothing was sent
    assert error.wait is not None and error.wait.seconds > policy_for("anka", "trafik_quote").deadline
    assert plain_message(error).startswith("Sigorta şirketi şu an yoğun")
    # The engine stopped at once: no retry can fit the deadline.
    assert (outcome.attempts, outcome.stop_reason) == (1, "deadline")
    # The insurer never saw it, the attempt log holds no row for it, the slot was not consumed,
    # the send rate learnt nothing and the retry budget counted no failed first attempt.
    assert sandbox["anka"].state.counts()["total_received"] == 0
    assert not Attempt.objects.exists()
    state = SendRateState.objects.get(account_key=endpoint.account_key)
    assert (state.tat, state.window_attempts, state.window_throttled) == (tat, 0, 0)
    assert not RetryBudgetBucket.objects.filter(insurer_code="anka", first_failures__gt=0).exists()
    # ...but on-call sees it: counted for the insurer, beside the retry budget's counters.
    assert shared_state().budget_snapshot("anka")["local_refusals"] == 1


def test_a_slot_that_leaves_no_time_to_send_is_refused_and_not_waited_for(sandbox, recording_sleep):
    """The slot lies inside the deadline, but too close to it for the call to be answered: the
    call is refused at once and the engine does not sleep towards a retry that cannot fit."""
    endpoint = _endpoint(sandbox, "anka", rate=10.0)
    deadline = policy_for("anka", "trafik_quote").deadline
    _slots_taken(endpoint.account_key, rate=9.8, seconds=deadline - 0.5)

    outcome = insurer_operation_run(
        endpoint=endpoint, operation="trafik_quote", data=samples.TRAFIK, sleep=recording_sleep
    )

    assert outcome.error is not None and outcome.error.provider_code == LOCAL_RATE_LIMIT
    assert (outcome.attempts, outcome.stop_reason) == (1, "deadline")
    assert recording_sleep.waits == []
    assert sandbox["anka"].state.counts()["total_received"] == 0


def test_a_slot_within_the_deadline_is_waited_for_then_sent(sandbox):
    """The paced call waits for its slot (a short one here) and goes: no refusal below the deadline."""
    endpoint = _endpoint(sandbox, "anka", rate=10.0)
    _slots_taken(endpoint.account_key, rate=9.8, seconds=0.3)

    outcome = insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=samples.TRAFIK)

    assert outcome.ok, outcome.to_json()
    assert sandbox["anka"].state.counts()["total_received"] == 1


def test_cinar_token_calls_take_send_slots_so_the_insurer_sees_no_call_beyond_the_contract(sandbox):
    """Each quote here needs a token call first (the cache is emptied): two exchanges per quote.
    Paced per operation, the pair would go back to back and break a tight contract; paced per
    exchange, the sandbox's own token bucket at the contract throttles none of them."""
    rate, burst = 4.0, policy_for("cinar", "trafik_quote").rate_burst
    account = DEFAULT_ACCOUNTS["cinar"][0]
    # The contract's bucket holds one call more than the platform's burst: the few milliseconds
    # between a slot granted and the call's arrival must not decide the test. Paced per operation,
    # the token+quote pairs would still break it by several calls.
    sandbox["cinar"].state.add_accounts([{**account, "rate_per_second": rate, "burst": burst + 1}])
    endpoint = _endpoint(sandbox, "cinar", rate=rate)

    outcomes = []
    for _ in range(2 * burst):
        cinar.clear_token_cache()
        outcomes.append(insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=samples.TRAFIK))

    assert all(o.ok for o in outcomes), [o.to_json() for o in outcomes if not o.ok]
    counts = sandbox["cinar"].state.counts()
    assert counts["total_throttled"] == 0
    assert counts["received"]["token"] == 2 * burst and counts["received"]["trafik_quote"] >= 2 * burst


class _CrowdAfterFirst(SharedSendRate):
    """The real shared send rate; after the first slot of the run, the rest of the account's
    slots go to other workers (the TAT moves far ahead), as in a burst of the whole agency."""

    def __init__(self, *, contracted_rate: float) -> None:
        super().__init__(contracted_rate=contracted_rate)
        self.slots: list[float] = []

    def acquire(self, account_key: str, *, policy: RetryPolicy, max_wait: float | None, count: bool = False) -> float:
        wait = super().acquire(account_key, policy=policy, max_wait=max_wait, count=count)
        self.slots.append(wait)
        _slots_taken(account_key, rate=policy.rate_ceiling)
        return wait


def _deniz_issue(sandbox: dict, send_rate: SharedSendRate) -> tuple[Any, str]:
    endpoint = _endpoint(sandbox, "deniz", rate=10.0)
    quote = insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=samples.TRAFIK)
    assert quote.ok, quote.to_json()
    SendRateState.objects.all().delete()
    reference = new_reference()
    outcome = insurer_operation_run(
        endpoint=endpoint,
        operation="issue_policy",
        data={"quote_no": quote.result_as(Quote).quote_no, "payment_token": samples.PAYMENT_TOKEN},
        reference=reference,
        send_rate=send_rate,
    )
    return outcome, reference


def test_a_deniz_poll_refused_locally_after_the_send_leaves_the_issuance_unknown(sandbox):
    """The send went (Deniz answered 202 PROCESSING); every poll and lookup after it is refused
    for want of a slot. Whatever Deniz decided stands there: the outcome is unknown, never failed."""
    sandbox["deniz"].state.configure(issuance_processing_seconds=0.5)

    outcome, _ = _deniz_issue(sandbox, _CrowdAfterFirst(contracted_rate=10.0))

    assert not outcome.ok
    assert outcome.outcome == "unknown"
    assert outcome.error.error_class is not ErrorClass.PERMANENT
    received = sandbox["deniz"].state.counts()["received"]
    assert received.get("issue_policy") == 1
    polls = Attempt.objects.filter(insurer_code="deniz", operation="issue_policy", call="poll")
    assert not polls.exists()  # refused locally: never sent, so never recorded


def test_a_deniz_send_refused_locally_is_a_clean_not_sent(sandbox):
    """Refused before anything left: no request at Deniz, nothing to ask about, not unknown."""
    endpoint = _endpoint(sandbox, "deniz", rate=10.0)
    quote = insurer_operation_run(endpoint=endpoint, operation="trafik_quote", data=samples.TRAFIK)
    assert quote.ok, quote.to_json()
    _slots_taken(endpoint.account_key, rate=9.8)

    outcome = insurer_operation_run(
        endpoint=endpoint,
        operation="issue_policy",
        data={"quote_no": quote.result.quote_no, "payment_token": samples.PAYMENT_TOKEN},
        reference=new_reference(),
    )

    assert outcome.error is not None and outcome.error.provider_code == LOCAL_RATE_LIMIT
    assert outcome.outcome == ""
    assert not outcome.error.ambiguous
    assert sandbox["deniz"].state.counts()["received"].get("issue_policy", 0) == 0


def test_a_lookup_refused_locally_before_a_re_send_leaves_the_issuance_unknown(sandbox):
    """An earlier run may have sent this issuance: the insurer must be asked before anything is
    sent again. When even the question has no slot, nothing is sent and nothing is concluded."""
    endpoint = _endpoint(sandbox, "anka", rate=10.0)
    _slots_taken(endpoint.account_key, rate=9.8)

    outcome = insurer_operation_run(
        endpoint=endpoint,
        operation="issue_policy",
        data={"quote_no": "AK-Q-UNKNOWN", "payment_token": samples.PAYMENT_TOKEN},
        reference=new_reference(),
        history=IssuanceHistory(maybe_sent=True, last_sent_ago=1.0),
    )

    assert outcome.outcome == "unknown"
    assert outcome.error is not None and outcome.error.error_class is not ErrorClass.PERMANENT
    assert outcome.error.provider_code == LOCAL_RATE_LIMIT
    assert sandbox["anka"].state.counts()["total_received"] == 0


def _unreachable_state():
    """The Redis backend pointed at a port nothing listens on: every step fails to connect."""
    import socket

    from integrations.pacing.shared_state import RedisSharedState

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return RedisSharedState(f"redis://127.0.0.1:{port}/0")


def test_a_call_that_cannot_be_paced_is_not_sent_and_is_a_short_wait_not_a_crash(sandbox):
    """Redis (or the database) restarting: no slot can be had, so the call does not go; it is a
    local wait like a throttle, not an unclassified failure that would use up a record's tries."""
    endpoint = _endpoint(sandbox, "anka", rate=10.0)

    outcome = insurer_operation_run(
        endpoint=endpoint,
        operation="trafik_quote",
        data=samples.TRAFIK,
        send_rate=SharedSendRate(contracted_rate=10.0, state=_unreachable_state()),
    )

    error = outcome.error
    assert error is not None and error.provider_code == "PACING_UNAVAILABLE"
    assert error.kind is ErrorKind.THROTTLED and not error.ambiguous and error.is_local_refusal
    assert outcome.attempts == 1
    assert sandbox["anka"].state.counts()["total_received"] == 0


def test_an_answer_is_kept_when_the_retry_budget_cannot_be_written(sandbox):
    """The insurer said yes; a budget that cannot be reached must not turn that into a failure."""
    from integrations.pacing.retry_budget import SharedRetryBudget

    endpoint = _endpoint(sandbox, "anka", rate=10.0)

    outcome = insurer_operation_run(
        endpoint=endpoint,
        operation="trafik_quote",
        data=samples.TRAFIK,
        budget=SharedRetryBudget(state=_unreachable_state()),
    )

    assert outcome.ok, outcome.to_json()
    assert Attempt.objects.filter(insurer_code="anka", ok=True).count() == 1
