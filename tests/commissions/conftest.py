"""Shared fixtures of the commission tests: the agency's owner, agreements, real policies."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model

from agencies.models import Agency, AgentProfile
from commissions.models import CommissionAgreement
from integrations.models import Insurer
from tests.conftest import AGENT_PASSWORD
from tests.policies.conftest import quick_cancel_policy  # noqa: F401  (a fixture, used by name)

LONG_AGO = date(2020, 1, 1)


@pytest.fixture
def owner(agents):
    """ACENTE1's admin (`is_agency_admin`): the one who enters the agency's agreements."""
    user = get_user_model().objects.create_user("patron-acente1", password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=user, agency=Agency.objects.get(code="ACENTE1"), is_agency_admin=True)
    return user


def agreement(
    *,
    agency: str = "ACENTE1",
    insurer: str = "anka",
    product: str = "trafik",
    rate: str = "10.00",
    base: str = "gross",
    effective_from: date = LONG_AGO,
) -> CommissionAgreement:
    """An agreement stored as it is (the service's rules are tested on their own)."""
    return CommissionAgreement.objects.create(
        agency=Agency.objects.get(code=agency),
        insurer=Insurer.objects.get(code=insurer),
        product=product,
        rate=Decimal(rate),
        base=base,
        effective_from=effective_from,
    )
