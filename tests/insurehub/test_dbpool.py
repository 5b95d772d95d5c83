"""Database connections across forks and insurer waits (the embedded default: SQLite).

The pooled PostgreSQL side is in tests/scaleout/test_db_pool.py (phase 2).
"""

from __future__ import annotations

import os

import pytest
from django.db import connection, transaction

from insurehub import dbpool

pytestmark = pytest.mark.django_db(transaction=True)


def _child_query_result() -> tuple[int, str]:
    """Fork; the child runs a query on its own connection and reports what it saw."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave at once (no atexit, no test-runner teardown)
        status = 1
        try:
            inherited = connection.connection is not None
            with connection.cursor() as cursor:
                cursor.execute("SELECT 41 + 1")
                value = cursor.fetchone()[0]
            os.write(write_end, f"{inherited} {value}".encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read_end) as pipe:
        return os.waitstatus_to_exitcode(status), pipe.read()


def test_a_forked_child_never_uses_its_parents_connection():
    """django-q2 forks its workers: the child starts without the parent's connection, opens its
    own, and the parent's keeps working afterwards."""
    dbpool.install_fork_guard()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    parents = connection.connection
    assert parents is not None

    exit_code, seen = _child_query_result()

    assert (exit_code, seen) == (0, "False 42")
    assert connection.connection is parents
    with connection.cursor() as cursor:
        cursor.execute("SELECT 2")
        assert cursor.fetchone() == (2,)


def test_release_keeps_an_unpooled_connection_open():
    """Without a pool, closing before each insurer call would only cost a reconnect."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    before = connection.connection

    dbpool.db_connection_release()

    assert connection.connection is before


def test_release_never_closes_inside_a_transaction(settings):
    """Even with a pool configured, a caller's open transaction is never cut short."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        inside = connection.connection
        connection.settings_dict.setdefault("OPTIONS", {})["pool"] = True
        try:
            dbpool.db_connection_release()
        finally:
            connection.settings_dict["OPTIONS"].pop("pool")
        assert connection.connection is inside
