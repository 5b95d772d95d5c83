"""Every SQLite database gets the tuning for several processes, however it is configured.

`DATABASE_URL=sqlite:///…` once got dj-database-url's bare connection: DEFERRED transactions
and a 5 s timeout, so two issuance starts at once failed with "database is locked".
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from insurehub.settings.base import databases_from_env
from tests.conftest import REPO_ROOT

PROCESSES = 2
TRANSACTIONS = 150


def assert_tuned(database: dict) -> None:
    options = database["OPTIONS"]
    assert options["transaction_mode"] == "IMMEDIATE"
    assert options["timeout"] >= 30
    assert "journal_mode=WAL" in options["init_command"]
    assert "busy_timeout=30000" in options["init_command"]


def test_sqlite_database_url_gets_the_embedded_defaults_tuning():
    """WAL, IMMEDIATE transactions and a 30 s busy timeout for `sqlite:///…` as for the default file."""
    from_url = databases_from_env({"DATABASE_URL": "sqlite:////tmp/x.db"})["default"]
    embedded = databases_from_env({})["default"]

    assert from_url["NAME"] == "/tmp/x.db"
    assert_tuned(from_url)
    assert_tuned(embedded)
    assert from_url["OPTIONS"] == embedded["OPTIONS"]


def test_options_in_the_sqlite_url_win_over_the_tuning():
    """An operator who writes `?timeout=…` in the URL means it; the rest of the tuning stays."""
    database = databases_from_env({"DATABASE_URL": "sqlite:////tmp/x.db?timeout=90"})["default"]
    assert database["OPTIONS"]["timeout"] == 90
    assert database["OPTIONS"]["transaction_mode"] == "IMMEDIATE"


def test_postgresql_url_gets_no_sqlite_options():
    """The tuning is SQLite's only: PostgreSQL keeps its pool and nothing else."""
    database = databases_from_env({"DATABASE_URL": "postgres://u:p@db:5432/insurehub"})["default"]
    assert set(database["OPTIONS"]) == {"pool"}


def test_embedded_default_lives_in_the_var_dir_from_the_environment(tmp_path):
    """INSUREHUB_VAR_DIR read from the mapping given, not from the process's environment."""
    database = databases_from_env({"INSUREHUB_VAR_DIR": str(tmp_path)})["default"]
    assert Path(database["NAME"]) == tmp_path / "insurehub.sqlite3"


def writer() -> None:
    """One process of the concurrency test: read-then-write transactions, as issuance starts do."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "insurehub.settings.test")
    import django

    django.setup()
    from django.db import OperationalError, connection, transaction

    who, go_file = sys.argv[1], Path(sys.argv[2])
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        print(f"ready {cursor.fetchone()[0]}", flush=True)
    while not go_file.exists():
        time.sleep(0.005)
    failures: list[str] = []
    for _ in range(TRANSACTIONS):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                # Read first, write after: under DEFERRED transactions the lock upgrade is where
                # SQLite gives up at once with "database is locked", busy timeout or not.
                cursor.execute("SELECT COALESCE(MAX(n), 0) FROM ticket")
                latest = cursor.fetchone()[0]
                time.sleep(0.001)
                cursor.execute("INSERT INTO ticket (n, who) VALUES (%s, %s)", [latest + 1, who])
        except OperationalError as exc:
            failures.append(str(exc))
    print(f"done {len(failures)} {failures[:1]}", flush=True)


def test_two_processes_write_one_sqlite_file_from_database_url_without_locking(tmp_path):
    """Two processes on `DATABASE_URL=sqlite:///…` write in overlapping transactions: none fails
    with "database is locked", and each read-then-write saw the other's committed rows."""
    path = tmp_path / "shared.sqlite3"
    with sqlite3.connect(path) as setup:
        setup.execute("CREATE TABLE ticket (n INTEGER NOT NULL UNIQUE, who TEXT NOT NULL)")
    go_file = tmp_path / "go"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "insurehub.settings.test", "DATABASE_URL": f"sqlite:///{path}"}
    for name in ("INSUREHUB_USE_TEST_DB", "PYTEST_CURRENT_TEST"):
        env.pop(name, None)
    command = [sys.executable, "-c", "from tests.insurehub.test_settings_sqlite import writer; writer()"]
    processes = [
        subprocess.Popen(
            [*command, f"P{n}", str(go_file)],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    try:
        # Both connected (and each reports its journal mode) before either starts writing.
        ready = [process.stdout.readline().split() for process in processes]
        assert ready == [["ready", "wal"]] * PROCESSES, [p.stderr.read()[-2000:] for p in processes if p.poll()]
        go_file.touch()
        outputs = [process.communicate(timeout=60) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()

    for process, (out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err[-2000:]
        assert out.strip() == "done 0 []", out
    with sqlite3.connect(path) as check:
        numbers = [n for (n,) in check.execute("SELECT n FROM ticket ORDER BY n")]
    assert numbers == list(range(1, PROCESSES * TRANSACTIONS + 1))
