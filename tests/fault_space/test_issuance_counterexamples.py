"""Sequences the fault-space search found, kept as plain tests: each ran into a real bug once.

Each is the search's shrunk counterexample as it printed it (`python -m tests.fault_space`),
so it reads as the steps of the story. Found with the look-up fix of `_Issuance._look_up`
reverted (a refused look-up read as "nothing issued"): at Boğaziçi and at Deniz a worker died
after the insurer made the policy, and the next try's look-up was refused.
"""

from __future__ import annotations

import pytest

from tests.fault_space import issuance

pytestmark = pytest.mark.django_db


@pytest.fixture
def machine(sandbox, agents):
    made: list[issuance.IssuanceSearch] = []

    def make(code: str) -> issuance.IssuanceSearch:
        issuance.ENV = issuance.Search(sandbox=sandbox, agents=agents, insurer=code)
        made.append(issuance.IssuanceSearch())
        return made[-1]

    yield make
    for state in made:
        state.close()
    issuance.ENV = None


def test_bogazici_a_dead_worker_then_a_look_up_refused_as_invalid(machine):
    """The policy is made; the worker dies before storing it; the look-up answers BS-100. The
    outcome stays unknown, and the end finds the one policy (never FAILED while it exists)."""
    state = machine("bogazici")
    state.quote_and_start(lag=0.0)
    state.worker_b_takes_the_next_try(
        answers=[("answered", 0), ("answered", 3), ("answered", 0)], crash=("before_store", 0), record=0
    )
    state.worker_b_takes_the_next_try(answers=[("refused", 0), ("answered", 0), ("answered", 0)], crash=None, record=0)
    state.the_platform_never_says_more_than_the_insurer()
    state.teardown()


def test_deniz_a_dead_worker_then_a_look_up_refused_as_expired_while_the_agent_tries_another_insurer(machine):
    """Deniz made the policy, the worker died, the look-up said QUOTE_EXPIRED: the request stays
    held (the agent's issuance at Anka is refused) and the one policy is found."""
    state = machine("deniz")
    state.quote_and_start(lag=0.0)
    state.worker_b_takes_the_next_try(
        answers=[("answered", 0), ("refused", 0), ("refused", 0)], crash=("before_store", 0), record=0
    )
    state.agent_issues_another_insurers_quote(other="anka")
    state.worker_a_takes_the_next_try(answers=[("refused", 3), ("answered", 0), ("answered", 0)], crash=None, record=0)
    state.at_most_one_policy_per_quote_and_per_request()
    state.the_platform_never_says_more_than_the_insurer()
    assert len(state.records) == 1  # the request was never freed for Anka
    state.teardown()


def test_ege_a_refused_re_send_while_the_first_send_still_commits(machine):
    """Found by the long run (seed 7) on the real engine: Ege deduplicates, so after a send that
    timed out the re-send under the same reference is the question. Its refusal (E_INPUT) came
    while the first send was still running at the insurer, which then committed: the platform
    had said FAILED while the insurer held the policy. A refused question leaves it unknown."""
    state = machine("ege")
    state.quote_and_start(lag=0.0)
    state.worker_b_takes_the_next_try(answers=[("slow", 0), ("answered", 0), ("answered", 0)], crash=None, record=0)
    state.time_passes(seconds=0.1)
    state.time_passes(seconds=0.1)
    state.agent_issues_another_insurers_quote(other="anka")
    state.worker_b_takes_the_next_try(answers=[("refused", 0), ("answered", 0), ("answered", 0)], crash=None, record=0)
    state.at_most_one_policy_per_quote_and_per_request()
    state.the_platform_never_says_more_than_the_insurer()
    state.teardown()
