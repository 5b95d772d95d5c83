"""The retry engine: runs one operation against one insurer under its retry policy.

This is the only layer that retries an insurer call (requests/urllib3 retries are off, and
django-q2 never re-delivers into it). Built on tenacity, with the decisions that make failing
well possible:

* permanent: exactly one attempt; unknown: at most `unknown_max_attempts` in all, loudly logged;
* retryable: full-jitter exponential backoff, capped; a throttle is not a failure: it does not
  use up a try, and the insurer's wait signal wins over our backoff;
* nothing waits past the operation's deadline;
* the retry budget may refuse a retry (a dead insurer must not drown the rest);
* issuance: after any ambiguous failure the insurer is asked for the state before sending again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from tenacity import RetryCallState, Retrying, retry_if_exception

from insurehub.dbpool import sleep_released
from integrations.adapters.base import InsurerAdapter
from integrations.operations import Operation
from integrations.policies import RetryPolicy
from integrations.recording import AttemptRecorder
from integrations.results import Address, Policy, Quote
from integrations.taxonomy import ErrorClass, InsurerError
from integrations.waits import full_jitter_backoff, signalled_wait_with_spread


class RetryBudget(Protocol):
    """Caps retries as a share of successful first attempts, per insurer (shared state)."""

    def record_first_attempt(self, insurer_code: str, *, ok: bool) -> None: ...

    def try_spend(self, insurer_code: str, ratio: float) -> bool: ...

    def refund(self, insurer_code: str) -> None:
        """A retry that succeeded gives its unit back: the budget caps wasted calls, so once the
        insurer is back its backlog drains at the send rate, not at the budget's trickle."""


class SendRate(Protocol):
    """Paces calls per agency account; learns from throttles (shared state)."""

    def acquire(self, account_key: str, *, policy: RetryPolicy, max_wait: float | None) -> float: ...

    def observe(self, account_key: str, *, throttled: bool, policy: RetryPolicy) -> None: ...


class UnlimitedBudget:
    def record_first_attempt(self, insurer_code: str, *, ok: bool) -> None:
        return None

    def try_spend(self, insurer_code: str, ratio: float) -> bool:
        return True

    def refund(self, insurer_code: str) -> None:
        return None


class UnpacedRate:
    def acquire(self, account_key: str, *, policy: RetryPolicy, max_wait: float | None) -> float:
        return 0.0

    def observe(self, account_key: str, *, throttled: bool, policy: RetryPolicy) -> None:
        return None


@dataclass
class Outcome:
    """What one operation came to, after all its attempts."""

    result: Quote | Address | Policy | None
    error: InsurerError | None
    attempts: int
    stop_reason: str = ""
    http_status: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def provider_code(self) -> str:
        """What the insurer last said: its own code, else the HTTP status of its answer."""
        if self.error:
            return self.error.provider_code
        return str(self.http_status) if self.http_status else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "status": "ok" if self.ok else "failed",
            "error_class": self.error.error_class.value if self.error else None,
            "error_kind": self.error.kind.value if self.error else None,
            "provider_code": self.provider_code,
            "attempts": self.attempts,
            "result": self.result.to_json() if self.result is not None else None,
        }


@dataclass
class WaitDecision:
    seconds: float
    reason: str


def next_wait(
    policy: RetryPolicy, *, failures: int, error: InsurerError, rng: random.Random | None = None
) -> WaitDecision:
    """How long to wait before the next try: the insurer's signal, else full-jitter backoff.

    Shared by the in-process engine and the durable background state machine, so a retry
    waits the same way whichever layer schedules it.
    """
    if error.wait is not None:
        return WaitDecision(
            signalled_wait_with_spread(error.wait, spread=policy.throttle_spread, rng=rng),
            f"signal:{error.wait.source}",
        )
    return WaitDecision(
        full_jitter_backoff(max(failures, 1), base=policy.base_delay, cap=policy.max_delay, rng=rng),
        "backoff:full-jitter",
    )


def may_retry(policy: RetryPolicy, *, error: InsurerError, attempts: int, failures: int, throttles: int) -> str:
    """Empty string when another try is allowed, else why not (kept as the stop reason)."""
    if error.error_class is ErrorClass.PERMANENT:
        return "permanent"
    if error.error_class is ErrorClass.UNKNOWN and attempts >= policy.unknown_max_attempts:
        return "unknown-cap"
    if failures >= policy.max_attempts:
        return "max-attempts"
    # A throttle does not use up a try, but the insurer can not keep us forever either.
    if throttles >= 2 * policy.max_attempts:
        return "max-throttle-waits"
    return ""


class _Counters:
    def __init__(self) -> None:
        self.failures = 0
        self.throttles = 0
        self.maybe_committed = False
        # The next attempt is a retry paid for from the retry budget (refunded if it succeeds).
        self.budget_spent = False
        self.last_error: InsurerError | None = None
        self.previous_error: InsurerError | None = None
        self.stop_reason = ""


