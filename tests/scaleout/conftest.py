"""Fixtures for the scale-out suite: N qcluster processes on PostgreSQL + Redis, a sandbox probe.

Phase 2 of `scripts/test.sh` starts PostgreSQL and Redis with the project's scripts and exports
DATABASE_URL and REDIS_URL; settings then make Redis django-q2's broker and the home of the
shared send-rate and retry-budget state. Each test gets fresh clusters (SIGKILLed at its end),
a flushed Redis, a reset sandbox and a flushed test database. The fixtures live in `harness`,
shared with the chaos suite.
"""

from tests.scaleout.harness import clusters, engines, probe, world  # noqa: F401 - fixtures
