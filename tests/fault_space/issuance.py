"""A search over fault sequences for issuance: the real engine, try loop, pump and replay, against
the sandbox insurers, with the insurer's answer to every call chosen by Hypothesis.

Each example takes one trafik quote request, quoted at every insurer, and issues one insurer's
quote. The steps Hypothesis strings together:

* the insurer's next answer to one of the calls an issuance makes (the send, Boğaziçi's and
  Deniz's look-up, Deniz's poll, Çınar's token): any code of the insurer's table, an unknown
  code, a 5xx with a code, an HTML gateway page, a reset, a hang, an empty or unreadable body,
  its throttle, "commit, then drop the answer", "commit, then answer a server error", and
  "commit after N seconds" (slower than our read timeout, within the insurer's settling time);
* a worker's try (worker "b"'s clock is 20 s behind), which may crash before a request leaves,
  after the insurer answered but before we read it, or before the policy is stored;
* the work pump (by either worker), a crashed worker's lease running out, time passing;
* the admin's replay, the agent clicking again, the agent issuing another insurer's quote.

Invariants after every step: at most one policy per quote at every insurer and one per quote
request across them; a SUBMITTED record holds the insurer's one policy; FAILED means the insurer
holds none; no record lost; no send at an insurer that does not deduplicate beyond the first,
the retry budget's grants and the replays' new references (look-ups are free). At the end, with
the insurer answering again, every record is driven (and a DEFERRED one replayed) until the
platform's state agrees with the insurer's.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from integrations.adapters.registry import adapter_class, registered_codes
from integrations.answers.taxonomy import ErrorClass
from integrations.calling.channel import Channel
from integrations.models import RetryBudgetBucket, RetryBudgetState, SendRateState
from integrations.pacing.retry_budget import SharedRetryBudget
from integrations.retry_policies import clear_policy_cache
from policies.models import Policy
from quotes.models import InsurerQuote, Issuance
from quotes.services import issuance as svc
from quotes.services import quote_requests
from tests import samples
from tests.quotes.conftest import issuance_policy_override
from tests.work.sends import pump_kind, work_sends_held
from work import services as work
from work.item import WorkState

INSURERS = registered_codes()

# Time, scaled down so an example takes seconds: our read timeout, the insurer's settling time,
# and how long a slow insurer takes (past the read timeout, within the settling time, as the
# contract promises: "finishes or abandons every Policelestir within the settling time").
ATTEMPT_TIMEOUT = 0.4
SETTLING_SECONDS = 1.0
SLOW_SECONDS = 0.7
# Worker "b" runs 20 s behind the database and worker "a".
WORKER_CLOCKS = {"a": 0.0, "b": -20.0}
# How many steps the end of an example may take to settle everything, and how many replays.
SETTLE_ROUNDS = 80
SETTLE_REPLAYS = 2


class WorkerCrash(BaseException):
    """The worker's process died here (a BaseException: no `except Exception` of ours catches it)."""


@dataclass
class Search:
    """What the test hands the machine: its fixtures."""

    sandbox: dict
    agents: dict
    insurer: str  # whose quote each example issues


ENV: Search | None = None
# What the search explored, per insurer: examples (sequences) run (read by the long run's
# report, `python -m tests.fault_space`).
EXPLORED: Counter[str] = Counter()


# --- the insurer's answers -----------------------------------------------------------------------


def _codes(code: str, *, permanent: bool) -> list[str]:
    """The insurer's codes (a wildcard made concrete) whose class is, or is not, permanent."""
    table = adapter_class(code).error_table
    chosen = {
        key.replace("*", "X") for key, kind in table.items() if (kind.error_class is ErrorClass.PERMANENT) == permanent
    }
    return sorted(chosen) or ["ZZ_NEVER_SEEN"]


