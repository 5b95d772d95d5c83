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

import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception

from insurehub.dbpool import sleep_released
from insurehub.masking import mask_and_cut
from integrations.adapters.base import InsurerAdapter
from integrations.answers.results import Address, Cancellation, Document, Policy, PolicyListing, Quote
from integrations.answers.taxonomy import ErrorClass, ErrorKind, InsurerError, WaitHint
from integrations.attempts.recording import AttemptRecorder
from integrations.calling.channel import ExchangeStopped
from integrations.operations import Operation
from integrations.pacing.send_rate import pacing_unavailable
from integrations.pacing.waits import full_jitter_backoff, signalled_wait_with_spread
from integrations.retry_policies import RetryPolicy

logger = logging.getLogger("integrations.calling")

ResultT = TypeVar("ResultT", Quote, Address, Policy, Document, Cancellation, PolicyListing)


class RetryBudget(Protocol):
    """Caps retries as a share of successful first attempts, per insurer (shared state)."""

    def record_first_attempt(self, insurer_code: str, *, ok: bool, ratio: float) -> None: ...

    def try_spend(self, insurer_code: str) -> bool: ...

    def refund(self, insurer_code: str) -> None:
        """A retry that succeeded gives its unit back: the budget caps wasted calls, so once the
        insurer is back its backlog drains at the send rate, not at the budget's trickle."""


class SendRate(Protocol):
    """Paces calls per agency account; learns from throttles (shared state)."""

    def acquire(
        self, account_key: str, *, policy: RetryPolicy, max_wait: float | None, count: bool = False
    ) -> float: ...

    def observe(self, account_key: str, *, throttled: bool, policy: RetryPolicy, counted: bool = False) -> None: ...


class UnlimitedBudget:
    def record_first_attempt(self, insurer_code: str, *, ok: bool, ratio: float = 0.2) -> None:
        return None

    def try_spend(self, insurer_code: str) -> bool:
        return True

    def refund(self, insurer_code: str) -> None:
        return None


class UnpacedRate:
    def acquire(self, account_key: str, *, policy: RetryPolicy, max_wait: float | None, count: bool = False) -> float:
        return 0.0

    def observe(self, account_key: str, *, throttled: bool, policy: RetryPolicy, counted: bool = False) -> None:
        return None


# The least time a paced call keeps before its deadline for the exchange itself (capped by the
# attempt timeout): a send slot later than that is refused locally rather than taken.
SEND_WINDOW_SECONDS = 1.0


class _SendRatePacer:
    """The channel's pacer for one operation: every exchange — the main call and each helper
    call (Çınar's token, Deniz's polls and lookups, a document download) — takes a send slot of
    the account, and every answer the insurer gave feeds the shared send rate. A call refused
    locally (its slot beyond the deadline) was never answered, so the rate learns nothing from it."""

    __slots__ = ("account_key", "max_slot_wait", "policy", "send_rate")

    def __init__(
        self, send_rate: SendRate, account_key: str, policy: RetryPolicy, *, max_slot_wait: float | None = None
    ) -> None:
        self.send_rate, self.account_key, self.policy = send_rate, account_key, policy
        self.max_slot_wait = max_slot_wait

    def before_send(self, call: Any, *, remaining: float | None) -> None:
        # A slot that leaves the call no time to be answered is as good as none: the call would
        # reach the insurer (using up the contract) and time out here. Keep a send window.
        window = min(SEND_WINDOW_SECONDS, self.policy.attempt_timeout)
        max_wait = None if remaining is None else max(remaining - window, 0.0)
        if self.max_slot_wait is not None:
            max_wait = self.max_slot_wait if max_wait is None else min(max_wait, self.max_slot_wait)
        # The slot counts the attempt too (one statement): the answer then writes only a throttle.
        try:
            self.send_rate.acquire(self.account_key, policy=self.policy, max_wait=max_wait, count=True)
        except (InsurerError, ExchangeStopped):
            raise
        except Exception as exc:
            # Redis or the database restarting: no slot can be had, so nothing is sent. Not a
            # crash of the try (which would use up an unclassified failure's few tries).
            logger.warning("account=%s: send-rate state unavailable, call not sent: %r", self.account_key, exc)
            raise pacing_unavailable(exc) from exc

    def after_answer(self, call: Any, *, throttled: bool) -> None:
        # The insurer answered: whatever the bookkeeping does, the answer must reach the caller.
        try:
            self.send_rate.observe(self.account_key, throttled=throttled, policy=self.policy, counted=True)
        except Exception as exc:
            logger.error(
                "account=%s: send-rate state unavailable, answer not counted: %r", self.account_key, exc, exc_info=True
            )


