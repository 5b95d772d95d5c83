"""Fixtures for the hardening suite: one agent login per sample agency, as in the quote desk tests."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agencies.models import Agency, AgentProfile

PASSWORD = "test-pass-123"


@pytest.fixture
def agents(seeded_accounts) -> dict:
    """Agent users of ACENTE1 and ACENTE2 (the seeded sample agencies)."""
    users = {}
    for code in ("ACENTE1", "ACENTE2"):
        user = get_user_model().objects.create_user(f"ajan-{code.lower()}", password=PASSWORD)
        AgentProfile.objects.create(user=user, agency=Agency.objects.get(code=code))
        users[code] = user
    return users


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
