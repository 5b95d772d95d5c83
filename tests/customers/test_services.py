"""Creating and changing customers: inside the agent's agency, one customer per number per agency."""

from __future__ import annotations

import pytest

from customers.models import Customer
from customers.services import (
    DUPLICATE_IDENTITY_MESSAGE,
    CustomerInvalid,
    customer_create,
    customer_identity_conflict,
    customer_update,
)

from .conftest import OTHER_TCKN, TCKN, VKN

pytestmark = pytest.mark.django_db


def test_customer_is_created_in_the_agents_agency_with_clean_values(agents):
    customer = customer_create(
        user=agents["ACENTE1"],
        data={"name": "Ayşe Yılmaz", "identity_no": TCKN, "phone": "0532 123 45 67", "email": "a@example.com"},
    )
    customer.refresh_from_db()
    assert customer.agency == agents["ACENTE1"].agent_profile.agency and customer.created_by == agents["ACENTE1"]
    assert customer.phone == "+905321234567" and not customer.is_company


def test_the_same_number_twice_in_one_agency_is_a_field_error_not_a_crash(agents, customers):
    with pytest.raises(CustomerInvalid) as raised:
        customer_create(user=agents["ACENTE1"], data={"name": "Başka", "identity_no": f" {TCKN} "})
    assert raised.value.errors == {"identity_no": DUPLICATE_IDENTITY_MESSAGE}
    assert Customer.objects.filter(identity_no=TCKN).count() == 2  # one per agency, from the fixture


def test_another_agency_may_hold_the_same_number(agents):
    for user in agents.values():
        customer_create(user=user, data={"name": "Aynı kişi", "identity_no": VKN})
    assert Customer.objects.filter(identity_no=VKN).count() == 2


def test_update_changes_only_the_fields_sent_and_rechecks_the_whole(agents, customers):
    customer = customers["ACENTE1"]
    customer_update(user=agents["ACENTE1"], customer=customer, data={"phone": "0212 555 12 34"})
    customer.refresh_from_db()
    assert customer.phone == "+902125551234" and customer.name == "Müşteri ACENTE1"
    with pytest.raises(CustomerInvalid) as raised:
        customer_update(user=agents["ACENTE1"], customer=customer, data={"kvkk_consent_channel": "sms"})
    assert list(raised.value.errors) == ["kvkk_consent_at"]


def test_update_to_a_number_the_agency_already_has_is_a_field_error(agents, customers):
    other = customer_create(user=agents["ACENTE1"], data={"name": "İkinci", "identity_no": OTHER_TCKN})
    with pytest.raises(CustomerInvalid) as raised:
        customer_update(user=agents["ACENTE1"], customer=other, data={"identity_no": TCKN})
    assert raised.value.errors == {"identity_no": DUPLICATE_IDENTITY_MESSAGE}
    other.refresh_from_db()
    assert other.identity_no == OTHER_TCKN


def test_another_agencys_customer_cannot_be_changed(agents, customers):
    with pytest.raises(Customer.DoesNotExist):
        customer_update(user=agents["ACENTE1"], customer=customers["ACENTE2"], data={"name": "Ele geçirildi"})
    customers["ACENTE2"].refresh_from_db()
    assert customers["ACENTE2"].name == "Müşteri ACENTE2"


def test_a_user_without_an_agency_writes_no_customer(reader):
    with pytest.raises(PermissionError):
        customer_create(user=reader, data={"name": "Ayşe", "identity_no": TCKN})


def test_identity_conflict_names_the_customers_number_masked(customers):
    customer = customers["ACENTE1"]
    assert customer_identity_conflict(customer=customer, owner_id="") is None
    assert customer_identity_conflict(customer=customer, owner_id=TCKN) is None
    message = customer_identity_conflict(customer=customer, owner_id=OTHER_TCKN)
    assert "123******50" in message and TCKN not in message
