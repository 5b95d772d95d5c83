"""Every write operation of the API refuses, in Turkish, a body it can not read (400 "JSON
okunamadı…") and a field it does not take (400 naming the field), instead of DRF's English or
silently dropping the field. The operations come from the API's own OpenAPI document: a new one
is covered without a line here."""

from __future__ import annotations

import re

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from customers.models import Customer
from insurehub.api_input import BODY_NOT_AN_OBJECT_MESSAGE
from quotes.models import Issuance, QuoteRequest
from tests import samples
from tests.conftest import api_as
from tests.hardening.test_isolation_matrix import agency_objects

pytestmark = pytest.mark.django_db

WRITE_METHODS = ("post", "put", "patch")


def _write_operations() -> list[tuple[str, str, bool]]:
    """(method, path, takes a body) for every write operation the schema serves."""
    document = SchemaGenerator().get_schema(request=None, public=True)
    return sorted(
        (method, path, "requestBody" in operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in WRITE_METHODS
    )


OPERATIONS = _write_operations()
WITH_BODY = [(method, path) for method, path, body in OPERATIONS if body]


@pytest.fixture
def api(agents):
    """An agent's token, and the path of each operation filled with one of the agency's objects."""
    objects = agency_objects(agents["ACENTE1"])
    ids = {
        "customer_id": objects.customer.pk,
        "insurer_quote_id": objects.quote.pk,
        "policy_id": objects.policy.pk,
    }
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=agents['ACENTE1']).key}")

    def url(path: str) -> str:
        return re.sub(r"\{(\w+)\}", lambda match: str(ids[match.group(1)]), path)

    return client, url


def test_the_write_operations_are_the_ones_expected():
    """The list below the tests walk is the schema's; a few are named so an empty list fails."""
    assert ("post", "/api/quote-requests/", True) in OPERATIONS
    assert ("patch", "/api/customers/{customer_id}/", True) in OPERATIONS
    assert ("post", "/api/renewals/{policy_id}/quote/", False) in OPERATIONS


@pytest.mark.parametrize(("method", "path"), [(m, p) for m, p, _ in OPERATIONS])
def test_a_body_that_is_not_json_is_refused_in_turkish(api, method, path):
    client, url = api
    before = (QuoteRequest.objects.count(), Issuance.objects.count())
    response = getattr(client, method)(url(path), data='{"search": "ayşe",', content_type="application/json")
    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    assert detail.startswith("JSON okunamadı") and "1. satır" in detail and "parse error" not in detail
    assert (QuoteRequest.objects.count(), Issuance.objects.count()) == before


@pytest.mark.parametrize(("method", "path"), [(m, p) for m, p, _ in OPERATIONS])
def test_a_field_the_operation_does_not_take_is_refused_naming_it(api, method, path):
    client, url = api
    before = (QuoteRequest.objects.count(), Issuance.objects.count(), Customer.objects.count())
    response = getattr(client, method)(url(path), {"bilinmeyen_alan": "x"}, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()
    assert errors["bilinmeyen_alan"][0].startswith("Bu işlem bu alanı tanımıyor"), errors
    assert (QuoteRequest.objects.count(), Issuance.objects.count(), Customer.objects.count()) == before


@pytest.mark.parametrize(("method", "path"), WITH_BODY)
def test_a_body_that_is_not_an_object_is_refused_in_turkish(api, method, path):
    client, url = api
    response = getattr(client, method)(url(path), ["ayşe"], format="json")
    assert response.status_code == 400 and response.json() == {"non_field_errors": [BODY_NOT_AN_OBJECT_MESSAGE]}


def test_an_unknown_field_is_named_beside_the_fields_own_errors(api):
    """All at once: the bad known field and the unknown one, in one answer."""
    client, _ = api
    response = client.post("/api/customers/", {"name": "", "identity_no": 1, "telefon": "0532"}, format="json")
    assert response.status_code == 400
    assert set(response.json()) == {"name", "identity_no", "telefon"}


def test_an_unknown_field_inside_a_quote_requests_data_is_named_there(api):
    """A misspelt optional field ("start_on") would otherwise start the cover on the default day."""
    client, _ = api
    body = {"product": "trafik", "data": {**samples.TRAFIK, "start_on": "2030-01-01"}}
    response = client.post("/api/quote-requests/", body, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert list(errors) == ["data"] and list(errors["data"]) == ["start_on"]
    assert "starts_on" in errors["data"]["start_on"][0] and "plate" in errors["data"]["start_on"][0]
    assert not QuoteRequest.objects.filter(plate=samples.TRAFIK["plate"], input_data__starts_on="2030-01-01").exists()


def test_the_token_login_refuses_an_unknown_field_and_broken_json_in_turkish(agents):
    client = APIClient()
    body = {"username": agents["ACENTE1"].username, "password": "test-pass-123", "parola": "x"}
    refused = client.post("/api/auth/token/", body, format="json")
    assert refused.status_code == 400 and list(refused.json()) == ["parola"]
    broken = client.post("/api/auth/token/", data="{username: x}", content_type="application/json")
    assert broken.status_code == 400 and broken.json()["detail"].startswith("JSON okunamadı")


def test_the_schema_says_request_bodies_take_their_fields_only(agents):
    client = api_as(agents["ACENTE1"])
    document = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = document["components"]["schemas"]
    for method, path in WITH_BODY:
        ref = document["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert components[ref.rsplit("/", 1)[-1]]["additionalProperties"] is False, (method, path)