@dataclass
class Outcome:
    """What one operation came to, after all its attempts."""

    result: Quote | Address | Policy | Document | Cancellation | PolicyListing | None
    error: InsurerError | None
    attempts: int
    stop_reason: str = ""
    http_status: int | None = None
    # Issuance only: "unknown" when an earlier send may have taken effect and the insurer has not
    # told us whether it did. Such an issuance is never a plain failure: it is asked about again.
    outcome: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    def result_as(self, kind: type[ResultT]) -> ResultT:
        """The result of an operation that succeeded, as the kind that operation answers with (a
        `Quote` for a quote, a `Policy` for an issuance or a status): a TypeError for anything else."""
        if not isinstance(self.result, kind):
            raise TypeError(f"expected a {kind.__name__} result, got {type(self.result).__name__}")
        return self.result

    @property
    def retry_refused(self) -> str:
        """Why another try was refused although the failure was worth one ("budget"), else ""."""
        return RETRY_REFUSED.get(self.stop_reason, "")

    @property
    def provider_code(self) -> str:
        """What the insurer last said: its own code, else the HTTP status of its answer."""
        if self.error:
            return self.error.provider_code
        return str(self.http_status) if self.http_status else ""

    def to_json(self) -> dict[str, Any]:
        report = {
            "status": "ok" if self.ok else "failed",
            "error_class": self.error.error_class.value if self.error else None,
            "error_kind": self.error.kind.value if self.error else None,
            "provider_code": self.provider_code,
            "attempts": self.attempts,
            "result": self.result.to_json() if self.result is not None else None,
        }
        if self.outcome:
            report["outcome"] = self.outcome
        if self.retry_refused:
            report["retry_refused"] = self.retry_refused
        return report


# Stop reasons that refuse a try the failure itself would have allowed, by what refused it.
RETRY_REFUSED = {"retry-budget": "budget"}

# provider_code of the engine's own "not yet": a "not issued" lookup inside the settling time.
NOT_SETTLED = "NOT_SETTLED"


def is_wait_not_failure(error: InsurerError) -> bool:
    """A throttle, a document the insurer has not produced yet, or an issuance waiting out the
    insurer's settling time: the insurer asked for a wait, so the try is not used up."""
    return error.is_throttle or error.kind is ErrorKind.NOT_READY or error.provider_code == NOT_SETTLED


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
    if error.wait is not None and error.provider_code == NOT_SETTLED:
        # Our own clock, not a crowd to spread: ask again as soon as the "no" can be final.
        return WaitDecision(error.wait.seconds, f"signal:{error.wait.source}")
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
    # A throttle (or a settling wait) does not use up a try, but can not keep us forever either.
    if throttles >= 2 * policy.max_attempts:
        return "max-throttle-waits"
    return ""


class _Counters:
    def __init__(self) -> None:
        self.failures = 0
        self.throttles = 0
        self.maybe_committed = False
        # When the last issuance send left (time.monotonic()), for the settling time.
        self.last_sent_at: float | None = None
        # The next attempt is a retry paid for from the retry budget (refunded if it succeeds).
        self.budget_spent = False
        self.last_error: InsurerError | None = None
        self.previous_error: InsurerError | None = None
        self.stop_reason = ""


@dataclass(frozen=True)
class IssuanceHistory:
    """What the platform knows of an issuance's earlier sends, handed to the engine once.

    `maybe_sent`: an earlier send may have reached the insurer (a worker died mid-call, or its
    answer was lost), so the insurer is asked for the state before anything is sent.
    `last_sent_ago`: seconds since that send left, by the database's clock (never a worker's:
    a skewed machine would shorten the insurer's settling time), for whether a "not issued"
    answer is final yet. `reference_refused`: the insurer refused a send under this reference
    for sure (a replay after a fix); it is still asked first, and only when it has nothing under
    the old reference does the next send get `new_reference()`, which stores it before returning.
    `on_send` is called just before every send, so a durable caller can store that a send may be
    under way, and when.
    """

    maybe_sent: bool = False
    last_sent_ago: float | None = None
    reference_refused: bool = False
    on_send: Callable[[], None] | None = None
    new_reference: Callable[[], str] | None = None


