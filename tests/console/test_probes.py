"""/healthz and /readyz: liveness, and readiness with each dependency down (issue 21)."""

from __future__ import annotations

import time

import pytest
from django.db import connection, connections
from django.test import Client, override_settings
from django_q.brokers import get_broker
from django_q.signing import SignedPackage
from django_q.status import Stat, Status

from console import readiness as probes
from work import pump_beat

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def healthy(monkeypatch):
    """A pump that just ran and a qcluster heartbeat: everything /readyz asks for is there."""
    pump_beat.pump_beat_record(force=True)
    status = Status(pid=4242, cluster_id="test-cluster")
    get_broker().set_stat(Stat.get_key("test-cluster"), SignedPackage.dumps(status, True), 30)
    monkeypatch.setattr(probes, "_migrations_applied_until", 0.0)


def readyz(client: Client | None = None, **params):
    response = (client or Client()).get("/readyz", params)
    return response, response.json()


def failed_checks(body: dict) -> set[str]:
    return {name for name, check in body["checks"].items() if not check["ok"]}


def test_healthz_answers_without_touching_anything(django_assert_num_queries):
    """Liveness: 200 and no query, so a database outage never restarts the process."""
    with django_assert_num_queries(0):
        response = Client().get("/healthz")
    assert response.status_code == 200 and response.content == b"ok\n"


def test_probes_answer_any_host_and_plain_http_in_production_shape(healthy):
    """A kubelet asks the pod's address over http: no DisallowedHost 400, no HTTPS redirect."""
    with override_settings(ALLOWED_HOSTS=["desk.example.com"], SECURE_SSL_REDIRECT=True):
        assert Client().get("/healthz", HTTP_HOST="10.1.2.3:8000").status_code == 200
        assert Client().get("/readyz", HTTP_HOST="10.1.2.3:8000").status_code == 200


def test_readyz_is_ok_when_every_dependency_is(healthy):
    response, body = readyz()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "cache", "storage", "migrations", "work_pump", "qcluster"}


def test_readyz_fails_when_the_database_is_unreachable(healthy, monkeypatch, tmp_path):
    """A fresh connection cannot be opened: database (and migrations) fail, 503, never a 500."""
    monkeypatch.setitem(connections.settings["default"], "NAME", str(tmp_path / "gone" / "db.sqlite3"))
    connections.close_all()
    response, body = readyz()
    monkeypatch.undo()
    connections.close_all()
    assert response.status_code == 503
    assert {"database", "migrations"} <= failed_checks(body)
    assert "cache" not in failed_checks(body)


def test_readyz_fails_when_the_cache_is_down(healthy):
    """Redis refusing connections: the cache check fails, and so does reading the pump's beat."""
    redis_down = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
        "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
    }
    with override_settings(CACHES={"default": redis_down}):
        response, body = readyz()
    assert response.status_code == 503
    assert {"cache", "work_pump"} <= failed_checks(body)
    assert "önbelleğe ulaşılamıyor" in body["checks"]["cache"]["error"]


def test_readyz_fails_when_the_cache_table_was_never_created(healthy):
    """The database cache without `createcachetable`: said plainly, not a 500."""
    table = {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "no_such_cache_table"}
    with override_settings(CACHES={"default": table}):
        response, body = readyz()
    assert response.status_code == 503 and "cache" in failed_checks(body)


def test_readyz_fails_when_the_pump_is_stale(healthy, settings):
    """A last pass older than WORK_PUMP_STALE_SECONDS is a silent pump."""
    from django.core.cache import cache

    cache.set(pump_beat.BEAT_KEY, time.time() - 600, timeout=3600)
    settings.WORK_PUMP_STALE_SECONDS = 180
    response, body = readyz()
    assert response.status_code == 503 and failed_checks(body) == {"work_pump"}
    assert "saniyedir çalışmadı" in body["checks"]["work_pump"]["error"]


def test_readyz_fails_when_the_pump_never_ran(healthy):
    from django.core.cache import cache

    cache.delete(pump_beat.BEAT_KEY)
    response, body = readyz()
    assert response.status_code == 503 and failed_checks(body) == {"work_pump"}


def test_readyz_fails_when_no_qcluster_beats(healthy):
    get_broker().cache.delete(Stat.get_key("test-cluster"))
    response, body = readyz()
    assert response.status_code == 503 and failed_checks(body) == {"qcluster"}


def test_readyz_scope_web_leaves_the_background_work_out(healthy):
    """For a load balancer: a web process stays in while the workers restart."""
    get_broker().cache.delete(Stat.get_key("test-cluster"))
    response, body = readyz(scope="web")
    assert response.status_code == 200 and set(body["checks"]) == {"database", "cache", "storage", "migrations"}


def test_readyz_fails_when_a_migration_is_not_applied(healthy):
    """A deploy that skipped `migrate`: the missing migration is named."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, app, name, applied FROM django_migrations WHERE app = 'agencies' ORDER BY id DESC")
        row = cursor.fetchone()
        cursor.execute("DELETE FROM django_migrations WHERE id = %s", [row[0]])
    try:
        response, body = readyz()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO django_migrations (id, app, name, applied) VALUES (%s, %s, %s, %s)", row)
    assert response.status_code == 503 and failed_checks(body) == {"migrations"}
    assert f"agencies.{row[2]}" in body["checks"]["migrations"]["error"]


def test_the_pump_records_its_beat_after_a_good_pass(monkeypatch):
    """work_pump_run writes the beat that readyz reads."""
    from django.core.cache import cache

    from work.pump import work_pump_run

    cache.delete(pump_beat.BEAT_KEY)
    monkeypatch.setattr(pump_beat, "_last_written", 0.0)
    work_pump_run(seconds=0.1, interval=0.05)
    assert pump_beat.pump_beat_last() is not None


def test_metrics_show_the_pump_age_and_inf_when_it_never_ran():
    """The alert WorkPumpSilent reads this gauge: +Inf when no beat is known."""
    from django.core.cache import cache

    from console.metrics import _pump_family

    cache.delete(pump_beat.BEAT_KEY)
    assert _pump_family().samples[0].value == float("inf")
    pump_beat.pump_beat_record(force=True)
    assert 0 <= _pump_family().samples[0].value < 5
