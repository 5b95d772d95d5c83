"""Shared fixtures of the commission tests: the agency's owner, a sub-agency and its agent,
agreements and shares, real policies."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model

from agencies.models import Agency, AgentProfile, SubAgency
from commissions.models import CommissionAgreement, SubAgencyShare
from integrations.models import Insurer
from policies.models import Policy
from tests.conftest import AGENT_PASSWORD
from tests.policies.conftest import quick_cancel_policy  # noqa: F401  (a fixture, used by name)
from tests.quotes.policy_samples import really_issued
from tests.sync.conftest import quick_status_policy  # noqa: F401  (a fixture, used by name)

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


@pytest.fixture
def sub_agency(agents) -> SubAgency:
    """A sub-agency (tali acente) of ACENTE1."""
    return SubAgency.objects.create(agency=Agency.objects.get(code="ACENTE1"), code="kadikoy", name="Kadıköy Tali")


@pytest.fixture
def sub_agent(sub_agency):
    """An agent of the sub-agency: what they sell is credited to it."""
    user = get_user_model().objects.create_user("tali-kadikoy", password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=user, agency=sub_agency.agency, sub_agency=sub_agency)
    return user


def share(sub_agency: SubAgency, rate: str = "60.00", effective_from: date = LONG_AGO) -> SubAgencyShare:
    """A share stored as it is (the service's rules are tested on their own)."""
    return SubAgencyShare.objects.create(sub_agency=sub_agency, rate=Decimal(rate), effective_from=effective_from)


def issued_by(user, code: str, *, product: str = "trafik", data: dict | None = None) -> Policy:
    """A policy really issued at `code` by `user`, credited to the user's sub-agency as the desk credits it."""
    return really_issued(user, code, product=product, data=data)