class _RetryRefused(Exception):
    """Inside an attempt: the budget refused a re-send that a lookup had just cleared."""

    def __init__(self, error: InsurerError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True)
class Tries:
    """How one operation is tried, handed to the engine as one value: its retry policy, where
    each attempt is written, the retry budget and send rate it shares with every worker, how it
    sleeps, and — for a durable record, whose state machine is the retry layer — where this run
    stands among the record's tries.

    `attempt_limit=1` is for durable background records: their state machine writes
    `next_attempt_at` from `next_wait`, so the engine must not retry too. `attempt_offset` is
    how many tries the record already had: attempt numbers continue from there, and only the
    very first try counts as a first attempt for the retry budget. `budget_spent` says the
    caller paid for this first call from the retry budget (a durable retry); like the engine's
    own retries, it is refunded if it succeeds.
    """

    policy: RetryPolicy
    recorder: AttemptRecorder
    budget: RetryBudget = field(default_factory=UnlimitedBudget)
    send_rate: SendRate = field(default_factory=UnpacedRate)
    sleep: Callable[[float], None] = sleep_released
    rng: random.Random | None = None
    on_retry: Callable[[int, InsurerError, float], None] | None = None
    attempt_limit: int | None = None
    attempt_offset: int = 0
    budget_spent: bool = False


def run_operation(
    *,
    adapter: InsurerAdapter,
    operation: str,
    data: Mapping[str, Any],
    tries: Tries,
    reference: str = "",
    history: IssuanceHistory | None = None,
) -> Outcome:
    """Run `operation` until it succeeds, fails for good, or its policy says stop.

    `history` is what an issuance's (or a cancellation's) earlier tries left (see
    `IssuanceHistory`); none for a first send.
    """
    op = Operation(operation)
    history = history or IssuanceHistory()
    counters = _Counters()
    counters.maybe_committed = history.maybe_sent
    if history.maybe_sent:
        ago = history.last_sent_ago if history.last_sent_ago is not None else 0.0
        counters.last_sent_at = time.monotonic() - ago
    counters.budget_spent = tries.budget_spent
    call: _OneCall | _Issuance | _Cancellation
    if op is Operation.ISSUE_POLICY:
        call = _Issuance(adapter, data, reference, tries.policy, tries.budget, counters, history)
    elif op is Operation.CANCEL_POLICY:
        call = _Cancellation(adapter, data, reference, counters, history)
    else:
        call = _OneCall(adapter, op, data)
    return _OperationRun(adapter, call, tries, counters).outcome()


class _OneCall:
    """An operation that moves no money (a quote, an address, a status, a document, a list):
    each try is the adapter's call, and a failure says all there is to know about it."""

    moves_money = False

    def __init__(self, adapter: InsurerAdapter, op: Operation, data: Mapping[str, Any]) -> None:
        self.adapter, self.op, self.data = adapter, op, data

    def attempt(self) -> Quote | Address | Policy | Document | Cancellation | PolicyListing:
        return self.adapter.run(self.op.value, self.data)


