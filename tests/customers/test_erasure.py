"""KVKK erasure: the person goes, the agency's policies and money stay, and the erasure is recorded."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import reverse

from customers.erasure import ERASED_NAME, customer_erase, erased_identity
from customers.models import Customer, CustomerErasure
from customers.services import CustomerInvalid
from policies.models import Policy
from quotes.models import QuoteRequest
from quotes.services import quote_requests
from tests import samples
from tests.quotes.policy_samples import issued_policy
from tests.quotes.request_samples import tasks_not_sent

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def customer_with_history(agents, monkeypatch):
    """A customer with a policy (issued from a request) and a request that never went further."""
    tasks_not_sent(monkeypatch)
    user = agents["ACENTE1"]
    customer = Customer.objects.create(
        agency=user.agent_profile.agency,
        name="Ayşe Yılmaz",
        identity_no=samples.TRAFIK["owner_id"],
        phone="+905321234567",
        email="ayse@example.com",
        address="Moda Cad. 1, Kadıköy",
        created_by=user,
    )
    policy = issued_policy(user, "POL-1")
    QuoteRequest.objects.filter(pk=policy.issuance.quote_request_id).update(customer=customer)
    Policy.objects.filter(pk=policy.pk).update(customer=customer)
    open_request = quote_requests.quote_request_create(
        user=user, product="trafik", data=samples.TRAFIK, customer=customer
    )
    return customer, policy, open_request


def test_erasure_replaces_the_person_and_keeps_policies_and_money(agents, customer_with_history):
    customer, policy, open_request = customer_with_history
    erasure = customer_erase(customer=customer, erased_by=agents["ACENTE1"], request_note="Dilekçe 2026/14, 1 Aralık")

    customer.refresh_from_db()
    assert customer.name == ERASED_NAME and customer.identity_no == erased_identity(customer.pk)
    assert (customer.phone, customer.email, customer.address) == ("", "", "")
    policy.refresh_from_db()
    assert policy.customer_id == customer.pk and policy.premium == Decimal("4312.50")  # the agency's record stays
    open_request.refresh_from_db()
    assert open_request.owner_id == customer.identity_no
    assert open_request.input_data["owner_id"] == customer.identity_no
    assert open_request.input_data["plate"] == samples.TRAFIK["plate"]
    assert erasure.quote_requests_scrubbed == 1 and erasure.erased_by == agents["ACENTE1"]


def test_the_erasure_record_holds_nothing_of_what_was_erased(agents, customer_with_history):
    customer, *_ = customer_with_history
    note = f"E-posta ayse@example.com, TCKN {samples.TRAFIK['owner_id']}"
    erasure = customer_erase(customer=customer, erased_by=agents["ACENTE1"], request_note=note)
    assert samples.TRAFIK["owner_id"] not in erasure.request_note and "ayse@example.com" not in erasure.request_note


def test_erasing_twice_is_refused_and_a_missing_note_is_a_field_error(agents, customer_with_history):
    customer, *_ = customer_with_history
    with pytest.raises(CustomerInvalid) as missing:
        customer_erase(customer=customer, erased_by=agents["ACENTE1"], request_note="   ")
    assert "request_note" in missing.value.errors
    customer_erase(customer=customer, erased_by=agents["ACENTE1"], request_note="Dilekçe 1")
    with pytest.raises(CustomerInvalid) as twice:
        customer_erase(customer=customer, erased_by=agents["ACENTE1"], request_note="Dilekçe 2")
    assert "zaten silinmiş" in twice.value.errors["__all__"]
    assert CustomerErasure.objects.get(customer=customer).request_note == "Dilekçe 1"


def test_the_admins_history_no_longer_names_the_customer(agents, customer_with_history):
    customer, *_ = customer_with_history
    LogEntry.objects.create(
        user=agents["ACENTE1"],
        content_type=ContentType.objects.get_for_model(Customer),
        object_id=str(customer.pk),
        object_repr="Ayşe Yılmaz",
        action_flag=CHANGE,
    )
    customer_erase(customer=customer, erased_by=agents["ACENTE1"], request_note="Dilekçe 3")
    assert not LogEntry.objects.filter(object_repr__contains="Ayşe").exists()


def test_the_admin_action_asks_for_the_note_then_erases(customer_with_history):
    customer, *_ = customer_with_history
    admin_user = get_user_model().objects.create_superuser("yonetici", "yonetici@insurehub.example", PASSWORD)
    client = Client()
    client.force_login(admin_user)
    url = reverse("admin:customers_customer_changelist")
    asked = client.post(url, {"action": "erase_customers", "_selected_action": [customer.pk]})
    assert asked.status_code == 200 and "geri alınamaz" in asked.content.decode()
    no_note = client.post(
        url,
        {"action": "erase_customers", "_selected_action": [customer.pk], "erase_confirmed": "1", "request_note": ""},
    )
    assert no_note.status_code == 200 and not CustomerErasure.objects.exists()  # the form again, nothing erased
    done = client.post(
        url,
        {
            "action": "erase_customers",
            "_selected_action": [customer.pk],
            "erase_confirmed": "1",
            "request_note": "Dilekçe 9",
        },
    )
    assert done.status_code == 302
    erasure = CustomerErasure.objects.get(customer=customer)
    assert erasure.erased_by == admin_user
    assert client.get(reverse("admin:customers_customererasure_changelist")).status_code == 200
