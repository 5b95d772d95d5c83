"""Fixtures for the customer tests: agent logins of both sample agencies, and a customer of each."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from customers.models import Customer
from tests.throttles import fresh_api_throttles  # noqa: F401 - an autouse fixture

# The password of the `agents` fixture (tests/conftest.py).
PASSWORD = "test-pass-123"
# Valid numbers (checksums right) that no sample uses.
TCKN = "12345678950"
VKN = "1234567890"
OTHER_TCKN = "10000000146"


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
