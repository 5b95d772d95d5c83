"""Scale-out: two qcluster "machines" sync a few thousand policies on PostgreSQL + Redis; one dies.

The setup of docs/reliability.md ("One machine, or several"): PostgreSQL for the data, Redis as
django-q2's broker and as the shared send-rate / retry-budget state, several `qcluster`
processes. Throughput is the benchmarks' business; here only correctness under a crash is asserted.
"""

from __future__ import annotations

import os
import time
from collections import Counter

import pytest

from tests.conftest import wait_until
from tests.scaleout.harness import (
    AGENCIES,
    CODES,
    FINAL_STATES,
    PREFIX,
    QUICK_STATUS,
    Report,
    budget_bound,
    bulk_policies,
    platform_contracts,
    quick_policies,
    run_states,
    sandbox_contracts,
    sync_start_enqueued,
    wait_all_final,
)

pytestmark = [pytest.mark.scaleout, pytest.mark.django_db(transaction=True)]

POLICIES = int(os.environ.get("SCALEOUT_POLICIES", "2400"))
GONE_PER_INSURER = 3
# What each agency contracted with each insurer (calls per second); the platform is told the
# same, except that Deniz accepts less from ACENTE2 than its contract says: the shared send
# rate must find that out from the throttles.
CONTRACTS = {(code, agency): 30.0 for code in CODES for agency in AGENCIES}
AT_INSURER = {**CONTRACTS, ("deniz", "ACENTE2"): 6.0}
# Faults on every insurer's status call, drawn per call from the sandbox's seeded RNG.
FAULTS = [
    {"operation": "policy_status", "fault": "html", "http_status": 503, "rate": 0.03},
    {"operation": "policy_status", "fault": "reset", "rate": 0.02},
    {"operation": "policy_status", "fault": "garbage", "rate": 0.01},
    {"operation": "policy_status", "fault": "hang", "seconds": 3, "rate": 0.003},
]


def test_two_clusters_sync_thousands_of_policies_and_survive_a_sigkill(world, clusters, probe):
    """2 400 policies, two qclusters; one is SIGKILLed mid-run and started again. Afterwards:

    * none lost: one item per policy, every item final (SUBMITTED, or FAILED for the policies the
      insurer does not know), the statuses the insurers hold stored on the policies;
    * none synced twice: each policy got at most one clean answer from its insurer, except the
      items that were in flight on the killed machine (their lease brought them back: two);
    * the budget: per insurer, status calls <= items x (1 + retry_budget_ratio) + the budget's
      floor per window + throttled answers + the killed in-flight items (`budget_bound`).
    """
    sandbox = world
    report = Report("scaleout-multi-worker-sync")
    sandbox_contracts(sandbox, AT_INSURER)
    platform_contracts(CONTRACTS)
    # An unreadable answer gets as many tries as any failure here: the cap counts every failure
    # before it, so at a cap of 3, "two failures (6 % of calls fail), then garbage (1 %)" DEFERs
    # an item in about one run in ten over ~2,400 items (seen in CI). The cap itself is tested
    # elsewhere (tests/integrations), not what this test is about.
    quick_policies(policy_status={**QUICK_STATUS, "unknown_max_attempts": QUICK_STATUS["max_attempts"]})
    for server in sandbox.values():
        server.state.configure(seed=17)
        server.state.add_faults(FAULTS)
    expected = bulk_policies(POLICIES, tag="SC", cancelled_every=7, sandbox=sandbox)
    gone = _unknown_policies()

    first, second = clusters("a", workers=2), clusters("b", workers=2)
    started = time.monotonic()
    run = sync_start_enqueued()
    total = POLICIES + len(gone)
    assert run.items.count() == total

    # Mid-run: machine "a" dies with no warning, and comes back a few seconds later.
    wait_until(lambda: run_states(run)["SUBMITTED"] >= total * 0.3, timeout=120, interval=0.2)
    first.kill()
    in_flight_at_kill = set(run.items.filter(state="IN_FLIGHT").values_list("payload__policy_no", flat=True))
    report.add(f"killed a at {time.monotonic() - started:.1f} s: {dict(run_states(run))}")
    time.sleep(2)
    first.start()

    try:
        wait_all_final(timeout=240, what="sync items")
    finally:
        report.add(f"after {time.monotonic() - started:.1f} s: {dict(run_states(run))}")
        report.write()
    elapsed = time.monotonic() - started
    report.add(f"all final after {elapsed:.1f} s: {dict(run_states(run))}")
    report.write()

    # None lost: one item per policy, each in a final state.
    items = list(run.items.values_list("payload__policy_no", "state", "observed_status", "error_kind"))
    messages = dict(run.items.values_list("payload__policy_no", "error_message"))
    assert len(items) == total and len({no for no, *_ in items}) == total
    states = Counter(state for _, state, _, _ in items)
    assert set(states) <= set(FINAL_STATES), states
    for number, state, observed, kind in items:
        if number in gone:
            assert state == "FAILED", (number, state, kind, messages[number])
        else:
            assert state == "SUBMITTED", (number, state, kind, messages[number])
            assert observed == expected[number], (number, observed)
    from policies.models import Policy

    stored = dict(Policy.objects.filter(policy_no__in=list(expected)).values_list("policy_no", "status"))
    assert stored == expected
    wait_until(lambda: type(run).objects.get(pk=run.pk).finished_at, timeout=90)

    # None synced twice: one clean answer per policy (two only for what died in flight).
    clean = Counter(e.key for e in probe.calls(operation="policy_status") if e.clean)
    twice = {no: n for no, n in clean.items() if n > 1 and no not in in_flight_at_kill}
    assert not twice, f"policies synced twice in one run: {dict(list(twice.items())[:10])}"
    assert all(clean[no] <= 2 for no in in_flight_at_kill)
    assert set(clean) >= set(expected)

    # The budget: per insurer, never more calls than the retry budget allows.
    ratio = QUICK_STATUS["retry_budget_ratio"]
    for code in CODES:
        calls = probe.calls(operation="policy_status", insurer=code)
        records = sum(1 for no, *_ in items if no.startswith(PREFIX[code] + "-"))
        throttled = sum(1 for e in calls if e.note == "throttled" or "throttle" in e.note)
        reclaimed = sum(1 for no in in_flight_at_kill if no.startswith(PREFIX[code] + "-"))
        bound = budget_bound(
            first_attempts=records, ratio=ratio, seconds=elapsed, throttled=throttled, reclaimed=reclaimed
        )
        report.add(f"{code}: {len(calls)} calls for {records} items ({throttled} throttled), bound {bound}")
        assert len(calls) <= bound, f"{code}: {len(calls)} status calls for {records} items, budget allows {bound}"
    report.write()
    assert first.kills == 1 and second.alive


def _unknown_policies() -> set[str]:
    """A few policies no insurer knows (a malformed number): FAILED `not_found`, a dead letter."""
    from integrations.models import InsurerAccount
    from policies.models import Policy

    numbers = set()
    for account in InsurerAccount.objects.select_related("insurer", "agency").filter(agency__code="ACENTE1"):
        for i in range(GONE_PER_INSURER):
            number = f"{PREFIX[account.insurer.code]}-GONE-{i}"
            Policy.objects.create(
                agency=account.agency,
                insurer=account.insurer,
                account=account,
                product="trafik",
                policy_no=number,
                owner_id="10000000146",
            )
            numbers.add(number)
    return numbers
