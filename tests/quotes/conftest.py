"""Fixtures for the quote desk: seeded insurers and agencies, and one agent login per agency."""

from __future__ import annotations

import pytest

from integrations.models import Insurer, OperationPolicy
from integrations.retry_policies import clear_policy_cache
from tests.throttles import fresh_api_throttles  # noqa: F401 - an autouse fixture


def issuance_policy_override(**fields) -> None:
    """Set every insurer's issue_policy policy (short timeouts and waits keep the tests quick).

    `fields` maps a field to one value, or to a dict by insurer code for per-insurer values.
    """
    for insurer in Insurer.objects.all():
        values = {k: (v.get(insurer.code) if isinstance(v, dict) else v) for k, v in fields.items()}
        OperationPolicy.objects.update_or_create(insurer=insurer, operation="issue_policy", defaults=values)
    clear_policy_cache()


@pytest.fixture
def quick_issuance_policy(seeded_accounts):
    """Short timeouts and waits, so lost answers and retries resolve within a second or two."""
    issuance_policy_override(max_attempts=3, base_delay=0.05, max_delay=0.2, deadline=10.0, attempt_timeout=1.0)
    yield
    clear_policy_cache()