class _OperationRun:
    """One run of one operation: tenacity's loop, with this run's decisions as its hooks —
    what an attempt counts for (`_attempt`), how long to wait (`_wait`), whether to try again
    (`_stop`), what is written before sleeping (`_before_sleep`) — and what the run came to."""

    def __init__(
        self, adapter: InsurerAdapter, call: _OneCall | _Issuance | _Cancellation, tries: Tries, counters: _Counters
    ) -> None:
        self.call, self.tries, self.counters = call, tries, counters
        self.channel = adapter.channel
        self.ctx = self.channel.context
        self.ctx.deadline_at = time.monotonic() + tries.policy.deadline
        self.ctx.attempt_timeout = tries.policy.attempt_timeout

    def outcome(self) -> Outcome:
        tries, channel = self.tries, self.channel
        # Every exchange of this run is paced (the channel calls the pacer), helper calls included.
        # A durable record's try (attempt_limit=1) waits for a slot no longer than one attempt's
        # timeout: its lease is sized for a few requests, not for a wait up to a long deadline, and
        # a record refused here goes PENDING until its slot, holding no worker meanwhile.
        previous_pacer = channel.pacer
        channel.pacer = _SendRatePacer(
            tries.send_rate,
            self.ctx.account_key,
            tries.policy,
            max_slot_wait=tries.policy.attempt_timeout if tries.attempt_limit == 1 else None,
        )
        retrying = Retrying(
            stop=self._stop,
            wait=self._wait,
            retry=retry_if_exception(
                lambda exc: isinstance(exc, InsurerError) and exc.error_class is not ErrorClass.PERMANENT
            ),
            before_sleep=self._before_sleep,
            sleep=tries.sleep,
            reraise=True,
        )
        attempts = 0
        try:
            for attempt in retrying:
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    result = self._attempt(attempts)
            return Outcome(result=result, error=None, attempts=attempts, http_status=channel.last_http_status)
        except _RetryRefused as refused:
            # The lookup said "not issued" (final), and the re-send it cleared was refused: nothing
            # is at the insurer, so this is a plain failure with its reason.
            tries.recorder.annotate_wait(0.0, "retry-refused:budget")
            return Outcome(
                result=None,
                error=refused.error,
                attempts=attempts,
                stop_reason="retry-budget",
                http_status=refused.error.http_status,
            )
        except InsurerError as error:
            return self._failed(error, attempts)
        finally:
            channel.pacer = previous_pacer
            tries.recorder.flush()

    def _failed(self, error: InsurerError, attempts: int) -> Outcome:
        counters = self.counters
        not_sent = error.provider_code == "DEADLINE_EXCEEDED" or error.is_local_refusal
        if not_sent and counters.previous_error is not None:
            # The deadline struck (or no send slot fitted before it) before anything was sent in
            # this try: report what the insurer last said.
            error, attempts = counters.previous_error, attempts - 1
        unknown = self.call.moves_money and counters.maybe_committed
        if unknown:
            # Whatever the last answer was, a policy may exist: never a permanent failure.
            error = _outcome_still_unknown(error)
        return Outcome(
            result=None,
            error=error,
            attempts=attempts,
            stop_reason=counters.stop_reason or ("permanent" if error.error_class is ErrorClass.PERMANENT else ""),
            http_status=error.http_status,
            outcome="unknown" if unknown else "",
        )

    def _attempt(self, engine_attempt: int) -> Quote | Address | Policy | Document | Cancellation | PolicyListing:
        tries, counters, insurer_code = self.tries, self.counters, self.ctx.insurer_code
        attempt_no = tries.attempt_offset + engine_attempt
        self.ctx.attempt_no = attempt_no
        try:
            result = self.call.attempt()
        except InsurerError as error:
            counters.budget_spent = False  # a failed retry keeps its unit spent
            # A call refused locally for want of a send slot never reached the insurer: it says
            # nothing about the insurer's health, so the retry budget does not count it.
            if attempt_no == 1 and not error.is_local_refusal:
                tries.budget.record_first_attempt(insurer_code, ok=False, ratio=tries.policy.retry_budget_ratio)
            counters.previous_error, counters.last_error = counters.last_error, error
            if is_wait_not_failure(error):
                counters.throttles += 1
            else:
                counters.failures += 1
            raise
        # The insurer answered yes: a failed budget write must not turn that into a crash (an
        # issuance's policy would look unknown and be asked about again for nothing).
        try:
            if attempt_no == 1:
                tries.budget.record_first_attempt(insurer_code, ok=True, ratio=tries.policy.retry_budget_ratio)
            if counters.budget_spent:
                tries.budget.refund(insurer_code)
        except Exception as exc:
            logger.error(
                "insurer=%s: retry budget unavailable, success not counted: %r", insurer_code, exc, exc_info=True
            )
        return result

    def _wait(self, state: RetryCallState) -> float:
        error = self.counters.last_error
        assert error is not None
        return next_wait(self.tries.policy, failures=self.counters.failures, error=error, rng=self.tries.rng).seconds

    def _stop(self, state: RetryCallState) -> bool:
        tries, counters = self.tries, self.counters
        error = counters.last_error
        assert error is not None
        reason = may_retry(
            tries.policy,
            error=error,
            attempts=state.attempt_number,
            failures=counters.failures,
            throttles=counters.throttles,
        )
        if not reason and tries.attempt_limit is not None and state.attempt_number >= tries.attempt_limit:
            reason = "attempt-limit"
        remaining = self.channel.remaining()
        if not reason and remaining is not None and state.upcoming_sleep >= remaining - 0.05:
            reason = "deadline"
        if not reason and error.is_local_refusal:
            # The account's next slot lies beyond what is left: after that wait no time would be
            # left to send, so a retry can never fit. The agent is told "busy" now, not later.
            reason = "deadline"
        # A throttle retry is paced by the insurer itself, and a lookup is not a retry: only a
        # failure retry that sends again spends budget (an issuance pays when it re-sends).
        if not reason and not is_wait_not_failure(error) and not (self.call.moves_money and counters.maybe_committed):
            if tries.budget.try_spend(self.ctx.insurer_code):
                counters.budget_spent = True
            else:
                reason = "retry-budget"
        counters.stop_reason = reason
        if reason == "retry-budget":
            tries.recorder.annotate_wait(0.0, "retry-refused:budget")
        return bool(reason)

    def _before_sleep(self, state: RetryCallState) -> None:
        """Write the chosen wait on the failed attempt's row before sleeping, so it is never lost."""
        error = self.counters.last_error
        assert error is not None
        why = f"signal:{error.wait.source}" if error.wait else "backoff:full-jitter"
        self.tries.recorder.annotate_wait(state.upcoming_sleep, why)
        self.tries.recorder.flush()
        if self.tries.on_retry is not None:
            self.tries.on_retry(state.attempt_number + 1, error, state.upcoming_sleep)


