"""Cancellation sequences the fault-space search found, kept as plain tests.

Found by the search itself: Deniz accepted a cancellation and made it, then the poll that asked
for its state was answered by an error body carrying the code `REJECTED`. The poll loop took the
word for Deniz's verdict and the platform said FAILED while the policy was cancelled there. Only
a poll's `status: REJECTED` is Deniz's "no"; a refused poll answers the poll.
"""

from __future__ import annotations

import pytest

from tests.fault_space import cancellation, issuance

pytestmark = pytest.mark.django_db


@pytest.fixture
def machine(sandbox, agents):
    made: list[cancellation.CancellationSearch] = []

    def make(code: str) -> cancellation.CancellationSearch:
        cancellation.ENV = issuance.Search(sandbox=sandbox, agents=agents, insurer=code)
        made.append(cancellation.CancellationSearch())
        return made[-1]

    yield make
    for state in made:
        state.close()
    cancellation.ENV = None


def test_deniz_a_poll_refused_with_the_word_rejected_after_the_cancellation_was_made(machine):
    state = machine("deniz")
    state.a_policy_in_force_and_its_cancellation(reason="customer_request")
    state.worker_a_takes_the_next_try(answers=[("answered", 0), ("refused", 5), ("answered", 0)], crash=None)
    state.cancelled_at_most_once_under_one_reference()
    state.the_platform_never_says_more_than_the_insurer()
    state.teardown()
