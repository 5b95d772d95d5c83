"""Test settings: a real database (SQLite file per run, or DATABASE_URL), fast hashing."""

import os

from .base import *  # noqa: F403

DEBUG = False
SECRET_KEY = "test-only-secret-key-not-for-production-use-0123456789"
# DEBUG is off, so nothing derives a credentials key from the secret (integrations.credentials):
# tests, and the benchmark that reuses these settings, carry a fixed key of their own.
CREDENTIALS_KEY = CREDENTIALS_KEY or "dGVzdC1vbmx5LWNyZWRlbnRpYWxzLWtleS0wMDAwMDA="  # noqa: F405
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# The sandbox insurers answer plain http on 127.0.0.1 (integrations.models.Insurer.clean_fields).
INSURER_ALLOW_HTTP = True
# The sandbox insurers run on loopback; the tests' other insurer addresses use the documentation
# TLDs `.example` and `.test` (integrations.insurer_hosts).
INSURER_ALLOW_LOOPBACK = True
INSURER_ALLOWED_HOSTS = INSURER_ALLOWED_HOSTS or [".example", ".test"]  # noqa: F405
SITE_URL = SITE_URL or "http://127.0.0.1:8000"  # noqa: F405

# Tests share one SQLite file (not an in-memory database) so that worker processes started by
# the tests (qcluster, sandbox CLI) see the same data. Workers set INSUREHUB_USE_TEST_DB=1.
# The name is fixed per test run (by the first process, inherited by the workers it starts),
# so that two runs on one machine never share a database file.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    _name = os.environ.setdefault("INSUREHUB_TEST_DB_NAME", f"test-insurehub-{os.getpid()}.sqlite3")
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / _name)}  # noqa: F405
if os.environ.get("INSUREHUB_USE_TEST_DB"):
    _db = DATABASES["default"]  # noqa: F405
    _db["NAME"] = _db.get("TEST", {}).get("NAME") or f"test_{_db['NAME']}"

# The test clusters poll the ORM broker at a tenth of a second, not the product's 0.02 s. Some tests
# run a service by hand (a fetch, an issuance) right after committing what also queued its task,
# while a session-wide qcluster another test started may still be running: the slower poll keeps
# their head start over that cluster (both outcomes are correct; only the test's own is checked).
Q_CLUSTER = {**Q_CLUSTER, "poll": 0.1}  # noqa: F405

# One memory cache per test process, cleared between tests (tests/conftest.py): a test's throttle
# windows and open streams never leak into the next. The shared backends base.py picks (the
# database table, Redis) are tested on their own (tests/insurehub/test_cache_settings.py).
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "insurehub-tests"}}