class _Issuance:
    """Issue at most once: after an ambiguous failure, look before sending again.

    Two policies for one quote is the worst bug this product can have. The reference was stored
    by the caller before the first try, so every send and every lookup carries it. A lookup is
    not a retry (the budget never refuses one); a "not issued" answer is final only once the
    insurer's settling time since the last send has passed, because that send may still be
    running there; and a re-send at an insurer that does not deduplicate is a real retry, paid
    for from the budget. Until the insurer says, the outcome is unknown, never "failed".
    """

    moves_money = True

    def __init__(
        self,
        adapter: InsurerAdapter,
        data: Mapping[str, Any],
        reference: str,
        policy: RetryPolicy,
        budget: RetryBudget,
        counters: _Counters,
        history: IssuanceHistory,
    ) -> None:
        if not reference:
            raise ValueError("issuance needs a stable reference stored before the first try")
        if history.reference_refused and history.new_reference is None:
            raise ValueError("a refused reference can only be replaced by one the caller stores")
        self.adapter, self.data, self.reference = adapter, data, reference
        self.policy, self.budget, self.counters = policy, budget, counters
        self.on_send, self.new_reference = history.on_send, history.new_reference
        self.reference_refused = history.reference_refused

    def attempt(self) -> Policy:
        counters = self.counters
        if counters.maybe_committed:
            found = self._look_up()
            if found is not None:
                return found
            if not self.reference_refused:
                self._clear_resend()
        if self.reference_refused:
            # Asked under the old reference, and the insurer holds nothing there: its refusal of
            # that send stands (the insurer would answer a repeat with it), so the new send goes
            # under a new reference, stored by the caller before it leaves. It is a first send of
            # that reference, not a retry; every earlier send was answered, so none is settling.
            assert self.new_reference is not None
            self.reference = self.new_reference()
            self.adapter.channel.context.reference = self.reference
            self.reference_refused = False
            counters.maybe_committed = False
        if self.on_send is not None:
            self.on_send()
        counters.last_sent_at = time.monotonic()
        was_ambiguous = counters.maybe_committed
        try:
            return self.adapter.issue_policy(self.data, reference=self.reference)
        except InsurerError as error:
            if error.ambiguous:
                counters.maybe_committed = True
                if error.error_class is ErrorClass.PERMANENT:
                    raise _outcome_still_unknown(error) from error  # ask again, never "failed"
            elif was_ambiguous and not error.settles_issuance:
                # A deduplicating insurer's "no" to the re-send that was our question: it answers
                # the question, not whether the first send took effect — that one may still be
                # running there, and commit after this refusal (found by the fault-space search).
                # Only the insurer's own verdict on the request (Deniz's REJECTED) settles it.
                raise _outcome_still_unknown(error) from error
            else:
                counters.maybe_committed = False
            raise

    def _look_up(self) -> Policy | None:
        """The insurer's answer about our issuance: its policy, None for "never issued", or a
        raise. A refusal of the look-up itself (validation, business, "expired", "not found",
        authentication) answers the look-up, never whether money moved: the outcome stays
        unknown and the next try asks again. Only the insurer's own verdict on the issuance
        (`settles_issuance`: Deniz's REJECTED request) proves there is no policy."""
        try:
            return self.adapter.find_issued_policy(self.data, reference=self.reference)
        except InsurerError as error:
            if not error.settles_issuance:
                raise _outcome_still_unknown(error) from error
            if self.reference_refused:
                return None  # the refusal we knew of: nothing under the old reference
            self.counters.maybe_committed = False
            raise

    def _clear_resend(self) -> None:
        """The lookup found nothing: may we send again now? Raises when not (yet)."""
        counters = self.counters
        if counters.last_sent_at is not None:
            settle_left = counters.last_sent_at + self.policy.settling_seconds - time.monotonic()
            if settle_left > 0:
                raise InsurerError(
                    ErrorKind.TIMEOUT,
                    provider_code=NOT_SETTLED,
                    message=f"Şirket önceki isteği {settle_left:.0f} sn daha sonuçlandırabilir; sonra sorulacak.",
                    wait=WaitHint(settle_left, "settling"),
                    ambiguous=True,
                )
        if self.adapter.issuance_deduplicated:
            return  # the re-send under the same reference is itself the question: not a retry
        # A "not issued" that is final: nothing is at the insurer, and sending again is a retry.
        counters.maybe_committed = False
        if self.budget.try_spend(self.adapter.channel.context.insurer_code):
            counters.budget_spent = True
            return
        last = counters.last_error or InsurerError(ErrorKind.UNAVAILABLE, provider_code="RETRY_REFUSED")
        raise _RetryRefused(last)


