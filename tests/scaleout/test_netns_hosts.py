"""Scale-out across hosts: two worker hosts (network namespaces) sync policies; one is cut off.

The hosts are made by `bench/netns.py` on this machine (root and `ip` needed, else the test
skips saying why): a db host with PostgreSQL, Redis and the sandbox insurers, a delaying proxy
(a few ms each way) in front of PostgreSQL and Redis, and two worker hosts each running a real
`manage.py qcluster` that reaches all of it over its veth. The run's database is the db host's,
not pytest's: a controller process on the Unix sockets prepares and reads it (`bench/hosts_ctl.py`).

Mid-sync, host 1's cable is pulled for 10 s (the db end of its veth down) and put back. What the
platform promises, and what this asserts:

* nothing is lost and nothing is done twice: one item per policy, every one SUBMITTED with the
  status its insurer holds, stored on the policy; each policy got exactly one clean answer from
  its insurer, except the items in flight when the cable was pulled: their calls may have reached
  the insurer with the answer lost on the way back, so a retry (or the lease, had the cut outlived
  it) asks once more — a status read, harmless — and never more than twice;
* the cut is real: host 1's calls stop reaching the insurers while its link is down;
* the other host carries on meanwhile, and the cut host rejoins: after the link is back it
  finishes what it held (its lease, ~36 s here, outlives the 10 s cut, so nobody took it back)
  and does new work.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from bench import hosts_ctl
from bench.netns import HostProbe, Hosts, unavailable
from tests.conftest import ARTIFACTS_DIR

pytestmark = [pytest.mark.scaleout]

POLICIES = int(os.environ.get("NETNS_POLICIES", "4000"))
CODES = ("anka", "bogazici", "cinar", "deniz")
CUT_SECONDS = 10.0
CANCELLED_EVERY = 7
# Status checks in seconds, as the other scale-out suites run them: the lease is
# min(deadline, 4 x (timeout + connect)) + 30 s, ~36 s, longer than the cut.
QUICK_STATUS = {
    "max_attempts": 6,
    "base_delay": 0.1,
    "max_delay": 0.5,
    "deadline": 6.0,
    "attempt_timeout": 2.0,
    "unknown_max_attempts": 6,
    "retry_budget_ratio": 0.5,
}


@pytest.fixture
def hosts():
    why = unavailable()
    if why:
        pytest.skip(f"network namespaces unavailable: {why}")
    log_dir = Path(ARTIFACTS_DIR) / "netns-hosts"
    made = Hosts(2, delay_ms=2.0, log_dir=log_dir)
    try:
        yield made.start()
    finally:
        made.close()
        assert not made.leftovers(), f"namespaces left behind: {made.leftovers()}"


def test_a_worker_host_cut_off_mid_sync_loses_nothing_and_rejoins(hosts):
    report = []
    servers = hosts.start_sandbox(CODES, {"known_policies_only": False, "latency_ms": [20, 60]})
    probe = HostProbe(servers)
    for server in servers.values():
        server.state.add_accounts([{**a, "rate_per_second": 60.0, "burst": 20} for a in _accounts(server.code)])
    local = hosts.local_env()
    prepared = hosts_ctl.call(
        local,
        "prepare",
        {
            "urls": {code: server.base_url for code, server in servers.items()},
            "codes": list(CODES),
            "contract": 60.0,
            "count": POLICIES,
            "tag": "NS",
            "operation_policies": {"policy_status": QUICK_STATUS},
        },
    )
    expected = {}
    for i, (number, code) in enumerate(prepared["policies"]):
        cancelled = i % CANCELLED_EVERY == 0
        expected[number] = "CANCELLED" if cancelled else "ACTIVE"
        if cancelled:
            servers[code].state.seed_policies([{"policy_no": number, "status": "CANCELLED"}])

    env = hosts.worker_env(Q_WORKERS="2", SYNC_DRAIN_THREADS="4", SYNC_DRAIN_SECONDS="10", LOG_LEVEL="WARNING")
    one, two = hosts.qcluster(1, env), hosts.qcluster(2, env)
    hosts_ctl.call(local, "clusters", {"count": 2, "timeout": 120})
    run = hosts_ctl.call(local, "enqueue", {"drains": 8})
    assert run["queued"] == POLICIES
    started = time.time()

    hosts_ctl.call(local, "wait", {"run": run["run"], "submitted": int(POLICIES * 0.3), "timeout": 180})
    hosts.cut(1)
    cut_at = time.time()
    at_cut = hosts_ctl.call(local, "wait", {"run": run["run"], "submitted": 0})
    in_flight_at_cut = set(at_cut["in_flight"])
    report.append(f"cut host 1 at {cut_at - started:.1f} s: {at_cut['states']}, {len(in_flight_at_cut)} in flight")
    time.sleep(max(0.0, cut_at + CUT_SECONDS - time.time()))
    hosts.mend(1)
    mended_at = time.time()

    done = hosts_ctl.call(local, "wait", {"run": run["run"], "timeout": 300}, timeout=360)
    report.append(f"after {time.time() - started:.1f} s: {done['states']}")
    result = hosts_ctl.call(local, "report", {"run": run["run"], "finished_within": 90})
    calls = probe.calls(operation="policy_status")
    by_host = {n: [e for e in calls if e.peer == hosts.worker_ip(n)] for n in (1, 2)}
    during = {n: [e for e in by_host[n] if cut_at + 1.0 < e.at < mended_at] for n in (1, 2)}
    after = [e for e in by_host[1] if e.at > mended_at]
    report.append(
        f"calls by host: {{1: {len(by_host[1])}, 2: {len(by_host[2])}}}; during the cut: "
        f"{{1: {len(during[1])}, 2: {len(during[2])}}}; host 1 after: {len(after)}"
    )
    (Path(ARTIFACTS_DIR) / "scaleout-netns-hosts.txt").write_text("\n".join(report) + "\n", encoding="utf-8")
    assert one.poll() is None and two.poll() is None, "a qcluster exited"
    assert done["done"], f"items still open: {done['states']}"

    # Nothing lost: one item per policy, each SUBMITTED with the insurer's status, stored.
    items = result["items"]
    assert len(items) == POLICIES and {row[0] for row in items} == set(expected)
    assert Counter(row[1] for row in items) == {"SUBMITTED": POLICIES}, Counter(row[1] for row in items)
    for number, _, observed, *_ in items:
        assert observed == expected[number], (number, observed)
    assert {no: result["stored"][no] for no in expected} == expected
    assert result["finished"], "the run was never marked finished"
    # The lease (~36 s) outlives the cut: no item was taken back from the cut host; it finished
    # what it held itself once its link was back (its late writes are under the lease it claimed).
    assert sum(row[4] for row in items) == 0, [row for row in items if row[4]][:10]

    # Nothing done twice: one clean answer per policy; two at most for what was in flight at the cut.
    clean = Counter(e.key for e in calls if e.clean)
    assert set(clean) >= set(expected)
    twice = {no: n for no, n in clean.items() if n > 1 and no not in in_flight_at_cut}
    assert not twice, f"policies synced twice: {dict(list(twice.items())[:10])}"
    assert all(clean[no] <= 2 for no in in_flight_at_cut), {no: clean[no] for no in in_flight_at_cut if clean[no] > 2}

    # The cut was real, the other host carried on, and the cut host rejoined with new work.
    assert not during[1], f"host 1 reached the insurers while cut off: {during[1][:5]}"
    assert len(during[2]) >= 20, f"host 2 did {len(during[2])} calls while host 1 was cut off"
    fresh = {e.key for e in after if e.clean} - in_flight_at_cut
    assert len(fresh) >= 10, f"host 1 synced {len(fresh)} new policies after its link came back"


def _accounts(code: str) -> list[dict]:
    from sandbox import DEFAULT_ACCOUNTS

    return list(DEFAULT_ACCOUNTS[code])
