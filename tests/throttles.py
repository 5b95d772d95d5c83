"""A fixture shared by the packages whose tests post to throttled API endpoints."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def fresh_api_throttles(settings):
    """DRF counts throttled calls in the default cache, which outlives a test's rolled-back database
    (and its reused user and agency ids): every test starts with an untouched allowance, and one
    roomy enough for tests that post many requests on purpose. Throttle tests set their own rates."""
    from django.core.cache import cache

    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"quote_create_user": "10000/min", "quote_create_agency": "10000/min"},
    }
    cache.clear()
    yield
    cache.clear()
