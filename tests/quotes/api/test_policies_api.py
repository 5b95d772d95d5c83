"""The policy API: filters and the period on the list, one policy, renewals, all in the schema."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from customers.models import Customer
from policies import periods
from policies.models import Policy
from quotes.models import QuoteRequest
from quotes.services.renewals import NO_SOURCE_MESSAGE
from tests.conftest import api_as

from ..policy_samples import imported_policy, issued_policy

pytestmark = pytest.mark.django_db


@pytest.fixture
def policies(agents) -> dict[str, Policy]:
    today = periods.today()
    customer = Customer.objects.create(
        agency=agents["ACENTE1"].agent_profile.agency, name="Ayşe Yılmaz", identity_no="10000000146"
    )
    return {
        "soon": issued_policy(
            agents["ACENTE1"],
            "ANK-API-SOON",
            starts_on=today - timedelta(days=340),
            ends_on=today + timedelta(days=25),
            customer=customer,
        ),
        "later": imported_policy(
            "ACENTE1", "cinar", "CNR-API-LATER", product="kasko", starts_on=today, ends_on=today + timedelta(days=50)
        ),
        "ended": imported_policy("ACENTE1", "deniz", "DNZ-API-ENDED", ends_on=today - timedelta(days=3)),
        "other": imported_policy("ACENTE2", "anka", "ANK-API-OTHER", ends_on=today + timedelta(days=3)),
    }


def numbers(body: dict) -> list[str]:
    return sorted(item["policy_no"] for item in body["results"])


def test_list_carries_the_period(agents, policies):
    body = api_as(agents["ACENTE1"]).get("/api/policies/").json()
    soon = next(item for item in body["results"] if item["policy_no"] == "ANK-API-SOON")
    assert soon["starts_on"] == policies["soon"].starts_on.isoformat()
    assert soon["ends_on"] == policies["soon"].ends_on.isoformat()
    assert soon["owner_id"] == "100******46"
    assert "ANK-API-OTHER" not in numbers(body)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"product": "kasko"}, ["CNR-API-LATER"]),
        ({"insurer": "deniz"}, ["DNZ-API-ENDED"]),
        ({"status": "ACTIVE", "period": "30"}, ["ANK-API-SOON"]),
        ({"period": "60"}, ["ANK-API-SOON", "CNR-API-LATER"]),
        ({"period": "bitti"}, ["DNZ-API-ENDED"]),
        ({"status": "CANCELLED"}, []),
    ],
)
def test_list_filters(agents, policies, query, expected):
    assert numbers(api_as(agents["ACENTE1"]).get("/api/policies/", query).json()) == expected


def test_list_filter_by_start_date(agents, policies):
    today = periods.today().isoformat()
    body = api_as(agents["ACENTE1"]).get("/api/policies/", {"starts_from": today, "starts_to": today}).json()
    assert numbers(body) == ["CNR-API-LATER"]


def test_bad_filters_are_named(agents, policies):
    response = api_as(agents["ACENTE1"]).get("/api/policies/", {"period": "90", "starts_from": "01/13/2026"})
    assert response.status_code == 400
    assert set(response.json()) == {"period", "starts_from"}


def test_detail_has_customer_and_source_request_and_is_agency_scoped(agents, policies):
    client = api_as(agents["ACENTE1"])
    body = client.get(f"/api/policies/{policies['soon'].pk}/").json()
    assert body["policy_no"] == "ANK-API-SOON" and body["ends_on"] == policies["soon"].ends_on.isoformat()
    assert body["customer"] == {
        "id": policies["soon"].customer_id,
        "name": "Ayşe Yılmaz",
        "identity_no": "100******46",
    }
    assert body["quote_request"] == str(policies["soon"].issuance.quote_request.public_id)
    imported = client.get(f"/api/policies/{policies['later'].pk}/").json()
    assert imported["quote_request"] is None and imported["customer"] is None
    assert client.get(f"/api/policies/{policies['other'].pk}/").status_code == 404
    assert client.get("/api/policies/abc/").status_code == 404
    assert client.get("/api/policies/99999999999999999999999/").status_code == 404


def test_renewals_soonest_first_with_days_left(agents, policies):
    client = api_as(agents["ACENTE1"])
    body = client.get("/api/renewals/").json()
    assert [item["policy_no"] for item in body["results"]] == ["ANK-API-SOON"]
    assert body["results"][0]["days_left"] == 25
    assert body["results"][0]["quote_request"] == str(policies["soon"].issuance.quote_request.public_id)
    body = client.get("/api/renewals/", {"days": 60}).json()
    assert [item["policy_no"] for item in body["results"]] == ["ANK-API-SOON", "CNR-API-LATER"]
    assert body["results"][1]["quote_request"] is None
    assert client.get("/api/renewals/", {"days": 90}).status_code == 400


def test_renewals_of_another_agency_are_its_own(agents, policies):
    body = api_as(agents["ACENTE2"]).get("/api/renewals/").json()
    assert [item["policy_no"] for item in body["results"]] == ["ANK-API-OTHER"]


def test_endpoints_need_authentication(policies):
    for url in ("/api/policies/", f"/api/policies/{policies['soon'].pk}/", "/api/renewals/"):
        assert APIClient().get(url).status_code in (401, 403), url


def test_schema_documents_the_new_filters_and_endpoints(agents):
    schema = api_as(agents["ACENTE1"]).get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    list_params = {p["name"] for p in paths["/api/policies/"]["get"]["parameters"]}
    assert {"product", "insurer", "status", "period", "starts_from", "starts_to", "limit", "offset"} <= list_params
    assert "/api/policies/{policy_id}/" in paths and "/api/renewals/" in paths
    assert {p["name"] for p in paths["/api/renewals/"]["get"]["parameters"]} >= {"days"}
    components = schema["components"]["schemas"]
    assert {"starts_on", "ends_on"} <= set(components["Policy"]["properties"])
    assert {"customer", "quote_request"} <= set(components["PolicyDetail"]["properties"])
    assert "days_left" in components["Renewal"]["properties"]


# --- asking again for a renewal ------------------------------------------------------------------


def test_renewal_quote_asks_every_insurer_again_for_the_same_customer(
    agents, policies, django_capture_on_commit_callbacks
):
    policy = policies["soon"]
    source = policy.issuance.quote_request
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api_as(agents["ACENTE1"]).post(f"/api/renewals/{policy.pk}/quote/")
    assert response.status_code == 201, response.content
    body = response.json()
    new = QuoteRequest.objects.get(public_id=body["id"])
    assert new.pk != source.pk and new.product == "trafik"
    assert new.input_data == {**source.input_data, "starts_on": new.input_data["starts_on"]}
    assert new.customer == policy.customer
    assert {row["state"] for row in body["results"]} == {"QUEUED"} and len(body["results"]) >= 2
    assert len(callbacks) == 1  # the insurer calls start once the request is committed


def test_renewal_quote_of_an_imported_policy_is_a_conflict_naming_why(agents, policies):
    before = QuoteRequest.objects.count()
    response = api_as(agents["ACENTE1"]).post(f"/api/renewals/{policies['later'].pk}/quote/")
    assert response.status_code == 409
    assert response.json() == {"detail": NO_SOURCE_MESSAGE}
    assert QuoteRequest.objects.count() == before


@pytest.mark.parametrize("policy_id", ["other", "unknown", "malformed"])
def test_renewal_quote_of_what_the_agency_does_not_own_is_not_found(agents, policies, policy_id):
    path = {"other": str(policies["other"].pk), "unknown": "99999999", "malformed": "1e3"}[policy_id]
    before = QuoteRequest.objects.count()
    response = api_as(agents["ACENTE1"]).post(f"/api/renewals/{path}/quote/")
    assert response.status_code == 404 and "detail" in response.json()
    assert QuoteRequest.objects.count() == before


def test_renewal_quote_needs_a_login_and_is_in_the_schema(agents, policies):
    assert APIClient().post(f"/api/renewals/{policies['soon'].pk}/quote/").status_code in (401, 403)
    schema = api_as(agents["ACENTE1"]).get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    operation = schema["paths"]["/api/renewals/{policy_id}/quote/"]["post"]
    assert {"201", "404", "409", "429"} <= set(operation["responses"])
