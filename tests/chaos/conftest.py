"""The chaos suite's scenario: quotes, issuances and a sync running on two qclusters while a fault strikes.

A scenario (`Scenario`): the agents of both agencies ask for trafik quotes (the clusters fetch them
from all four insurers), issue one quote of each request as soon as it arrives (round-robin over
the insurers, so every insurer issues), and a sync run of a few hundred policies goes on beside
them. The test strikes while that work is in flight, then `recover()` waits, with no help, until
every record is final and `assert_invariants()` checks what must hold after any fault:

* zero duplicate policies at every insurer (`policies_by_quote`: at most one per quote);
* every work record in exactly one final state; every quote answered or closed;
* nothing lost: one issuance per request, SUBMITTED, holding the very policy its insurer made
  (and no insurer holds a policy the platform does not know); one sync item per policy;
* healthy again without a human: with the faults gone, a new quote, issuance and sync complete.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from tests.conftest import wait_until
from tests.samples import PAYMENT_TOKEN, TRAFIK
from tests.scaleout.harness import (  # noqa: F401 - clusters, engines, probe, world are fixtures
    CODES,
    FINAL_STATES,
    QUICK_ISSUE,
    QUICK_QUOTE,
    QUICK_STATUS,
    Cluster,
    Report,
    assert_no_duplicate_policies,
    bulk_policies,
    clusters,
    engines,
    probe,
    quick_policies,
    sync_start_enqueued,
    wait_all_final,
    world,
)

# The sandbox takes a while to issue, so a fault finds issuances in flight.
ISSUE_LATENCY_MS = [400, 1200]
RECOVERY_SECONDS = 150.0


@dataclass
class Scenario:
    sandbox: dict
    clusters: list[Cluster]
    agents: dict
    report: Report
    requests: list = field(default_factory=list)
    runs: list = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    # --- the work ---------------------------------------------------------------------------------

    def ask_quotes(self, count: int, *, tag: str = "") -> list:
        """`count` trafik quote requests, alternating between the two agencies (fetched by the clusters)."""
        from quotes.services.quote_requests import quote_request_create

        made = []
        for i in range(count):
            agency = ("ACENTE1", "ACENTE2")[i % 2]
            data = {**TRAFIK, "plate": f"34CH{(len(self.requests) + i) % 10000:04d}"}
            made.append(quote_request_create(user=self.agents[agency], product="trafik", data=data))
        self.requests.extend(made)
        return made

    def issue_as_quoted(self, requests: list, *, timeout: float = 60.0) -> list:
        """Issue one insurer's quote of each request (round-robin over insurers) once it has arrived."""
        from quotes.models import InsurerQuote
        from quotes.services.issuance import issuance_start

        pending = {request.pk: (request, CODES[i % len(CODES)]) for i, request in enumerate(requests)}
        started = []
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for pk, (request, code) in list(pending.items()):
                quote = InsurerQuote.objects.filter(request=request, insurer__code=code).first()
                if quote is None or quote.state in ("QUEUED", "RUNNING", "RETRYING"):
                    continue
                pending.pop(pk)
                if quote.state != "SUCCEEDED":
                    # That insurer did not quote (a fault): issue whichever one did.
                    quote = InsurerQuote.objects.filter(request=request, state="SUCCEEDED").first()
                    if quote is None:
                        continue
                user = self.agents[request.agency.code]
                started.append(issuance_start(user=user, insurer_quote_id=quote.pk, payment_token=PAYMENT_TOKEN))
            time.sleep(0.1)
        return started

    def sync(self, count: int, *, tag: str):
        expected = bulk_policies(count, tag=tag, cancelled_every=9, sandbox=self.sandbox)
        run = sync_start_enqueued()
        self.runs.append((run, expected))
        return run

    def in_flight(self, model_name: str) -> int:
        from quotes.models import Issuance
        from sync.models import SyncItem

        model = {"Issuance": Issuance, "SyncItem": SyncItem}[model_name]
        return model.objects.filter(state="IN_FLIGHT").count()

    def note(self, text: str) -> None:
        self.report.add(f"{time.monotonic() - self.started:7.1f} s  {text}")

    # --- after the fault ---------------------------------------------------------------------------

    def recover(self, *, timeout: float = RECOVERY_SECONDS) -> None:
        """Wait, with no help, until every work record is final and every quote answered or closed."""
        try:
            wait_all_final(timeout=timeout)
            self._close_quotes(timeout=30)
            self.note(f"recovered: {self.counts()}")
        finally:
            self.report.write()

    def _close_quotes(self, *, timeout: float) -> None:
        """What the agent's page does while it polls: past the request's deadline, close the silent ones."""
        from quotes.models import InsurerQuote
        from quotes.services.quote_requests import quote_request_close_overdue

        def closed() -> bool:
            for request in self.requests:
                quote_request_close_overdue(request=request)
            return not InsurerQuote.objects.exclude(state__in=InsurerQuote.FINAL_STATES).exists()

        wait_until(closed, timeout=timeout, interval=0.5)

    def counts(self) -> dict:
        from quotes.models import InsurerQuote, Issuance
        from sync.models import SyncItem

        return {
            "quotes": dict(Counter(InsurerQuote.objects.values_list("state", flat=True))),
            "issuances": dict(Counter(Issuance.objects.values_list("state", flat=True))),
            "sync": dict(Counter(SyncItem.objects.values_list("state", flat=True))),
        }

    def assert_invariants(self, *, issuances_expected: int | None = None, dead_letters_allowed: bool = False) -> None:
        """`dead_letters_allowed`: under random faults a record may end DEFERRED or FAILED (a dead letter,
        kept with its payload for a replay); an issuance only if its insurer holds no policy for the
        quote, or it keeps its reference and `maybe_sent` (so its replay asks the insurer first)."""
        from policies.models import Policy
        from quotes.models import InsurerQuote, Issuance
        from sync.models import SyncItem

        # Zero duplicate policies at every insurer.
        assert_no_duplicate_policies(self.sandbox)

        # Every record in exactly one final state.
        assert set(Issuance.objects.values_list("state", flat=True)) <= set(FINAL_STATES)
        assert set(SyncItem.objects.values_list("state", flat=True)) <= set(FINAL_STATES)
        assert not InsurerQuote.objects.exclude(state__in=InsurerQuote.FINAL_STATES).exists()

        # Nothing lost: each issuance holds the one policy its insurer made for the quote, and
        # every policy an insurer made is held by the platform.
        issuances = list(Issuance.objects.select_related("insurer_quote__insurer"))
        if issuances_expected is not None:
            assert len(issuances) == issuances_expected
        held = {}
        for issuance in issuances:
            code = issuance.insurer_quote.insurer.code
            at_insurer = self.sandbox[code].state.counts()["policies_by_quote"].get(issuance.insurer_quote.quote_no, [])
            where = (code, issuance.reference, issuance.state, issuance.error_kind, at_insurer)
            if issuance.state != "SUBMITTED":
                assert dead_letters_allowed, where
                assert not at_insurer or (issuance.state == "DEFERRED" and issuance.maybe_sent), where
                continue
            assert at_insurer == [issuance.policy_no], where
            assert Policy.objects.filter(issuance=issuance, policy_no=issuance.policy_no).exists(), where
            held[(code, issuance.insurer_quote.quote_no)] = issuance.policy_no or issuance.reference
        for code, server in self.sandbox.items():
            for quote_no, policies in server.state.counts()["policies_by_quote"].items():
                assert (code, quote_no) in held, f"{code} issued {policies} for {quote_no}: the platform lost it"

        # Every policy of every run has exactly one item, final, with the insurer's status stored.
        for run, expected in self.runs:
            items = dict(run.items.values_list("payload__policy_no", "state"))
            assert set(items) == set(expected), f"run {run.pk}: items lost"
            submitted = {no for no, state in items.items() if state == "SUBMITTED"}
            if not dead_letters_allowed:
                assert submitted == set(items), Counter(items.values())
            dead = run.items.exclude(state="SUBMITTED")
            assert not dead.filter(error_kind="").exists(), "a dead letter without its error"
            stored = dict(Policy.objects.filter(policy_no__in=list(submitted)).values_list("policy_no", "status"))
            assert stored == {no: expected[no] for no in submitted}

    def assert_healthy(self, *, timeout: float = 60.0) -> None:
        """With the faults gone, new work goes through on its own: a quote, its issuance, a small sync."""
        for server in self.sandbox.values():
            server.state.clear_faults()
        before = len(self.requests)
        request = self.ask_quotes(1)[0]
        issued = self.issue_as_quoted([request], timeout=timeout)
        assert issued, "no quote arrived after recovery"
        run = self.sync(8, tag=f"H{before}")
        wait_all_final(timeout=timeout, what="work after recovery")
        issued[0].refresh_from_db()
        assert issued[0].state == "SUBMITTED"
        assert set(run.items.values_list("state", flat=True)) == {"SUBMITTED"}
        self.note("healthy: new quote, issuance and sync went through")
        self.report.write()