# What an answer means, drawn in two steps: which of four families first, each as likely as the
# others (the insurer answers; it says no for sure; it breaks or says "not now"; it acts and the
# answer is lost), then which meaning of the family, then (`index`) which code or shape.
FAMILIES = (
    ("answered",),
    ("refused", "rejected"),  # a permanent code of its table; its own verdict where it has one
    (
        "not_now",  # a code whose class is retryable
        "code_never_seen",
        "server_error",  # a 5xx with a code
        "gateway_page",  # an HTML 502 / 503 / 504
        "throttle",
        "reset",
        "hang",
        "unreadable",  # an empty or cut body
    ),
    (
        "slow",  # past our read timeout, within the settling time: a send commits after it
        "commit_lost",  # a send commits, its answer is lost (reset or silence)
        "commit_then_error",  # a send commits, then a server error with a retryable code
    ),
)
MEANINGS = tuple(meaning for family in FAMILIES for meaning in family)
Answer = tuple[str, int]
ANSWER = st.tuples(st.sampled_from(FAMILIES).flatmap(st.sampled_from), st.integers(0, 63))
# Answers drawn for the first calls of a try (later calls are answered as usual): drawn up front,
# so the choices made do not depend on how many calls the timing let a try make.
SCRIPTED_CALLS = 3
# The channel's names for an operation's calls -> the sandbox's operation names, per operation.
CALL_OPERATIONS = {
    "issue_policy": {"main": "issue_policy", "lookup": "issue_lookup", "poll": "issue_poll", "token": "token"},
    "cancel_policy": {"main": "cancel_policy", "poll": "cancel_poll", "token": "token"},
}


def fault_rule(code: str, operation: str, answer: Answer, fault_kinds: frozenset[str]) -> dict | None:
    """The sandbox fault rule that gives `answer` to the insurer's next `operation` call, or None."""
    meaning, index = answer
    send = operation in ("issue_policy", "cancel_policy")  # a call that moves money, which may commit

    def pick(options: list) -> Any:
        return options[index % len(options)]

    if meaning == "rejected" and not (operation == "issue_policy" and "reject" in fault_kinds):
        meaning = "refused"
    if meaning in ("commit_lost", "commit_then_error") and not send:
        meaning = {"commit_lost": "reset", "commit_then_error": "server_error"}[meaning]  # nothing to commit
    rule_: dict[str, Any] | None = {
        "answered": None,
        "refused": {"fault": "error", "code": pick(_codes(code, permanent=True))},
        "not_now": {"fault": "error", "code": pick(_codes(code, permanent=False))},
        "code_never_seen": {"fault": "error", "code": "ZZ_NEVER_SEEN"},
        "server_error": {"fault": "error", "code": "ZZ_SERVER", "http_status": pick([500, 503])},
        "gateway_page": {"fault": "html", "http_status": pick([502, 503, 504])},
        "throttle": {"fault": "throttle", "wait_seconds": 0.1},
        "reset": {"fault": "reset"},
        "hang": {"fault": "hang", "seconds": SLOW_SECONDS},
        "unreadable": {"fault": pick(["empty", "garbage"])},
        "slow": {"fault": "latency", "seconds": SLOW_SECONDS},
        "commit_lost": pick(
            [
                {"fault": "commit_then_drop", "drop": "reset"},
                {"fault": "commit_then_drop", "drop": "hang", "seconds": SLOW_SECONDS},
            ]
        ),
        # Only a code that leaves the outcome open: a permanent "no" after committing would be the
        # insurer breaking its contract.
        "commit_then_error": {
            "fault": "error",
            "code": pick(_codes(code, permanent=False)),
            "commit": True,
            "http_status": 500,
        },
        "rejected": {"fault": "reject"},
    }[meaning]
    return None if rule_ is None else {"operation": operation, "times": 1, **rule_}


# --- the workers ---------------------------------------------------------------------------------


@contextmanager
def worker_clock(worker: str):
    """The platform's wall clock as this worker's machine reads it (the database keeps its own)."""
    offset = WORKER_CLOCKS[worker]
    if not offset:
        yield
        return
    right = timezone.now
    timezone.now = lambda: right() + timedelta(seconds=offset)
    try:
        yield
    finally:
        timezone.now = right


@contextmanager
def one_try(
    state: Any,
    code: str,
    answers: list[Answer],
    crash: tuple[str, int] | None,
    *,
    operation: str = "issue_policy",
    stores: Any = svc,
):
    """A worker's try of `operation` whose first calls get `answers` from the insurer, killed at
    `crash`: ("before_send", n) before its n-th request leaves, ("after_send", n) after the
    insurer answered it but before we read the answer, ("before_store", 0) before the result is
    stored (by `stores`, the service module whose `work_mark_submitted` stores it)."""
    calls = CALL_OPERATIONS[operation]
    real_send, real_submitted = Channel._send, stores.work_mark_submitted
    point, exchange = crash or (None, -1)
    seen = [0]

    def send(self: Channel, call: Any, read_timeout: float) -> Any:
        number = seen[0]
        seen[0] += 1
        sandbox_operation = calls.get(call.name)
        if number < len(answers) and sandbox_operation is not None and sandbox_operation in state.operations:
            rule_ = fault_rule(code, sandbox_operation, answers[number], state.fault_kinds)
            if rule_ is not None:
                state.add_faults([rule_])
        if point == "before_send" and number == exchange:
            raise WorkerCrash("killed before the request left")
        reply = real_send(self, call, read_timeout)
        if point == "after_send" and number == exchange:
            raise WorkerCrash("killed after the insurer answered, before the answer was read")
        return reply

    def submitted(*args: Any, **kwargs: Any) -> bool:
        raise WorkerCrash("killed before the policy was stored")

    Channel._send = send  # type: ignore[method-assign]
    if point == "before_store":
        stores.work_mark_submitted = submitted
    try:
        yield
    finally:
        Channel._send = real_send  # type: ignore[method-assign]
        stores.work_mark_submitted = real_submitted
        state.clear_faults()  # a scripted answer the try did not use is not kept for the next one


