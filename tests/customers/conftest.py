"""Fixtures for the customer tests: agent logins of both sample agencies, and a customer of each."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from agencies.models import Agency, AgentProfile
from customers.models import Customer
from tests.throttles import fresh_api_throttles  # noqa: F401 - an autouse fixture

PASSWORD = "test-pass-123"
# Valid numbers (checksums right) that no sample uses.
TCKN = "12345678950"
VKN = "1234567890"
OTHER_TCKN = "10000000146"


@pytest.fixture
def agents(seeded_accounts) -> dict:
    """Agent users of ACENTE1 and ACENTE2 (the seeded sample agencies)."""
    users = {}
    for code in ("ACENTE1", "ACENTE2"):
        user = get_user_model().objects.create_user(f"ajan-{code.lower()}", password=PASSWORD)
        AgentProfile.objects.create(user=user, agency=Agency.objects.get(code=code))
        users[code] = user
    return users


@pytest.fixture
def desk(agents) -> Client:
    client = Client()
    client.force_login(agents["ACENTE1"])
    return client


@pytest.fixture
def other_desk(agents) -> Client:
    client = Client()
    client.force_login(agents["ACENTE2"])
    return client


@pytest.fixture
def customers(agents) -> dict[str, Customer]:
    """One customer per agency, with the same TCKN: the number alone never says whose it is."""
    return {
        code: Customer.objects.create(
            agency=user.agent_profile.agency, name=f"Müşteri {code}", identity_no=TCKN, created_by=user
        )
        for code, user in agents.items()
    }


@pytest.fixture
def reader(db):
    """A head-office login with `quotes.view_all_agencies` and no agency of its own."""
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user("merkez-okuyucu", password=PASSWORD, is_staff=True)
    user.user_permissions.add(Permission.objects.get(content_type__app_label="quotes", codename="view_all_agencies"))
    return user
