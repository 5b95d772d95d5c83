"""Benchmark settings: the test settings on a fresh SQLite file of the benchmark's own.

`python -m bench` sets `BENCH_DB_PATH` (a file in a temporary directory) before Django starts,
and the qcluster processes it starts inherit it. `DATABASE_URL` is ignored on purpose: the
benchmark must never touch a real database. The fan-out scenario's scale-out run sets
`BENCH_DATABASE_URL` to a throw-away PostgreSQL cluster the benchmark started for itself.
"""

import os
import tempfile

from insurehub.settings import base as _product_settings
from insurehub.settings.test import *  # noqa: F403
from insurehub.settings.test import MIDDLEWARE as _TEST_MIDDLEWARE  # named: the screen bench extends it

_path = os.environ.get("BENCH_DB_PATH") or os.path.join(tempfile.gettempdir(), f"insurehub-bench-{os.getpid()}.sqlite3")
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": _path,
        "CONN_MAX_AGE": 60,  # as the embedded default (insurehub.settings.base.databases_from_env)
        "OPTIONS": {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL;PRAGMA busy_timeout=30000;",
        },
    }
}

if os.environ.get("BENCH_DATABASE_URL"):  # as production reads DATABASE_URL (insurehub.settings.base)
    DATABASES = {"default": database_from_url(os.environ["BENCH_DATABASE_URL"])}  # noqa: F405

# The desk-load scenario (bench/s10_desk_load.py) serves through gunicorn's several workers: the
# open live-stream slots must be counted where every worker (and the bench, after) sees them —
# the database cache table, as production without Redis.
if os.environ.get("BENCH_CACHE") == "db":
    CACHES = _product_settings.caches_from_env({})

# The shared send-rate/retry-budget state and django-q2's broker: Redis only when the benchmark
# asks for it (the fan-out scenario's Redis run), whatever REDIS_URL the shell has.
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "")
Q_CLUSTER = {k: v for k, v in Q_CLUSTER.items() if k not in ("orm", "redis")}  # noqa: F405
# The product's broker poll, not the test clusters' slower one: the fan-out measures what ships.
Q_CLUSTER["poll"] = _product_settings.Q_CLUSTER["poll"]
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"

# The screen's PostgreSQL + Redis flavour serves the desk through gunicorn, which serves no static
# files itself: WhiteNoise, straight from the apps' folders, as the demo settings do.
if os.environ.get("BENCH_STATIC") == "whitenoise":
    _security = _TEST_MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1
    _whitenoise = "whitenoise.middleware.WhiteNoiseMiddleware"
    MIDDLEWARE = [*_TEST_MIDDLEWARE[:_security], _whitenoise, *_TEST_MIDDLEWARE[_security:]]
    WHITENOISE_USE_FINDERS = True

# One log line per attempt would be the loudest thing in the run: keep warnings and errors only.
LOGGING = {
    **LOGGING,  # noqa: F405
    "root": {"handlers": ["console"], "level": os.environ.get("BENCH_LOG_LEVEL", "WARNING")},
    "loggers": {
        **LOGGING["loggers"],  # noqa: F405
        "integrations.attempts": {"level": "ERROR"},
        "sync": {"level": "ERROR"},
        "django_q": {"level": "ERROR"},
    },
}
