"""The bounded fault-space search over issuance, in the normal suite: a fixed seed, a few minutes.

`python -m tests.fault_space` runs the same search for longer, with any seed
(docs/issuance-safety.md, "Running it"). A counterexample it finds becomes a plain test in
`tests/fault_space/test_issuance_counterexamples.py`.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, Verbosity, settings
from hypothesis.stateful import run_state_machine_as_test

from integrations.adapters.registry import registered_codes
from tests.fault_space import issuance

pytestmark = pytest.mark.django_db

# The suite's bound; the long run sets these through the environment.
EXAMPLES = int(os.environ.get("FAULT_SPACE_EXAMPLES", "15"))
STEPS = int(os.environ.get("FAULT_SPACE_STEPS", "14"))
# Unset: one fixed derandomised run (the suite); set: that seed's own sequences (the long run).
SEED = os.environ.get("FAULT_SPACE_SEED")
# Every registered insurer, or those the long run names (comma-separated).
INSURERS = [c for c in registered_codes() if c in os.environ.get("FAULT_SPACE_INSURERS", c).split(",")]


def search_settings() -> settings:
    return settings(
        max_examples=EXAMPLES,
        stateful_step_count=STEPS,
        deadline=None,
        derandomize=SEED is None,
        database=None,
        print_blob=True,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.verbose if os.environ.get("FAULT_SPACE_VERBOSE") else Verbosity.normal,
    )


def run_search(machine: type) -> None:
    """Run a state machine under the search's settings (and the long run's seed, when given)."""
    run = lambda: run_state_machine_as_test(machine, settings=search_settings())  # noqa: E731
    if SEED is not None:
        from hypothesis import seed

        run = seed(int(SEED))(run)
    run()


def record_explored(operation: str, code: str, sequences: int) -> None:
    """For the long run's report: how many sequences one insurer's search explored."""
    report = os.environ.get("FAULT_SPACE_REPORT")
    if report:
        with open(report, "a", encoding="utf-8") as out:
            out.write(json.dumps({"operation": operation, "insurer": code, "sequences": sequences}) + "\n")


@pytest.mark.parametrize("code", INSURERS)
def test_no_fault_sequence_makes_two_policies_or_a_wrong_state(sandbox, agents, code):
    """At every step: one policy per quote and per request at most, the platform's state never
    ahead of the insurer's, no send beyond the budget; at the end, the two agree."""
    issuance.ENV = issuance.Search(sandbox=sandbox, agents=agents, insurer=code)
    try:
        run_search(issuance.IssuanceSearch)
    finally:
        issuance.ENV = None
        record_explored("issue_policy", code, issuance.EXPLORED[code])
