"""The API throttles count in the shared cache, once per call, across processes (issue 21)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from django.core.cache import caches
from django.test import override_settings

from quotes.api import throttles


def agency_request(agency_id: int = 1):
    user = SimpleNamespace(is_authenticated=True, pk=7, agent_profile=SimpleNamespace(agency_id=agency_id))
    return SimpleNamespace(user=user)


@pytest.fixture
def redis_cache(redis_url, settings):
    backend = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"quote_create_user": "1000/min", "quote_create_agency": "10/min"},
    }
    with override_settings(CACHES={"default": backend}):
        caches["default"].clear()
        yield caches["default"]
        caches["default"].clear()


def test_a_parallel_burst_over_redis_passes_exactly_the_agency_limit(redis_cache):
    """Forty calls at once from many threads (as from many processes): ten pass, thirty wait."""
    allowed: list[bool] = []
    lock = threading.Lock()
    start = threading.Barrier(40)

    def call() -> None:
        throttle = throttles.QuoteCreateAgencyThrottle()
        throttle.cache = caches["default"]
        start.wait()
        verdict = throttle.allow_request(agency_request(), None)
        with lock:
            allowed.append(verdict)

    threads = [threading.Thread(target=call) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert allowed.count(True) == 10 and allowed.count(False) == 30


def test_a_refused_call_says_when_to_come_back_and_is_not_counted(redis_cache):
    throttle = throttles.QuoteCreateAgencyThrottle()
    throttle.cache = caches["default"]
    assert all(throttle.allow_request(agency_request(), None) for _ in range(10))
    assert throttle.allow_request(agency_request(), None) is False
    assert 0 < throttle.wait() <= 60
    assert throttle.allow_request(agency_request(agency_id=2), None) is True  # another agency's allowance
    window_keys = [key for key in redis_cache._cache.get_client().keys("*") if b"quote_create_agency_1" in key]
    assert sum(int(redis_cache._cache.get_client().get(key)) for key in window_keys) == 10


def test_a_cache_that_does_not_answer_lets_the_call_through(settings):
    """Redis restarting: quotes go on (paced at the insurers anyway), never a 500."""
    down = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
        "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"quote_create_user": "1/min", "quote_create_agency": "1/min"},
    }
    with override_settings(CACHES={"default": down}):
        throttle = throttles.QuoteCreateAgencyThrottle()
        assert throttle.allow_request(agency_request(), None) is True
