"""The cache every process shares: Redis when REDIS_URL is set, else the database table."""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.test import override_settings

from insurehub import cache_slots
from insurehub.settings.base import CACHE_TABLE, caches_from_env


def test_redis_url_makes_redis_the_cache():
    """With REDIS_URL the throttles and stream slots count in Redis, shared by every machine."""
    default = caches_from_env({"REDIS_URL": "redis://127.0.0.1:6379/0"})["default"]
    assert default["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert default["LOCATION"] == "redis://127.0.0.1:6379/0"


def test_without_redis_the_cache_is_the_shared_database_table_never_process_memory():
    """No per-process memory cache: "300/min per agency" must not become 300 per process."""
    default = caches_from_env({})["default"]
    assert default["BACKEND"] == "django.core.cache.backends.db.DatabaseCache"
    assert default["LOCATION"] == CACHE_TABLE
    assert default["OPTIONS"]["MAX_ENTRIES"] >= 100_000  # no culling of live counters


def test_stream_slots_are_shared_through_redis(redis_url):
    """Two Redis cache clients (two processes, two machines) meet one count; a released slot is free."""
    backend = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
    with override_settings(CACHES={"default": backend, "other": backend}):
        caches["default"].clear()
        scopes = [("live-stream:user:1", 2)]
        first, _ = cache_slots.slots_acquire(scopes=scopes, ttl=30)
        second, _ = cache_slots.slots_acquire(scopes=scopes, ttl=30, cache_alias="other")
        third, full = cache_slots.slots_acquire(scopes=scopes, ttl=30, cache_alias="other")
        assert first and second and third is None and full == "live-stream:user:1"
        second.release()
        assert cache_slots.slots_in_use(scope="live-stream:user:1", limit=2) == 1
        caches["default"].clear()


def test_a_redis_that_is_down_raises_slots_unavailable():
    """Nothing counted, nothing held: the caller refuses the stream instead of a 500."""
    backend = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
        "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
    }
    with override_settings(CACHES={"default": backend}), pytest.raises(cache_slots.SlotsUnavailable):
        cache_slots.slots_acquire(scopes=[("live-stream:user:1", 2)], ttl=30)
