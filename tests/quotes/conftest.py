"""Fixtures for the quote desk: seeded insurers and agencies, and one agent login per agency."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agencies.models import Agency, AgentProfile


@pytest.fixture
def agents(seeded_accounts) -> dict:
    """Agent users of ACENTE1 and ACENTE2 (the seeded sample agencies)."""
    users = {}
    for code in ("ACENTE1", "ACENTE2"):
        user = get_user_model().objects.create_user(f"ajan-{code.lower()}", password="test-pass-123")
        AgentProfile.objects.create(user=user, agency=Agency.objects.get(code=code))
        users[code] = user
    return users
