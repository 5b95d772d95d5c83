"""Chaos: while quotes, issuances and a sync run on two qclusters, one fault family strikes per test.

Each test ends the same way (`Scenario.recover`, `assert_invariants`, `assert_healthy`, see
conftest): zero duplicate policies at every insurer, every record in exactly one final state,
nothing lost, and new work completing again with nobody's help.
"""

from __future__ import annotations

import time

import pytest

from tests.conftest import wait_until
from tests.scaleout.harness import QUICK_ISSUE, service_script, skewed_clock_env

pytestmark = [pytest.mark.chaos, pytest.mark.django_db(transaction=True)]

REQUESTS = 16
POLICIES = 300


def start_work(scenario, *, tag: str) -> list:
    """Quotes, then an issuance per request as each quote arrives, and a sync run beside them."""
    requests = scenario.ask_quotes(REQUESTS)
    scenario.sync(POLICIES, tag=tag)
    issuances = scenario.issue_as_quoted(requests)
    scenario.note(f"started {len(issuances)} issuances and a sync of {POLICIES}: {scenario.counts()}")
    return issuances


def test_sigkill_mid_issuance_and_mid_sync(scenario):
    """A whole machine (qcluster and its workers) dies mid-issuance and mid-sync, and one worker process
    of the other machine dies too; the dead machine comes back. Their in-flight records come back when
    their leases expire; an issuance that may have reached the insurer asks before sending again."""
    # The kill must find both kinds in flight. A sync queued before the quotes was often over (300
    # quick status calls take about a second) before the first issuance started. Here each issuance
    # takes 2-3.5 s at the insurer, so they queue up behind the quotes; the sync is sent after them
    # and its drain starts while the last ones are still being issued; its status calls take ~250 ms
    # (300 of them on 16 threads: about five seconds in flight).
    world = scenario(
        issue_latency=[2000, 3500],
        issue_policy={**QUICK_ISSUE, "attempt_timeout": 5.0, "deadline": 12.0},
        status_latency=(150, 350),
    )
    first, second = world.clusters
    requests = world.ask_quotes(REQUESTS)
    issuances = world.issue_as_quoted(requests)
    world.sync(POLICIES, tag="K")
    world.note(f"started {len(issuances)} issuances, then a sync of {POLICIES}: {world.counts()}")
    wait_until(lambda: world.in_flight("Issuance") and world.in_flight("SyncItem"), timeout=30, interval=0.05)
    in_flight = (world.in_flight("Issuance"), world.in_flight("SyncItem"))
    first.kill()
    victim = second.kill_one_worker()
    world.note(f"SIGKILL cluster a and worker {victim} of b with {in_flight} issuances/sync items in flight")
    time.sleep(2)
    first.start()
    world.recover()
    world.assert_invariants(issuances_expected=REQUESTS)
    world.assert_healthy()


def test_insurers_commit_an_issuance_and_drop_the_answer(scenario):
    """Each insurer performs an issuance and then never answers: the connection is reset, or hangs past
    the read timeout, or the answer is an error that hides a committed policy (Boğaziçi BS-902). The
    platform must find the policy the insurer made, never make a second one."""
    world = scenario()
    drops = {
        "anka": [{"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset", "times": 2}],
        "bogazici": [
            {"operation": "issue_policy", "fault": "commit_then_drop", "drop": "hang", "seconds": 4, "times": 1},
            {"operation": "issue_policy", "fault": "error", "code": "BS-902", "commit": True, "times": 1},
        ],
        "cinar": [{"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset", "times": 2}],
        "deniz": [
            {"operation": "issue_policy", "fault": "commit_then_drop", "drop": "hang", "seconds": 4, "times": 1},
            {"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset", "times": 1},
        ],
    }
    # An insurer with no drop of its own here (a new one) gets the plainest: commit, then reset.
    plain = [{"operation": "issue_policy", "fault": "commit_then_drop", "drop": "reset", "times": 2}]
    for code, server in world.sandbox.items():
        server.state.add_faults(drops.get(code, plain))
    start_work(world, tag="D")
    world.recover()
    for code, server in world.sandbox.items():
        applied = sum(rule["applied"] for rule in server.state.faults())
        assert applied >= 1, f"{code}: no issuance was dropped, the test proved nothing"
    world.assert_invariants(issuances_expected=REQUESTS)
    world.assert_healthy()


