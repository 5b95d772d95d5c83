"""The fault-space search over cancellation (iptal): money moves back, so it is searched like
issuance — the real engine, try loop, pump and replay against the sandbox insurers, with the
insurer's answer to every call (the cancel, Deniz's poll, Çınar's token) chosen by Hypothesis.

Each example: one policy in force at the insurer and on the platform, one cancellation. Steps:
a worker's try (worker "b" 20 s behind), which may crash at any point of any call; the pump;
time passing; the admin's replay; the agent asking again (another reason, another day).

Invariants after every step: the insurer cancelled the policy at most once; the record keeps
the reference it was stored with, whatever happens (every insurer answers a repeat with the
first result, so a new reference could only cancel twice or lose the first result); SUBMITTED
holds the insurer's refund and the policy is CANCELLED on both sides; FAILED means the insurer
did not cancel it; DEFERRED says why. At the end, with the insurer answering again, the record
is driven (and replayed) until the platform agrees with the insurer.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import ExitStack
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from integrations.models import RetryBudgetBucket, RetryBudgetState, SendRateState
from integrations.retry_policies import clear_policy_cache
from policies.models import Cancellation, Policy
from policies.periods import today
from policies.services import cancellations as svc
from tests.fault_space.issuance import (
    ANSWER,
    SCRIPTED_CALLS,
    SLOW_SECONDS,
    WORKER_CLOCKS,
    WorkerCrash,
    one_try,
    worker_clock,
)
from tests.quotes.policy_samples import imported_policy
from tests.work.sends import pump_kind, work_sends_held
from work import services as work
from work.item import WorkState

SETTLE_ROUNDS = 80
SETTLE_REPLAYS = 2
PREMIUM = Decimal("3650.00")
# Time scaled down as in the issuance search.
CANCEL_POLICY = {"max_attempts": 4, "base_delay": 0.02, "max_delay": 0.1, "deadline": 2.5, "attempt_timeout": 0.4}

ENV: Any = None  # the test's `Search` (tests.fault_space.issuance.Search)
# Sequences explored per insurer (the long run's report).
EXPLORED: Counter[str] = Counter()


class CancellationSearch(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        assert ENV is not None, "the test sets tests.fault_space.cancellation.ENV"
        self.env = ENV
        self.trace: list[str] = []
        self._stack = ExitStack()
        self._atomic: Any = transaction.atomic()
        self._atomic.__enter__()
        for server in self.env.sandbox.values():
            server.state.reset()
            server.state.configure(issuance_processing_seconds=0.05)
        from integrations.adapters.registry import forget_process_state

        forget_process_state()
        for model in (RetryBudgetBucket, RetryBudgetState, SendRateState):
            model.objects.all().delete()
        from integrations.models import Insurer, OperationPolicy

        for insurer in Insurer.objects.all():
            OperationPolicy.objects.update_or_create(
                insurer=insurer,
                operation="cancel_policy",
                defaults={
                    "max_attempts": 4,
                    "base_delay": 0.02,
                    "max_delay": 0.1,
                    "deadline": 2.5,
                    "attempt_timeout": 0.4,
                },
            )
        clear_policy_cache()
        for owner, name, value in (
            (svc, "INLINE_RETRY_MAX_WAIT", -1.0),
            (work, "RETRY_BUDGET_WAIT_SECONDS", 0.2),
        ):
            old = getattr(owner, name)
            setattr(owner, name, value)
            self._stack.callback(setattr, owner, name, old)
        self._stack.enter_context(work_sends_held(Cancellation))  # the machine is the only worker

    def teardown(self) -> None:
        EXPLORED[self.env.insurer] += 1
        try:
            self._settle_and_check()
        finally:
            self.close()

    def close(self) -> None:
        if self._atomic is None:
            return
        self._stack.close()
        transaction.set_rollback(True)
        self._atomic.__exit__(None, None, None)
        self._atomic = None
        clear_policy_cache()

    # --- setting up ----------------------------------------------------------------------------------

    @initialize(reason=st.sampled_from(["customer_request", "duplicate", "vehicle_sold"]))
    def a_policy_in_force_and_its_cancellation(self, reason: str) -> None:
        code = self.code = self.env.insurer
        server = self.env.sandbox[code]
        self.policy_no = f"{server.state.ledger.prefix}-P-SEARCH-1"
        starts, ends = today() - timedelta(days=100), today() + timedelta(days=265)
        server.state.seed_policies(
            [
                {
                    "policy_no": self.policy_no,
                    "status": "ACTIVE",
                    "agency": "ACENTE1",
                    "product": "trafik",
                    "premium": str(PREMIUM),
                    "starts_on": starts.isoformat(),
                    "ends_on": ends.isoformat(),
                    "issued_on": starts.isoformat(),
                }
            ]
        )
        self.policy = imported_policy("ACENTE1", code, self.policy_no, premium=PREMIUM, starts_on=starts, ends_on=ends)
        cancellation = svc.cancellation_start(
            user=self.env.agents["ACENTE1"], policy_id=self.policy.pk, reason=reason, effective_on=today()
        )
        self.pk, self.reference = cancellation.pk, cancellation.reference
        self.crashed = False

    # --- workers and time ---------------------------------------------------------------------------

    CRASHES = st.one_of(
        *([st.none()] * 3),
        st.tuples(st.sampled_from(["before_send", "after_send"]), st.integers(0, SCRIPTED_CALLS - 1)),
        st.just(("before_store", 0)),
    )
    ANSWERS = st.lists(ANSWER, min_size=SCRIPTED_CALLS, max_size=SCRIPTED_CALLS)

    @rule(answers=ANSWERS, crash=CRASHES)
    def worker_a_takes_the_next_try(self, answers: list, crash: Any) -> None:
        self._next_try("a", answers, crash)

    @rule(answers=ANSWERS, crash=CRASHES)
    def worker_b_takes_the_next_try(self, answers: list, crash: Any) -> None:
        """Worker "b": its machine's clock is 20 s behind."""
        self._next_try("b", answers, crash)

    def _next_try(self, worker: str, answers: list, crash: Any) -> None:
        with worker_clock(worker):
            self._bring_due()
            state = self.env.sandbox[self.code].state
            try:
                with one_try(state, self.code, answers, crash, operation="cancel_policy", stores=svc):
                    svc.cancellation_process(self.pk)
            except WorkerCrash:
                self.crashed = True
        after = Cancellation.objects.values_list("state", "provider_code").get(pk=self.pk)
        self.trace.append(f"try {worker} answers={answers} crash={crash} -> {after}")

    def _bring_due(self) -> None:
        cancellation = Cancellation.objects.get(pk=self.pk)
        if cancellation.state == WorkState.IN_FLIGHT and self.crashed:
            self._lease_runs_out()
            pump_kind(Cancellation)
        elif cancellation.state == WorkState.PENDING and cancellation.next_attempt_at is not None:
            time.sleep(min(max((cancellation.next_attempt_at - timezone.now()).total_seconds(), 0.0), 1.5))
            work.work_promote_one(Cancellation, self.pk)

    def _lease_runs_out(self) -> None:
        Cancellation.objects.filter(pk=self.pk, state=WorkState.IN_FLIGHT).update(
            lease_expires_at=timezone.now() - timedelta(seconds=1)
        )
        self.crashed = False

    @rule(worker=st.sampled_from(sorted(WORKER_CLOCKS)))
    def pump_runs(self, worker: str) -> None:
        with worker_clock(worker):
            pump_kind(Cancellation)

    @rule(seconds=st.sampled_from([0.1, 0.4, SLOW_SECONDS + 0.1]))
    def time_passes(self, seconds: float) -> None:
        time.sleep(seconds)

    @rule()
    def admin_replays(self) -> None:
        from work.replay import dead_letters_replay

        dead_letters_replay(model=Cancellation, ids=[self.pk])

    @rule(reason=st.sampled_from(["other", "vehicle_sold"]))
    def agent_asks_again(self, reason: str) -> None:
        """Another click, another tab, another reason: the live record comes back, or (once the
        first was refused for sure, or the policy is cancelled) a clear refusal, never a second
        cancellation in flight."""
        try:
            again = svc.cancellation_start(
                user=self.env.agents["ACENTE1"], policy_id=self.policy.pk, reason=reason, effective_on=today()
            )
        except svc.CancellationRefused:  # the policy is cancelled by now
            return
        if again.pk != self.pk:
            # Only after the first was refused for sure: a new record, tracked from now on.
            assert Cancellation.objects.get(pk=self.pk).state == WorkState.FAILED
            self.pk, self.reference = again.pk, again.reference

    # --- invariants -----------------------------------------------------------------------------------

    def _insurer(self) -> Any:
        return self.env.sandbox[self.code].state

    def _cancelled_there(self) -> int:
        return self._insurer().counts()["cancellations_by_policy"].get(self.policy_no, 0)

    @invariant()
    def cancelled_at_most_once_under_one_reference(self) -> None:
        assert self._cancelled_there() <= 1, f"{self.code} cancelled {self.policy_no} {self._cancelled_there()} times"
        cancellation = Cancellation.objects.get(pk=self.pk)
        assert cancellation.reference == self.reference, "a cancellation's reference never changes"

    @invariant()
    def the_platform_never_says_more_than_the_insurer(self) -> None:
        cancellation = Cancellation.objects.get(pk=self.pk)
        there = self._insurer().ledger.policies[self.policy_no]
        if cancellation.state == WorkState.SUBMITTED:
            assert there.status == "CANCELLED" and self._cancelled_there() == 1
            assert Policy.objects.get(pk=self.policy.pk).status == Policy.Status.CANCELLED
            assert cancellation.refund is not None and cancellation.refund == there.cancellation.refund
        if cancellation.state == WorkState.FAILED:
            assert self._cancelled_there() == 0, f"FAILED ({cancellation.provider_code}) while cancelled there"
        if cancellation.state == WorkState.DEFERRED:
            assert cancellation.error_message
        if cancellation.state == WorkState.IN_FLIGHT:
            lease = cancellation.lease_expires_at
            assert self.crashed or (lease is not None and lease <= timezone.now()), "IN_FLIGHT with no worker"

    # --- the end ---------------------------------------------------------------------------------------

    def _settle_and_check(self) -> None:
        from work.replay import dead_letters_replay

        self._insurer().clear_faults()
        time.sleep(SLOW_SECONDS + 0.1)
        replays = 0
        for _ in range(SETTLE_ROUNDS):
            cancellation = Cancellation.objects.get(pk=self.pk)
            if cancellation.state in (WorkState.SUBMITTED, WorkState.FAILED):
                break
            if cancellation.state == WorkState.IN_FLIGHT:
                self._lease_runs_out()
            elif cancellation.state == WorkState.PENDING and cancellation.next_attempt_at:
                time.sleep(min(max((cancellation.next_attempt_at - timezone.now()).total_seconds(), 0.0), 1.5))
            elif cancellation.state == WorkState.DEFERRED:
                if replays >= SETTLE_REPLAYS:
                    break
                replays += 1
                dead_letters_replay(model=Cancellation, ids=[self.pk])
            pump_kind(Cancellation)
            svc.cancellation_process(self.pk)
        self.cancelled_at_most_once_under_one_reference()
        self.the_platform_never_says_more_than_the_insurer()
        cancellation = Cancellation.objects.get(pk=self.pk)
        if self._cancelled_there():
            assert cancellation.state == WorkState.SUBMITTED, (
                f"the insurer cancelled it; the platform still says {cancellation.state} "
                f"({cancellation.provider_code}: {cancellation.error_message})"
            )
        else:
            assert cancellation.state == WorkState.FAILED, (
                f"not cancelled at the insurer and the platform still says {cancellation.state} "
                f"({cancellation.provider_code}: {cancellation.error_message})"
            )
