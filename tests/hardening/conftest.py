"""Fixtures for the hardening suite: one agent login per sample agency, as in the quote desk tests."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agencies.models import Agency, AgentProfile
from tests.throttles import fresh_api_throttles  # noqa: F401 - an autouse fixture

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
