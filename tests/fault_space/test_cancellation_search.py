"""The bounded fault-space search over cancellation, in the normal suite (fixed seed, a few
minutes); `python -m tests.fault_space --operation cancel_policy` runs it longer."""

from __future__ import annotations

import pytest

from tests.fault_space import cancellation, issuance
from tests.fault_space.test_issuance_search import INSURERS, record_explored, run_search

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("code", INSURERS)
def test_no_fault_sequence_cancels_twice_or_leaves_a_wrong_state(sandbox, agents, code):
    """At every step: cancelled at most once, under the one reference, the platform never ahead of
    the insurer; at the end, the two agree."""
    cancellation.ENV = issuance.Search(sandbox=sandbox, agents=agents, insurer=code)
    try:
        run_search(cancellation.CancellationSearch)
    finally:
        cancellation.ENV = None
        record_explored("cancel_policy", code, cancellation.EXPLORED[code])