@dataclass
class Tracked:
    """One issuance the example started, and what the machine knows of it."""

    pk: int
    insurer: str
    quote_no: str
    crashed: bool = False
    references: set[str] = field(default_factory=set)


class IssuanceSearch(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        assert ENV is not None, "the test sets tests.fault_space.issuance.ENV"
        self.env = ENV
        self.grants: Counter[str] = Counter()
        self.replays = 0
        self.records: list[Tracked] = []
        self.trace: list[str] = []
        self._stack = ExitStack()
        # Everything an example writes is rolled back when it ends (a savepoint of the test's transaction).
        self._atomic: Any = transaction.atomic()
        self._atomic.__enter__()
        for server in self.env.sandbox.values():
            server.state.reset()
            server.state.configure(issuance_processing_seconds=0.05)
        from integrations.adapters.registry import forget_process_state

        forget_process_state()
        for model in (RetryBudgetBucket, RetryBudgetState, SendRateState):
            model.objects.all().delete()
        issuance_policy_override(
            max_attempts=4,
            base_delay=0.02,
            max_delay=0.1,
            deadline=2.5,
            attempt_timeout=ATTEMPT_TIMEOUT,
            settling_seconds={"bogazici": SETTLING_SECONDS},
        )
        self._patch_budget_counting()
        self._patch(svc, "INLINE_RETRY_MAX_WAIT", -1.0)  # a worker's task makes one try
        self._stack.enter_context(work_sends_held(Issuance))  # the machine is the only worker
        self._patch(work, "RETRY_BUDGET_WAIT_SECONDS", 0.2)

    def _patch(self, owner: Any, name: str, value: Any) -> None:
        old = getattr(owner, name)
        setattr(owner, name, value)
        self._stack.callback(setattr, owner, name, old)

    def _patch_budget_counting(self) -> None:
        real = SharedRetryBudget.try_spend
        grants = self.grants

        def try_spend(budget: SharedRetryBudget, insurer_code: str) -> bool:
            granted = real(budget, insurer_code)
            if granted:
                grants[insurer_code] += 1
            return granted

        self._patch(SharedRetryBudget, "try_spend", try_spend)

    def teardown(self) -> None:
        EXPLORED[self.env.insurer] += 1
        try:
            self._settle_and_check()
        finally:
            if os.environ.get("FAULT_SPACE_TRACE"):
                print("\n  ".join(["example:", *self.trace]))
            self.close()

    def close(self) -> None:
        """Undo the example's patches and writes; safe to call again (a plain test that failed
        before its teardown calls it from its fixture)."""
        if self._atomic is None:
            return
        self._stack.close()
        transaction.set_rollback(True)
        self._atomic.__exit__(None, None, None)
        self._atomic = None
        clear_policy_cache()

    # --- setting up --------------------------------------------------------------------------------

    @initialize(lag=st.sampled_from([0.0, 0.0, 0.5]))
    def quote_and_start(self, lag: float) -> None:
        """A trafik request quoted at every insurer; the agent confirms the searched insurer's quote."""
        code = self.code = self.env.insurer
        user = self.env.agents["ACENTE1"]
        request = quote_requests.quote_request_create(user=user, product="trafik", data=samples.TRAFIK)
        for row in request.insurer_quotes.all():
            quote_requests.insurer_quote_fetch(row.id)
        self.request = request
        if lag and "issue_poll" in self.env.sandbox[code].state.operations:
            self.env.sandbox[code].state.configure(poll_lag_seconds=lag)  # Deniz's polls lag the POST
        self._start(code)

    def _start(self, code: str) -> None:
        row = InsurerQuote.objects.get(request=self.request, insurer__code=code)
        assert row.state == InsurerQuote.State.SUCCEEDED, (code, row.state, row.provider_code)
        try:
            issuance = svc.issuance_start(
                user=self.env.agents["ACENTE1"], insurer_quote_id=row.id, payment_token=samples.PAYMENT_TOKEN
            )
        except svc.IssuanceRefused:
            return
        if not any(t.pk == issuance.pk for t in self.records):
            self.records.append(Tracked(issuance.pk, code, row.quote_no, references={issuance.reference}))

    # --- the workers and the pump ---------------------------------------------------------------------

    RECORD = st.integers(0, 1)
    ANSWERS = st.lists(ANSWER, min_size=SCRIPTED_CALLS, max_size=SCRIPTED_CALLS)
    CRASHES = st.one_of(
        *([st.none()] * 3),
        st.tuples(st.sampled_from(["before_send", "after_send"]), st.integers(0, SCRIPTED_CALLS - 1)),
        st.just(("before_store", 0)),
    )

    @rule(record=RECORD, answers=ANSWERS, crash=CRASHES)
    def worker_a_takes_the_next_try(self, record: int, answers: list[Answer], crash: Any) -> None:
        self._next_try("a", self._record(record), answers, crash)

    @rule(record=RECORD, answers=ANSWERS, crash=CRASHES)
    def worker_b_takes_the_next_try(self, record: int, answers: list[Answer], crash: Any) -> None:
        """Worker "b": its machine's clock is 20 s behind."""
        self._next_try("b", self._record(record), answers, crash)

    def _record(self, index: int) -> Tracked:
        """The index-th record started (modulo how many): every draw is made whatever happened
        before, so a run that goes another way by timing draws the same choices."""
        return self.records[index % len(self.records)]

    def _next_try(self, worker: str, record: Tracked, answers: list[Answer], crash: Any) -> None:
        """The record's next task: what time would bring first (a dead worker's lease runs out and
        the record is taken back; a wait ends and the record is queued), then one try, whose first
        calls the insurer answers as drawn, and which may be killed."""
        with worker_clock(worker):
            self._bring_due(record)
            state = self.env.sandbox[record.insurer].state
            try:
                with one_try(state, record.insurer, answers, crash):
                    svc.issuance_process(record.pk)
            except WorkerCrash:
                record.crashed = True
        self._note_reference(record)
        after = Issuance.objects.values_list("state", "provider_code").get(pk=record.pk)
        self.trace.append(f"try {worker} answers={answers} crash={crash} -> {after}")

    def _bring_due(self, record: Tracked) -> None:
        issuance = Issuance.objects.get(pk=record.pk)
        if issuance.state == WorkState.IN_FLIGHT and record.crashed:
            self._lease_runs_out(record)
            pump_kind(Issuance)
        elif issuance.state == WorkState.PENDING and issuance.next_attempt_at is not None:
            time.sleep(min(max((issuance.next_attempt_at - timezone.now()).total_seconds(), 0.0), 1.5))
            work.work_promote_one(Issuance, record.pk)

    def _lease_runs_out(self, record: Tracked) -> None:
        """A dead worker's lease outlives any try (30 s past the deadline); here it is made to end."""
        Issuance.objects.filter(pk=record.pk, state=WorkState.IN_FLIGHT).update(
            lease_expires_at=timezone.now() - timedelta(seconds=1)
        )
        record.crashed = False

    @rule(worker=st.sampled_from(sorted(WORKER_CLOCKS)))
    def pump_runs(self, worker: str) -> None:
        with worker_clock(worker):
            pump_kind(Issuance)

    @rule(seconds=st.sampled_from([0.1, 0.4, SETTLING_SECONDS + 0.1]))
    def time_passes(self, seconds: float) -> None:
        time.sleep(seconds)

    # --- people ----------------------------------------------------------------------------------------

    @rule(record=RECORD)
    def admin_replays(self, record: int) -> None:
        """ "Seçilenleri yeniden dene" on a record, whatever its state (only dead ones move)."""
        from work.replay import dead_letters_replay

        pk = self._record(record).pk
        self.replays += len(dead_letters_replay(model=Issuance, ids=[pk]))

    @rule()
    def agent_clicks_again(self) -> None:
        """A double click or a second tab: the record already stored comes back."""
        first = self.records[0]
        before = Issuance.objects.count()
        self._start(first.insurer)
        assert Issuance.objects.count() == before

    @rule(other=st.sampled_from(INSURERS))
    def agent_issues_another_insurers_quote(self, other: str) -> None:
        """Allowed only once the first issuance is refused for sure."""
        if other != self.code:
            self._start(other)

    def _note_reference(self, record: Tracked) -> None:
        record.references.add(Issuance.objects.values_list("reference", flat=True).get(pk=record.pk))

    # --- invariants ------------------------------------------------------------------------------------

    def _policies(self, record: Tracked) -> list[str]:
        return self.env.sandbox[record.insurer].state.counts()["policies_by_quote"].get(record.quote_no, [])

    @invariant()
    def at_most_one_policy_per_quote_and_per_request(self) -> None:
        held = {record.insurer: self._policies(record) for record in self.records}
        for insurer, policies in held.items():
            assert len(policies) <= 1, f"{insurer} holds {len(policies)} policies for one quote: {policies}"
        assert sum(map(len, held.values())) <= 1, f"one quote request, policies at several insurers: {held}"

    @invariant()
    def the_platform_never_says_more_than_the_insurer(self) -> None:
        for record in self.records:
            issuance = Issuance.objects.get(pk=record.pk)  # never lost
            policies = self._policies(record)
            if issuance.state == WorkState.SUBMITTED:
                assert policies == [issuance.policy_no], (issuance.policy_no, policies)
                assert Policy.objects.filter(issuance=issuance, policy_no=issuance.policy_no).exists()
            if issuance.state == WorkState.FAILED:
                assert not policies, f"FAILED ({issuance.provider_code}) while the insurer holds {policies}"
            if issuance.state == WorkState.DEFERRED:
                assert issuance.error_message, "a record waiting for a person says why"
            if issuance.state == WorkState.IN_FLIGHT:
                lease = issuance.lease_expires_at
                assert record.crashed or (lease is not None and lease <= timezone.now()), "IN_FLIGHT with no worker"

    @invariant()
    def no_send_beyond_the_budget(self) -> None:
        """At an insurer that does not deduplicate, every send after the first was paid for by the
        retry budget or follows a replay's new reference; look-ups are free."""
        for insurer in {record.insurer for record in self.records}:
            if adapter_class(insurer).issuance_deduplicated:
                continue
            sends = self.env.sandbox[insurer].state.counts()["received"].get("issue_policy", 0)
            references = sum(len(r.references) for r in self.records if r.insurer == insurer)
            assert sends <= references + self.grants[insurer], (sends, references, dict(self.grants))

    # --- the end: the insurer answers again ---------------------------------------------------------------

    def _settle_and_check(self) -> None:
        for server in self.env.sandbox.values():
            server.state.clear_faults()
        time.sleep(SLOW_SECONDS + 0.1)  # whatever a slow insurer was still doing is done
        from work.replay import dead_letters_replay

        for record in self.records:
            replays = 0
            for _ in range(SETTLE_ROUNDS):
                issuance = Issuance.objects.get(pk=record.pk)
                if issuance.state in (WorkState.SUBMITTED, WorkState.FAILED):
                    break
                if issuance.state == WorkState.IN_FLIGHT:
                    self._lease_runs_out(record)
                elif issuance.state == WorkState.PENDING and issuance.next_attempt_at:
                    time.sleep(min(max((issuance.next_attempt_at - timezone.now()).total_seconds(), 0.0), 1.5))
                elif issuance.state == WorkState.DEFERRED:
                    if replays >= SETTLE_REPLAYS:
                        break
                    replays += 1
                    self.replays += len(dead_letters_replay(model=Issuance, ids=[record.pk]))
                pump_kind(Issuance)
                svc.issuance_process(record.pk)
                self._note_reference(record)
            self.at_most_one_policy_per_quote_and_per_request()
            self.the_platform_never_says_more_than_the_insurer()
            self.no_send_beyond_the_budget()
            issuance = Issuance.objects.get(pk=record.pk)
            policies = self._policies(record)
            if policies:
                assert issuance.state == WorkState.SUBMITTED, (
                    f"the insurer holds {policies}; the platform still says {issuance.state} "
                    f"({issuance.provider_code}: {issuance.error_message})"
                )
            else:
                # With the insurer answering again, only its definite "no" keeps a policy from being made.
                assert issuance.state == WorkState.FAILED, (
                    f"no policy at the insurer and the platform still says {issuance.state} "
                    f"({issuance.provider_code}: {issuance.error_message})"
                )
