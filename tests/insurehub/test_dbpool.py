"""Database connections across forks and insurer waits (the embedded default: SQLite).

The pooled PostgreSQL side is in tests/scaleout/test_db_pool.py (phase 2).
"""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from insurehub import dbpool
from tests.conftest import in_forked_child

pytestmark = pytest.mark.django_db(transaction=True)


def _what_the_child_sees() -> str:
    inherited = connection.connection is not None
    with connection.cursor() as cursor:
        cursor.execute("SELECT 41 + 1")
        return f"{inherited} {cursor.fetchone()[0]}"


def test_a_forked_child_never_uses_its_parents_connection():
    """django-q2 forks its workers: the child starts without the parent's connection, opens its
    own, and the parent's keeps working afterwards."""
    dbpool.install_fork_guard()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    parents = connection.connection
    assert parents is not None

    exit_code, seen = in_forked_child(_what_the_child_sees)

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
