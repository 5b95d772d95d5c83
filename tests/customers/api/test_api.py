"""The customer API: list, search, create, read, change; field errors in Turkish; agency isolation."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from customers.models import Customer
from customers.services import DUPLICATE_IDENTITY_MESSAGE
from tests.conftest import api_as, token_api_as

from ..conftest import OTHER_TCKN, TCKN, VKN

pytestmark = pytest.mark.django_db

CUSTOMERS = "/api/customers/"
UNKNOWN_PK = 987654321


@pytest.fixture
def clients(agents) -> dict[str, APIClient]:
    return {code: token_api_as(user) for code, user in agents.items()}


def test_create_answers_the_customer_with_the_number_masked(clients, agents):
    body = {
        "name": "Ayşe Yılmaz",
        "identity_no": OTHER_TCKN,
        "phone": "0532 123 45 67",
        "kvkk_consent_at": "2026-01-15T10:30:00+03:00",
        "kvkk_consent_channel": "email",
    }
    response = clients["ACENTE1"].post(CUSTOMERS, body, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["identity_no"] == "100******46" and OTHER_TCKN not in response.content.decode()
    assert data["phone"] == "+905321234567" and data["kvkk_consent_channel"] == "email" and not data["is_company"]
    customer = Customer.objects.get(pk=data["id"])
    assert customer.agency == agents["ACENTE1"].agent_profile.agency and customer.identity_no == OTHER_TCKN


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"identity_no": "12345678951"}, "identity_no"),
        ({"identity_no": 12345678950}, "identity_no"),
        ({"phone": "123"}, "phone"),
        ({"email": "x@"}, "email"),
        ({"kvkk_consent_channel": "sms"}, "kvkk_consent_at"),
        ({"kvkk_consent_at": "2026-01-15T10:30:00+03:00"}, "kvkk_consent_channel"),
        ({"kvkk_consent_at": "dün", "kvkk_consent_channel": "sms"}, "kvkk_consent_at"),
        ({"name": ""}, "name"),
    ],
)
def test_a_bad_field_is_a_400_naming_it(clients, body, field):
    response = clients["ACENTE1"].post(CUSTOMERS, {"name": "Ayşe", "identity_no": VKN, **body}, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()
    assert list(errors) == [field] and all(isinstance(m, str) and " " in m for m in errors[field])
    assert not Customer.objects.exists()


def test_a_duplicate_number_is_a_400_on_identity_no(clients, customers):
    response = clients["ACENTE1"].post(CUSTOMERS, {"name": "Kopya", "identity_no": TCKN}, format="json")
    assert response.status_code == 400 and response.json() == {"identity_no": [DUPLICATE_IDENTITY_MESSAGE]}


def test_list_and_search_see_only_the_agencys_customers(clients, customers):
    body = clients["ACENTE1"].get(CUSTOMERS).json()
    assert [item["id"] for item in body["results"]] == [customers["ACENTE1"].pk] and body["count"] == 1
    for search in ("acente1", "Müşteri"):
        found = clients["ACENTE1"].get(CUSTOMERS, {"search": search}).json()["results"]
        assert [item["id"] for item in found] == [customers["ACENTE1"].pk], search
    assert clients["ACENTE1"].get(CUSTOMERS, {"search": "acente2"}).json()["count"] == 0
    for search in (TCKN, "acente1"):
        found = clients["ACENTE1"].post(CUSTOMERS + "search/", {"search": search}, format="json").json()["results"]
        assert [item["id"] for item in found] == [customers["ACENTE1"].pk], search


@pytest.mark.parametrize("term", [TCKN, VKN, " ".join(TCKN)])
def test_a_get_search_by_identity_number_is_refused_pointing_at_the_post_search(clients, customers, term):
    """The access log writes `?search=` whole: an identity number there is refused, in Turkish,
    naming `search` and the POST that takes it in the body."""
    response = clients["ACENTE1"].get(CUSTOMERS, {"search": term})
    assert response.status_code == 400
    [message] = response.json()["search"]
    assert "POST /api/customers/search/" in message and "kimlik" in message


def test_a_post_search_pages_like_the_list(clients, customers):
    """`limit`/`offset` in the query; the term stays in the body, `next` holds no term."""
    response = clients["ACENTE1"].post(CUSTOMERS + "search/?limit=1", {"search": TCKN}, format="json")
    body = response.json()
    assert response.status_code == 200 and body["count"] == 1 and body["next"] is None
    assert TCKN not in response.wsgi_request.get_full_path()


def test_another_agencys_customer_is_not_found_for_read_and_change(clients, customers):
    client, other = clients["ACENTE1"], customers["ACENTE2"]
    for method, body in (("get", None), ("patch", {"name": "Ele geçirildi"})):
        response = getattr(client, method)(f"{CUSTOMERS}{other.pk}/", body, format="json")
        unknown = getattr(client, method)(f"{CUSTOMERS}{UNKNOWN_PK}/", body, format="json")
        assert response.status_code == unknown.status_code == 404
        assert response.json() == unknown.json()
    assert client.get(f"{CUSTOMERS}abc/").status_code == 404
    other.refresh_from_db()
    assert other.name == "Müşteri ACENTE2"


def test_patch_changes_only_what_is_sent(clients, customers):
    own = customers["ACENTE1"]
    response = clients["ACENTE1"].patch(f"{CUSTOMERS}{own.pk}/", {"email": "yeni@example.com"}, format="json")
    assert response.status_code == 200 and response.json()["email"] == "yeni@example.com"
    own.refresh_from_db()
    assert own.name == "Müşteri ACENTE1" and own.email == "yeni@example.com"
    response = clients["ACENTE1"].patch(f"{CUSTOMERS}{own.pk}/", {"kvkk_consent_channel": "sms"}, format="json")
    assert response.status_code == 400 and list(response.json()) == ["kvkk_consent_at"]


def test_cross_agency_reader_reads_all_and_writes_nothing(reader, customers):
    client = api_as(reader)
    assert client.get(CUSTOMERS).json()["count"] == 2
    for customer in customers.values():
        assert client.get(f"{CUSTOMERS}{customer.pk}/").status_code == 200
        assert client.patch(f"{CUSTOMERS}{customer.pk}/", {"name": "X"}, format="json").status_code == 404
    response = client.post(CUSTOMERS, {"name": "Ayşe", "identity_no": OTHER_TCKN}, format="json")
    assert response.status_code == 403 and "acenteye bağlı değil" in response.json()["detail"]


def test_anonymous_calls_are_refused(db):
    assert APIClient().get(CUSTOMERS).status_code == 401


def test_schema_documents_the_customer_operations(clients):
    schema = clients["ACENTE1"].get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert set(schema["paths"]["/api/customers/"]) >= {"get", "post"}
    assert set(schema["paths"]["/api/customers/search/"]) == {"post"}
    assert set(schema["paths"]["/api/customers/{customer_id}/"]) >= {"get", "patch"}
    assert "Customer" in schema["components"]["schemas"]