@pytest.fixture
def agents(world) -> dict:  # noqa: F811 - the imported fixture
    from django.contrib.auth import get_user_model

    from agencies.models import Agency, AgentProfile

    users = {}
    for code in ("ACENTE1", "ACENTE2"):
        user = get_user_model().objects.create_user(f"chaos-{code.lower()}", password="chaos-pass-123")
        AgentProfile.objects.create(user=user, agency=Agency.objects.get(code=code))
        users[code] = user
    return users


@pytest.fixture
def scenario(request, world, agents, clusters) -> Callable[..., Scenario]:  # noqa: F811 - fixtures above
    """Set the world up and start two clusters; `scenario(cluster_env={"b": {...}})` skews one, say."""

    def make(
        *,
        workers: int = 2,
        cluster_env: dict | None = None,
        issue_latency=ISSUE_LATENCY_MS,
        status_latency=(0, 30),
        issue_policy: dict | None = None,
    ) -> Scenario:
        sandbox = world
        quick_policies(policy_status=QUICK_STATUS, issue_policy=issue_policy or QUICK_ISSUE, trafik_quote=QUICK_QUOTE)
        for server in sandbox.values():
            server.state.configure(
                latency_ms={"issue_policy": issue_latency, "policy_status": list(status_latency), "*": [0, 30]}, seed=7
            )
        _kick_pump()
        started = [clusters(name, workers=workers, extra_env=(cluster_env or {}).get(name)) for name in ("a", "b")]
        return Scenario(sandbox=sandbox, clusters=started, agents=agents, report=Report(f"chaos-{request.node.name}"))

    return make


def _kick_pump() -> None:
    """The work pump as if its schedule had been running all along: the first pass now, the next
    from the schedule a minute later (a fresh cluster's scheduler first looks after ~30 s)."""
    from datetime import timedelta

    from django.utils import timezone
    from django_q.models import Schedule
    from django_q.tasks import async_task

    Schedule.objects.filter(func="work.tasks.work_pump").update(next_run=timezone.now() + timedelta(seconds=50))
    async_task("work.tasks.work_pump", 50)