class _Cancellation:
    """Cancel at most once, and never lose track of a cancellation that may have gone through.

    Every insurer answers a repeat of our cancellation reference with the first result (Anka's
    replay, Çınar's duplicate, Deniz's 409 with the cancellation to poll, Boğaziçi's BS-330
    with the success elements), so after an ambiguous failure the same reference is simply sent
    again: that re-send is the question, never a retry for the budget, and never under a new
    reference. A refusal of such a re-send answers the question only; the outcome stays
    unknown unless the insurer judged the request itself (`settles_issuance`).
    """

    moves_money = True

    def __init__(
        self,
        adapter: InsurerAdapter,
        data: Mapping[str, Any],
        reference: str,
        counters: _Counters,
        history: IssuanceHistory,
    ) -> None:
        if not reference:
            raise ValueError("a cancellation needs a stable reference stored before the first try")
        self.adapter, self.data, self.reference, self.counters = adapter, data, reference, counters
        self.on_send = history.on_send

    def attempt(self) -> Cancellation:
        counters = self.counters
        was_ambiguous = counters.maybe_committed
        if self.on_send is not None:
            self.on_send()
        counters.last_sent_at = time.monotonic()
        try:
            return self.adapter.cancel_policy(self.data, reference=self.reference)
        except InsurerError as error:
            if error.ambiguous:
                counters.maybe_committed = True
                if error.error_class is ErrorClass.PERMANENT:
                    raise _outcome_still_unknown(error) from error
            elif was_ambiguous and not error.settles_issuance:
                raise _outcome_still_unknown(error) from error
            else:
                counters.maybe_committed = False
            raise


def _outcome_still_unknown(error: InsurerError) -> InsurerError:
    """The same answer, as a retryable one: the next try asks again (a lookup, not a re-send)."""
    if error.error_class is not ErrorClass.PERMANENT:
        error.ambiguous = True
        return error
    return InsurerError(
        ErrorKind.UNAVAILABLE,
        provider_code=error.provider_code,
        message=mask_and_cut(f"Poliçenin durumu henüz öğrenilemedi ({error.kind.value}): {error.message}", 300),
        http_status=error.http_status,
        ambiguous=True,
        raw_sample=error.raw_sample,
    )