def run_operation(
    *,
    adapter: InsurerAdapter,
    operation: str,
    data: Mapping[str, Any],
    policy: RetryPolicy,
    recorder: AttemptRecorder,
    reference: str = "",
    resume_issuance: bool = False,
    budget: RetryBudget | None = None,
    send_rate: SendRate | None = None,
    sleep: Callable[[float], None] = sleep_released,
    rng: random.Random | None = None,
    on_retry: Callable[[int, InsurerError, float], None] | None = None,
    attempt_limit: int | None = None,
    attempt_offset: int = 0,
    budget_spent: bool = False,
) -> Outcome:
    """Run `operation` until it succeeds, fails for good, or its policy says stop.

    `resume_issuance` says an earlier run may already have sent this issuance (a worker died
    mid-call): the insurer is then asked for the state before the first send.

    `attempt_limit=1` is for durable background records: their state machine is the retry
    layer (it writes `next_attempt_at` from `next_wait`), so the engine must not retry too.
    `attempt_offset` is how many tries the record already had: attempt numbers continue from
    there, and only the very first try counts as a first attempt for the retry budget.
    `budget_spent` says the caller paid for this first call from the retry budget (a durable
    retry); like the engine's own retries, it is refunded if it succeeds.
    """
    op = Operation(operation)
    budget = budget or UnlimitedBudget()
    send_rate = send_rate or UnpacedRate()
    channel = adapter.channel
    ctx = channel.context
    ctx.deadline_at = time.monotonic() + policy.deadline
    ctx.attempt_timeout = policy.attempt_timeout
    counters = _Counters()
    counters.maybe_committed = resume_issuance
    counters.budget_spent = budget_spent

    def attempt_once(engine_attempt: int) -> Quote | Address | Policy:
        attempt_no = attempt_offset + engine_attempt
        ctx.attempt_no = attempt_no
        send_rate.acquire(ctx.account_key, policy=policy, max_wait=channel.remaining())
        try:
            if op is Operation.ISSUE_POLICY:
                result = _issue_safely(adapter, data, reference, counters)
            else:
                result = adapter.run(op.value, data)
        except InsurerError as error:
            counters.budget_spent = False  # a failed retry keeps its unit spent
            send_rate.observe(ctx.account_key, throttled=error.is_throttle, policy=policy)
            if attempt_no == 1:
                budget.record_first_attempt(ctx.insurer_code, ok=False)
            counters.previous_error, counters.last_error = counters.last_error, error
            if error.is_throttle:
                counters.throttles += 1
            else:
                counters.failures += 1
            raise
        send_rate.observe(ctx.account_key, throttled=False, policy=policy)
        if attempt_no == 1:
            budget.record_first_attempt(ctx.insurer_code, ok=True)
        if counters.budget_spent:
            budget.refund(ctx.insurer_code)
        return result

    def wait(state: RetryCallState) -> float:
        error = counters.last_error
        assert error is not None
        return next_wait(policy, failures=counters.failures, error=error, rng=rng).seconds

    def stop(state: RetryCallState) -> bool:
        error = counters.last_error
        assert error is not None
        reason = may_retry(
            policy,
            error=error,
            attempts=state.attempt_number,
            failures=counters.failures,
            throttles=counters.throttles,
        )
        if not reason and attempt_limit is not None and state.attempt_number >= attempt_limit:
            reason = "attempt-limit"
        remaining = channel.remaining()
        if not reason and remaining is not None and state.upcoming_sleep >= remaining - 0.05:
            reason = "deadline"
        # A throttle retry is paced by the insurer itself; only failure retries spend budget.
        if not reason and not error.is_throttle:
            if budget.try_spend(ctx.insurer_code, policy.retry_budget_ratio):
                counters.budget_spent = True
            else:
                reason = "retry-budget"
        counters.stop_reason = reason
        return bool(reason)

    def before_sleep(state: RetryCallState) -> None:
        """Write the chosen wait on the failed attempt's row before sleeping, so it is never lost."""
        error = counters.last_error
        assert error is not None
        why = f"signal:{error.wait.source}" if error.wait else "backoff:full-jitter"
        recorder.annotate_wait(state.upcoming_sleep, why)
        recorder.flush()
        if on_retry is not None:
            on_retry(state.attempt_number + 1, error, state.upcoming_sleep)

    retrying = Retrying(
        stop=stop,
        wait=wait,
        retry=retry_if_exception(
            lambda exc: isinstance(exc, InsurerError) and exc.error_class is not ErrorClass.PERMANENT
        ),
        before_sleep=before_sleep,
        sleep=sleep,
        reraise=True,
    )
    attempts = 0
    try:
        for attempt in retrying:
            with attempt:
                attempts = attempt.retry_state.attempt_number
                result = attempt_once(attempts)
        return Outcome(result=result, error=None, attempts=attempts, http_status=channel.last_http_status)
    except InsurerError as error:
        if error.provider_code == "DEADLINE_EXCEEDED" and counters.previous_error is not None:
            # The deadline struck before anything was sent: report what the insurer last said.
            error, attempts = counters.previous_error, attempts - 1
        return Outcome(
            result=None,
            error=error,
            attempts=attempts,
            stop_reason=counters.stop_reason or ("permanent" if error.error_class is ErrorClass.PERMANENT else ""),
            http_status=error.http_status,
        )
    finally:
        recorder.flush()


def _issue_safely(adapter: InsurerAdapter, data: Mapping[str, Any], reference: str, counters: _Counters) -> Policy:
    """Issue at most once: after an ambiguous failure, look before sending again.

    Two policies for one quote is the worst bug this product can have. The reference was
    stored by the caller before the first try, so every send and every lookup carries it.
    """
    if not reference:
        raise ValueError("issuance needs a stable reference stored before the first try")
    if counters.maybe_committed:
        found = adapter.find_issued_policy(data, reference=reference)
        if found is not None:
            return found
    try:
        return adapter.issue_policy(data, reference=reference)
    except InsurerError as error:
        if error.ambiguous:
            counters.maybe_committed = True
        raise