def test_postgres_and_redis_restart(scenario):
    """PostgreSQL restarts (every connection cut), then Redis restarts (the broker's queue and the shared
    rate/budget state are lost: it keeps nothing on disk). Workers reconnect; records whose tasks were
    lost are found and sent again."""
    world = scenario()
    start_work(world, tag="R")
    wait_until(lambda: world.in_flight("Issuance") or world.in_flight("SyncItem"), timeout=30, interval=0.05)
    service_script("postgres", "stop")
    world.note("postgres stopped")
    time.sleep(2)
    service_script("postgres", "start")
    world.note("postgres started")
    _reconnect()
    time.sleep(3)
    service_script("redis", "restart")
    world.note(f"redis restarted: {world.counts()}")
    world.recover()
    world.assert_invariants(issuances_expected=REQUESTS)
    assert all(cluster.alive for cluster in world.clusters), "a qcluster died with a service restart"
    world.assert_healthy()


def test_insurer_hangs_and_answers_garbage(scenario):
    """Insurers hang (read the request, send no byte), answer truncated JSON or XML, the right answer under
    the wrong content type, and Boğaziçi an XML bomb. Quotes, issuances and status checks all meet them;
    nothing parses a bomb, nothing waits forever, and an issuance whose answer was unreadable is looked
    up before it is sent again."""
    world = scenario()
    business = ("trafik_quote", "issue_policy", "policy_status")
    for code, server in world.sandbox.items():
        rules = []
        for operation in business:
            rules += [
                {"operation": operation, "fault": "hang", "seconds": 4, "rate": 0.05},
                {"operation": operation, "fault": "garbage", "rate": 0.05},
                {"operation": operation, "fault": "wrong_content_type", "rate": 0.05},
            ]
            if code == "bogazici":
                rules.append({"operation": operation, "fault": "xml_bomb", "rate": 0.05})
        server.state.add_faults(rules)
    start_work(world, tag="G")
    world.recover()
    _assert_every_fault_seen(world)
    # Two unreadable answers in a row are a dead letter (unknown codes are capped at two tries).
    world.assert_invariants(issuances_expected=REQUESTS, dead_letters_allowed=True)
    world.assert_healthy()


def test_clock_skew_of_one_worker(scenario, probe):
    """Machine "b"'s wall clock is five minutes behind (`skewed_clock_env`: time.time and datetime.now are
    off, the monotonic clock is right). Leases and retry times it writes are then in the past for
    everybody else, and it sees everybody's as far in the future: neither may make a record run twice
    at once (no second policy, no status asked twice), and nothing may wait five minutes for it."""
    world = scenario(cluster_env={"b": skewed_clock_env(-300)})
    start_work(world, tag="S")
    world.recover()
    world.assert_invariants(issuances_expected=REQUESTS)
    clean = {}
    for event in probe.calls(operation="policy_status"):
        if event.clean:
            clean[event.key] = clean.get(event.key, 0) + 1
    twice = {key: n for key, n in clean.items() if n > 1}
    assert not twice, f"policies synced twice in one run with a skewed worker: {twice}"
    world.assert_healthy()


def test_two_machines_20_s_apart_wait_out_bogazicis_settling_time(scenario):
    """Machine "b"'s wall clock is 20 s behind "a"'s, and Boğaziçi commits every Policelestir 5 s
    after receiving it, past our 2 s read timeout (its settling time scaled to 12 s). Whichever
    machine sent a request and whichever asks next, the send's age is read on the database's
    clock: nobody re-sends inside the settling time, so every quote has exactly one policy."""
    from tests.scaleout.harness import QUICK_ISSUE

    world = scenario(cluster_env={"b": skewed_clock_env(-20)}, issue_policy={**QUICK_ISSUE, "settling_seconds": 12.0})
    world.sandbox["bogazici"].state.add_faults(
        [{"operation": "issue_policy", "fault": "latency", "seconds": 5.0, "times": None}]
    )
    requests = world.ask_quotes(REQUESTS)
    issuances = world.issue_as_quoted(requests)
    world.note(f"started {len(issuances)} issuances with machine b 20 s behind: {world.counts()}")
    world.recover()
    world.assert_invariants(issuances_expected=REQUESTS)
    counts = world.sandbox["bogazici"].state.counts()
    assert counts["issued_total"] == len(counts["policies_by_quote"]) >= 1, counts
    world.assert_healthy()


def _reconnect() -> None:
    """The test process's own connection died with PostgreSQL; the workers reconnect by themselves."""
    from django.db import connection

    connection.close()


def _assert_every_fault_seen(world) -> None:
    from integrations.models import Attempt

    kinds = set(Attempt.objects.exclude(error_kind="").values_list("error_kind", flat=True))
    world.note(f"error kinds recorded: {sorted(kinds)}")
    world.report.write()
    assert "timeout" in kinds, kinds
