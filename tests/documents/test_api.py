"""GET /api/policies/<id>/document/ and POST .../document/refetch/: the desk's rules over the API."""

from __future__ import annotations

import hashlib
import json

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from documents import services
from documents.models import PolicyDocument

pytestmark = pytest.mark.django_db


def document_url(policy_id) -> str:
    return f"/api/policies/{policy_id}/document/"


def refetch_url(policy_id) -> str:
    return f"/api/policies/{policy_id}/document/refetch/"


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def clients(agents) -> dict[str, APIClient]:
    return {code: token_client(user) for code, user in agents.items()}


@pytest.fixture
def stored(issue):
    policy = issue("anka")
    document = services.document_request(policy=policy)
    assert services.document_process(document.pk) == "SUBMITTED"
    return policy


def test_download_answers_the_pdf(clients, stored):
    """200 application/pdf, even for a client that asks for exactly that."""
    response = clients["ACENTE1"].get(document_url(stored.pk), HTTP_ACCEPT="application/pdf")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"].startswith("attachment; ")
    content = b"".join(response.streaming_content)
    assert hashlib.sha256(content).hexdigest() == PolicyDocument.objects.get(policy=stored).sha256


def test_other_agency_unknown_and_malformed_ids_are_json_404(clients, stored):
    """Another agency's policy answers like an unknown one, as JSON even to `Accept: application/pdf`."""
    client = clients["ACENTE2"]
    for url in (document_url(stored.pk), document_url(999999), document_url("abc"), document_url("１")):
        response = client.get(url, HTTP_ACCEPT="application/pdf")
        assert response.status_code == 404 and "detail" in response.json(), url
    for url in (refetch_url(stored.pk), refetch_url("abc")):
        response = client.post(url)
        assert response.status_code == 404 and "detail" in response.json(), url
    assert PolicyDocument.objects.get(policy=stored).state == "SUBMITTED"


def test_anonymous_is_401(stored):
    response = APIClient().get(document_url(stored.pk))
    assert response.status_code == 401


def test_not_ready_yet_is_409_and_refetch_is_202(clients, issue, sandbox):
    """No PDF yet: 409 with a Turkish detail; a re-fetch answers the record's state."""
    sandbox["anka"].state.configure(document_delay_seconds=5)
    policy = issue("anka")
    response = clients["ACENTE1"].get(document_url(policy.pk))
    assert response.status_code == 409 and "istenmedi" in response.json()["detail"]
    document = services.document_request(policy=policy)
    services.document_process(document.pk)
    response = clients["ACENTE1"].get(document_url(policy.pk))
    assert response.status_code == 409 and "hazır değil" in response.json()["detail"]
    body = clients["ACENTE1"].post(refetch_url(policy.pk))
    assert body.status_code == 202
    assert body.json()["state"] == "PENDING" and body.json()["ready"] is False  # already under way


def test_refetch_of_a_stored_document(clients, stored):
    response = clients["ACENTE1"].post(refetch_url(stored.pk))
    assert response.status_code == 202
    body = response.json()
    assert body["state"] == "QUEUED" and body["ready"] is True and body["policy"] == stored.pk
    assert body["sha256"] == PolicyDocument.objects.get(policy=stored).sha256


def test_head_office_reads_but_does_not_refetch(head_office, stored):
    client = token_client(head_office)
    assert client.get(document_url(stored.pk)).status_code == 200
    assert client.post(refetch_url(stored.pk)).status_code == 403  # belongs to no agency


def test_schema_names_both_operations(clients):
    response = clients["ACENTE1"].get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    paths = json.loads(response.content)["paths"]
    download = paths["/api/policies/{policy_id}/document/"]["get"]
    assert "application/pdf" in download["responses"]["200"]["content"]
    assert "post" in paths["/api/policies/{policy_id}/document/refetch/"]
