"""The scale-out database pool (Django's psycopg pool on PostgreSQL), across forks and insurer waits."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from integrations.calling.calls import endpoint_resolve, insurer_operation_run
from tests.conftest import in_forked_child

pytestmark = [pytest.mark.scaleout, pytest.mark.django_db(transaction=True)]

QUOTE_FIELDS = {"plate": "34ABC123", "owner_id": "10000000146", "registration_serial": "AB123456", "usage": "private"}


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def test_postgres_runs_on_the_pool(engines):
    assert connection.settings_dict["OPTIONS"]["pool"]["max_size"] >= 1
    assert connection.settings_dict["CONN_MAX_AGE"] == 0
    assert connection.pool is not None


def test_a_forked_child_opens_its_own_session_and_the_parents_survives(engines):
    """A child that used the inherited pooled connection would talk on the parent's session:
    it must get a session of its own, and the parent's must be intact afterwards."""
    parent_pid = _backend_pid()
    exit_code, seen = in_forked_child(lambda: str(_backend_pid()))
    child_pid = int(seen or 0)

    assert exit_code == 0
    assert child_pid not in (0, parent_pid)
    assert _backend_pid() == parent_pid  # the same session, still answering


def test_an_insurer_call_does_not_hold_a_pooled_connection(world, seeded_accounts):
    """The connection goes back to the pool while the insurer thinks (here: a 2 s hang), so a
    few slow insurers cannot drain the pool for everyone; the attempt is still recorded."""
    from integrations.models import Attempt

    world["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "hang", "seconds": 2, "times": 1}])
    account = next(a for a in seeded_accounts if a.insurer.code == "anka")
    endpoint = endpoint_resolve(insurer_code="anka", agency_code=account.agency.code)
    _backend_pid()
    pool = connection.pool

    def borrowed() -> int:
        stats = pool.get_stats()
        return stats["pool_size"] - stats["pool_available"]

    assert borrowed() >= 1  # this thread holds one now
    seen: list[int] = []
    stop = threading.Event()

    def sample() -> None:  # another thread, with no connection of its own
        while not stop.is_set():
            seen.append(borrowed())
            stop.wait(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        outcome = insurer_operation_run(
            endpoint=endpoint,
            operation="trafik_quote",
            data=QUOTE_FIELDS,
        )
    finally:
        stop.set()
        sampler.join()

    assert outcome.attempts >= 1
    assert Attempt.objects.filter(insurer_code="anka", operation="trafik_quote").count() == outcome.attempts
    # Samples 0.15–0.5 s into the call (later on a slow machine) fall inside the hang: nobody held a connection.
    assert len(seen) >= 10 and seen[3:10] == [0] * 7, seen
