"""The REST API: the quote desk over HTTP, against the sandbox insurers over real HTTP.

In-process tests run the background steps in the test's thread (`insurer_quote_fetch`,
`issuance_process`), the same services the worker runs; one end-to-end test uses a real
django-q2 worker and polls the API the way a front end would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from integrations.adapters.registry import registered_codes
from policies.models import Policy
from quotes.models import InsurerQuote, Issuance, QuoteRequest
from quotes.services.issuance import issuance_process
from quotes.services.quote_requests import insurer_quote_fetch
from quotes.validation import PRODUCT_FIELDS
from tests import samples
from tests.conftest import token_api_as, wait_until

REQUESTS = "/api/quote-requests/"
POLICIES = "/api/policies/"


def detail_url(public_id: str) -> str:
    return f"{REQUESTS}{public_id}/"


def issue_url(insurer_quote_id: int | str) -> str:
    return f"/api/insurer-quotes/{insurer_quote_id}/issue/"


def issuance_url(issuance_id: int | str) -> str:
    return f"/api/issuances/{issuance_id}/"


@pytest.fixture
def clients(agents) -> dict[str, APIClient]:
    """One token-authenticated API client per agency's agent."""
    return {code: token_api_as(user) for code, user in agents.items()}


@pytest.fixture
def staff_client(db) -> APIClient:
    staff = get_user_model().objects.create_user("merkez", password="test-pass-123", is_staff=True)
    return token_api_as(staff)


def create(client: APIClient, product: str = "trafik", data: dict | None = None) -> dict:
    response = client.post(REQUESTS, {"product": product, "data": data or samples.TRAFIK}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def fetch_all(body: dict) -> None:
    """Run every insurer's call here, in the test's thread: the same service the I/O pool runs."""
    for row in body["results"]:
        insurer_quote_fetch(row["id"])


def row_of(body: dict, code: str) -> dict:
    return next(row for row in body["results"] if row["insurer"]["code"] == code)


def quoted(client: APIClient) -> dict:
    """A request whose four insurers have all answered, as read back over the API."""
    body = create(client)
    fetch_all(body)
    return client.get(detail_url(body["id"])).json()


def issued(client: APIClient, code: str = "anka") -> tuple[dict, dict]:
    """A request, and the issuance of one insurer's quote taken through to a policy."""
    body = quoted(client)
    response = client.post(issue_url(row_of(body, code)["id"]), {"payment_token": samples.PAYMENT_TOKEN}, format="json")
    assert response.status_code == 202, response.content
    assert issuance_process(response.json()["id"]) == "SUBMITTED"
    return body, client.get(issuance_url(response.json()["id"])).json()


# --- Quote requests ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_create_answers_201_with_a_queued_row_per_insurer(clients, sandbox):
    """POST stores the request and answers it at once, every insurer queued, identity masked."""
    body = create(clients["ACENTE1"])
    assert sorted(row["insurer"]["code"] for row in body["results"]) == registered_codes()
    assert {row["state"] for row in body["results"]} == {"QUEUED"}
    assert body["complete"] is False
    assert body["product"] == "trafik" and body["plate"] == "34ABC123"
    assert body["owner_id"] == "100******46"
    assert body["data"]["owner_id"] == "100******46" and body["data"]["usage"] == "private"
    assert QuoteRequest.objects.get(public_id=body["id"]).agency.code == "ACENTE1"


@pytest.mark.django_db
def test_read_shows_each_insurers_quote_or_refusal(clients, sandbox):
    """After the calls, GET shows premiums as decimal strings and a refusal's code and reason."""
    sandbox["bogazici"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "BS-300"}])
    client = clients["ACENTE1"]
    body = quoted(client)
    assert body["complete"] is True
    refused = row_of(body, "bogazici")
    assert refused["state"] == "FAILED" and refused["state_label"] == "Reddedildi"
    assert refused["message"] == "Araç teminata uygun değil"
    assert refused["provider_code"] == "BS-300"
    assert refused["error_class"] == "permanent" and refused["error_kind"] == "business_reject"
    assert refused["premium"] is None
    for code in sorted(set(registered_codes()) - {"bogazici"}):
        row = row_of(body, code)
        assert row["state"] == "SUCCEEDED" and row["is_final"] is True
        assert isinstance(row["premium"], str) and Decimal(row["premium"]) > 0
        assert len(row["premium"].split(".")[1]) == 2
        assert row["quote_no"] and row["valid_until"] and row["currency"]
        assert row["attempt"] == 1 and row["max_attempts"] >= 1
    # Quotes first, cheapest first; refusals after.
    premiums = [Decimal(r["premium"]) for r in body["results"] if r["state"] == "SUCCEEDED"]
    assert premiums == sorted(premiums) and body["results"][-1]["state"] == "FAILED"


@pytest.mark.django_db
def test_retried_insurer_shows_the_attempt_it_took(clients, sandbox):
    """A throttled insurer answers on its second attempt, and the row says so."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "throttle", "wait_seconds": 1}])
    client = clients["ACENTE1"]
    body = quoted(client)
    anka = row_of(body, "anka")
    assert anka["state"] == "SUCCEEDED" and anka["attempt"] == 2 and anka["max_attempts"] >= 2


@pytest.mark.django_db
def test_dask_request_over_the_api(clients, sandbox):
    """DASK takes its own fields and gets quotes after the address check."""
    client = clients["ACENTE1"]
    body = create(client, "dask", {**samples.DASK_RISK, **samples.DASK_ADDRESS})
    fetch_all(body)
    body = client.get(detail_url(body["id"])).json()
    assert {row["state"] for row in body["results"]} == {"SUCCEEDED"}


@pytest.mark.django_db
def test_read_after_the_deadline_closes_unanswered_insurers(clients, sandbox):
    """Past the deadline an insurer that never answered reads NO_ANSWER, with a reason."""
    client = clients["ACENTE1"]
    body = create(client)
    QuoteRequest.objects.filter(public_id=body["id"]).update(deadline_at=timezone.now() - timedelta(seconds=1))
    body = client.get(detail_url(body["id"])).json()
    assert {row["state"] for row in body["results"]} == {"NO_ANSWER"}
    assert {row["message"] for row in body["results"]} == {"Yanıt alınamadı."}
    assert body["complete"] is True


@pytest.mark.django_db
def test_list_is_newest_first_and_searchable_by_plate_or_customer(clients, sandbox):
    """The list finds a request by plate (any spacing/case) or full identity number, masked."""
    client = clients["ACENTE1"]
    first = create(client)
    second = create(client, data={**samples.TRAFIK, "plate": "06 abc 42"})
    listed = client.get(REQUESTS).json()
    assert listed["count"] == 2 and [r["id"] for r in listed["results"]] == [second["id"], first["id"]]
    assert {r["owner_id"] for r in listed["results"]} == {"100******46"}
    assert [r["id"] for r in client.get(REQUESTS, {"search": "06 AbC"}).json()["results"]] == [second["id"]]
    assert client.get(REQUESTS, {"search": "35ZZ999"}).json()["count"] == 0
    # The identity number travels in a POST body, never in a URL an access log keeps.
    found = client.post(REQUESTS + "search/", {"search": samples.TRAFIK["owner_id"]}, format="json")
    assert found.status_code == 200 and found.json()["count"] == 2
    assert client.post(REQUESTS + "search/", {"search": "06 AbC"}, format="json").json()["count"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize("term", [samples.TRAFIK["owner_id"], "100 000 001 46", "4540536920", "100000001"])
def test_a_get_search_by_identity_number_is_refused_pointing_at_the_post_search(clients, term):
    """`?search=<TCKN>` is written whole by the access log: 400 naming `search` and the POST."""
    response = clients["ACENTE1"].get(REQUESTS, {"search": term})
    assert response.status_code == 400
    [message] = response.json()["search"]
    assert "POST /api/quote-requests/search/" in message and "kimlik" in message


@pytest.mark.django_db
@pytest.mark.parametrize("body", [{}, {"search": ""}, {"search": "x" * 65}, {"search": ["a"]}])
def test_a_post_search_without_a_usable_term_answers_400_naming_it(clients, body):
    response = clients["ACENTE1"].post(REQUESTS + "search/", body, format="json")
    assert response.status_code == 400 and list(response.json()) == ["search"]


@pytest.mark.django_db
def test_list_pages_with_limit_and_offset(clients, sandbox):
    """Lists come in pages; junk or huge paging values never fail."""
    client = clients["ACENTE1"]
    for _ in range(3):
        create(client)
    page = client.get(REQUESTS, {"limit": 2}).json()
    assert page["count"] == 3 and len(page["results"]) == 2 and page["next"]
    assert len(client.get(page["next"]).json()["results"]) == 1
    for params in ({"limit": "abc"}, {"offset": "-5"}, {"offset": str(10**30)}, {"limit": str(10**30)}):
        assert client.get(REQUESTS, params).status_code == 200
        assert client.get(POLICIES, params).status_code == 200


# --- Issuance and policies ----------------------------------------------------------------------


@pytest.mark.django_db
def test_issue_answers_202_then_the_issuance_reaches_a_policy(clients, sandbox):
    """Issuing a quote answers 202; once processed the issuance carries the policy, listed under policies."""
    client = clients["ACENTE1"]
    body, issuance = issued(client, "cinar")
    assert issuance["state"] == "SUBMITTED" and issuance["policy_no"]
    assert issuance["quote_request"] == body["id"] and issuance["insurer"]["code"] == "cinar"
    assert "payload" not in issuance and "payment_token" not in json.dumps(issuance)
    policies = client.get(POLICIES).json()
    assert policies["count"] == 1
    policy = policies["results"][0]
    assert policy["policy_no"] == issuance["policy_no"] and policy["status"] == "ACTIVE"
    assert policy["owner_id"] == "100******46" and policy["premium"] == row_of(body, "cinar")["premium"]
    assert sandbox["cinar"].state.counts()["issued_total"] == 1


@pytest.mark.django_db
def test_issuing_again_answers_200_with_the_same_issuance(clients, sandbox):
    """A repeat (double click, retry after a lost answer) gets the stored issuance, not a second one."""
    client = clients["ACENTE1"]
    row = row_of(quoted(client), "anka")
    first = client.post(issue_url(row["id"]), {"payment_token": samples.PAYMENT_TOKEN}, format="json")
    second = client.post(issue_url(row["id"]), {"payment_token": samples.PAYMENT_TOKEN}, format="json")
    assert (first.status_code, second.status_code) == (202, 200)
    assert first.json()["id"] == second.json()["id"] and first.json()["reference"] == second.json()["reference"]
    assert Issuance.objects.count() == 1


@pytest.mark.django_db
def test_refused_quote_cannot_be_issued(clients, sandbox):
    """An insurer's refusal is not a quote: issuing it answers 409 with the reason."""
    sandbox["bogazici"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "BS-300"}])
    client = clients["ACENTE1"]
    row = row_of(quoted(client), "bogazici")
    response = client.post(issue_url(row["id"]), {"payment_token": samples.PAYMENT_TOKEN}, format="json")
    assert response.status_code == 409
    assert response.json() == {"detail": "Bu şirketten geçerli bir teklif yok."}
    assert Issuance.objects.count() == 0


@pytest.mark.django_db
def test_expired_quote_answers_409(clients, sandbox):
    """A quote past its validity is refused clearly, and nothing is stored."""
    client = clients["ACENTE1"]
    row = row_of(quoted(client), "anka")
    InsurerQuote.objects.filter(pk=row["id"]).update(valid_until=timezone.now() - timedelta(minutes=1))
    response = client.post(issue_url(row["id"]), {"payment_token": samples.PAYMENT_TOKEN}, format="json")
    assert response.status_code == 409 and "süresi dolmuş" in response.json()["detail"]
    assert Issuance.objects.count() == 0


@pytest.mark.django_db
def test_second_quote_of_the_same_request_answers_409(clients, sandbox):
    """One request, one policy: once one insurer's quote is being issued, another's is refused."""
    client = clients["ACENTE1"]
    body = quoted(client)
    ok = client.post(issue_url(row_of(body, "anka")["id"]), {"payment_token": samples.PAYMENT_TOKEN}, format="json")
    other = client.post(issue_url(row_of(body, "deniz")["id"]), {"payment_token": "tok"}, format="json")
    assert ok.status_code == 202 and other.status_code == 409 and other.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [{}, {"payment_token": ""}, {"payment_token": "   "}, {"payment_token": None}, {"payment_token": "a\x00b"}],
)
def test_issue_without_a_payment_token_names_the_field(clients, sandbox, body):
    """A missing or blank payment token answers 400 naming `payment_token`; nothing is stored."""
    client = clients["ACENTE1"]
    row = row_of(quoted(client), "anka")
    response = client.post(issue_url(row["id"]), body, format="json")
    assert response.status_code == 400 and "payment_token" in response.json()
    assert Issuance.objects.count() == 0


# --- Bad input never fails: 400 naming the field -----------------------------------------------

HUGE = 10**30


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "error_path"),
    [
        ({"data": samples.TRAFIK}, ("product",)),
        ({"product": "trafik"}, ("data",)),
        ({"product": "trafik", "data": None}, ("data",)),
        ({"product": "trafik", "data": "plate=34ABC123"}, ("data",)),
        ({"product": "trafik", "data": [samples.TRAFIK]}, ("data",)),
        ({"product": "konut", "data": samples.TRAFIK}, ("product",)),
        ({"product": 7, "data": samples.TRAFIK}, ("product",)),
        ({"product": ["trafik"], "data": samples.TRAFIK}, ("product",)),
        ({"product": "trafik", "data": {}}, ("data", "plate")),
        ({"product": "trafik", "data": {**samples.TRAFIK, "plate": "99ZZ1"}}, ("data", "plate")),
        ({"product": "trafik", "data": {**samples.TRAFIK, "owner_id": "12345678901"}}, ("data", "owner_id")),
        ({"product": "trafik", "data": {**samples.TRAFIK, "owner_id": 10000000146}}, ("data", "owner_id")),
        ({"product": "trafik", "data": {**samples.TRAFIK, "plate": {"a": 1}}}, ("data", "plate")),
        ({"product": "trafik", "data": {**samples.TRAFIK, "usage": ["private"]}}, ("data", "usage")),
        ({"product": "trafik", "data": {**samples.TRAFIK, "plate": "34ABC123\x00"}}, ("data", "plate")),
        ({"product": "trafik", "data": {**samples.TRAFIK, "plate": "3" * 100_000}}, ("data", "plate")),
        ({"product": "kasko", "data": {**samples.KASKO, "model_year": HUGE}}, ("data", "model_year")),
        ({"product": "kasko", "data": {**samples.KASKO, "model_year": -HUGE}}, ("data", "model_year")),
        ({"product": "kasko", "data": {**samples.KASKO, "model_year": "9" * 5000}}, ("data", "model_year")),
        ({"product": "kasko", "data": {**samples.KASKO, "model_year": 1e308}}, ("data", "model_year")),
        ({"product": "kasko", "data": {**samples.KASKO, "model_year": True}}, ("data", "model_year")),
        ({"product": "kasko", "data": {**samples.KASKO, "brand_code": 12}}, ("data", "brand_code")),
        ({"product": "dask", "data": {**samples.DASK_RISK, "uavt_code": "١٢٣٤٥٦٧٨٩٠"}}, ("data", "uavt_code")),
        (
            {"product": "dask", "data": {**samples.DASK_ADDRESS, **samples.DASK_RISK, "gross_m2": HUGE}},
            ("data", "gross_m2"),
        ),
    ],
)
def test_bad_input_answers_400_naming_the_field(clients, sandbox, body, error_path):
    """Wrong types, missing parts, unknown products and huge values: 400 with the field named."""
    response = clients["ACENTE1"].post(REQUESTS, body, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()
    for key in error_path:
        errors = errors[key]
    assert isinstance(errors, list) and all(isinstance(message, str) and message for message in errors)
    assert QuoteRequest.objects.count() == 0


FIELDS = sorted({field for fields in PRODUCT_FIELDS.values() for field in fields})
SAMPLE_VALUES = {**samples.TRAFIK, **samples.KASKO, **samples.DASK_ADDRESS, **samples.DASK_RISK}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)
field_values = st.one_of(st.sampled_from(list(SAMPLE_VALUES.values())), json_values)


@pytest.mark.django_db
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    product=st.one_of(st.sampled_from(sorted(PRODUCT_FIELDS)), json_values),
    data=st.one_of(st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), field_values), json_values),
)
def test_any_json_body_answers_201_or_400(clients, sandbox, product, data):
    """Whatever JSON arrives, the answer is a request or field errors: never a server error."""
    response = clients["ACENTE1"].post(REQUESTS, {"product": product, "data": data}, format="json")
    assert response.status_code in (201, 400), response.content
    if response.status_code == 400:
        assert set(response.json()) <= {"product", "data"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "raw",
    [b"{", b"", b"null", b"[1, 2]", b'"text"', b"42", b'{"product": NaN}', b'{"a": ' + b"9" * 5000 + b"}", b"\xff\xfe"],
)
def test_body_that_is_not_a_json_object_answers_400(clients, sandbox, raw):
    """Malformed JSON, a JSON non-object, or bytes that are not text: 400, never 500."""
    response = clients["ACENTE1"].post(REQUESTS, raw, content_type="application/json")
    assert response.status_code == 400, response.content
    assert isinstance(response.json(), dict)


@pytest.mark.django_db
def test_fields_the_product_does_not_use_are_refused_even_from_a_huge_body(clients, sandbox):
    """Unknown fields never reach the database or an insurer, however large the body: the answer
    names them (insurehub.api_input), without echoing what they held."""
    raw = json.dumps({"product": "trafik", "data": {**samples.TRAFIK, "junk": "x" * 3_000_000}, "extra": 1})
    response = clients["ACENTE1"].post(REQUESTS, raw, content_type="application/json")
    assert response.status_code == 400 and list(response.json()) == ["extra"]
    assert len(response.content) < 1000 and not QuoteRequest.objects.exists()
    in_data = json.dumps({"product": "trafik", "data": {**samples.TRAFIK, "junk": "x" * 3_000_000}})
    response = clients["ACENTE1"].post(REQUESTS, in_data, content_type="application/json")
    assert response.status_code == 400 and list(response.json()["data"]) == ["junk"]
    assert len(response.content) < 1000 and not QuoteRequest.objects.exists()


@pytest.mark.django_db
def test_form_encoded_body_is_validated_too(clients, sandbox):
    """A form post (no nested `data`) answers 400, not a server error: the product's field sent
    beside `product` is named as one this operation does not take, and a bare one asks for `data`."""
    response = clients["ACENTE1"].post(REQUESTS, {"product": "trafik", "plate": "34ABC123"})
    assert response.status_code == 400 and "plate" in response.json()
    response = clients["ACENTE1"].post(REQUESTS, {"product": "trafik"})
    assert response.status_code == 400 and "data" in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("search", ["a\x00b", "x" * 65])
def test_bad_search_answers_400(clients, sandbox, search):
    response = clients["ACENTE1"].get(REQUESTS, {"search": search})
    assert response.status_code == 400 and "search" in response.json()


BAD_IDS = ["not-a-uuid", "0", "-1", "1.5", "١٢", str(2**63), str(HUGE), "%00", "1e3", " 1"]


@pytest.mark.django_db
@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_malformed_or_unknown_ids_answer_json_404(clients, sandbox, bad_id):
    """Non-UUID, negative, non-ASCII and out-of-range ids answer a JSON 404 on every route."""
    client = clients["ACENTE1"]
    for response in (
        client.get(detail_url(bad_id)),
        client.get(issuance_url(bad_id)),
        client.post(issue_url(bad_id), {"payment_token": samples.PAYMENT_TOKEN}, format="json"),
    ):
        assert response.status_code == 404, (response.request["PATH_INFO"], response.content)
        assert "detail" in response.json()


@pytest.mark.django_db
def test_unknown_but_well_formed_ids_answer_404(clients, sandbox):
    client = clients["ACENTE1"]
    assert client.get(detail_url("00000000-0000-4000-8000-000000000000")).status_code == 404
    assert client.get(issuance_url(987654)).status_code == 404
    assert client.post(issue_url(987654), {"payment_token": "tok"}, format="json").status_code == 404


# --- Authentication -------------------------------------------------------------------------------

ENDPOINTS = [
    ("get", REQUESTS),
    ("post", REQUESTS),
    ("get", detail_url("00000000-0000-4000-8000-000000000000")),
    ("post", issue_url(1)),
    ("get", issuance_url(1)),
    ("get", POLICIES),
    ("get", "/api/schema/"),
    ("get", "/api/docs/"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_anonymous_caller_is_refused(method, url):
    """Without a session or token every endpoint answers 401/403 and does nothing."""
    response = getattr(APIClient(), method)(url, {}, format="json")
    assert response.status_code in (401, 403)
    assert QuoteRequest.objects.count() == 0


@pytest.mark.django_db
def test_wrong_token_is_refused():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get(REQUESTS).status_code in (401, 403)


@pytest.mark.django_db
def test_token_is_obtained_with_username_and_password_and_then_works(agents, sandbox):
    """POST /api/auth/token/ trades a password for a token that authenticates later calls."""
    anonymous = APIClient()
    wrong = anonymous.post("/api/auth/token/", {"username": "ajan-acente1", "password": "nope"}, format="json")
    assert wrong.status_code == 400
    response = anonymous.post(
        "/api/auth/token/", {"username": "ajan-acente1", "password": "test-pass-123"}, format="json"
    )
    assert response.status_code == 200
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    create(client)
    assert client.get(REQUESTS).json()["count"] == 1


@pytest.mark.django_db
def test_session_login_works_and_writes_need_the_csrf_token(agents, sandbox):
    """A logged-in browser session reads freely; a write must carry the CSRF token, as in the web UI."""
    client = APIClient(enforce_csrf_checks=True)
    assert client.login(username="ajan-acente1", password="test-pass-123")
    assert client.get(REQUESTS).status_code == 200
    body = {"product": "trafik", "data": samples.TRAFIK}
    assert client.post(REQUESTS, body, format="json").status_code == 403
    client.get("/giris/")  # sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    assert client.post(REQUESTS, body, format="json", HTTP_X_CSRFTOKEN=token).status_code == 201


@pytest.mark.django_db
def test_user_without_an_agency_cannot_create_and_sees_nothing(seeded_accounts, clients):
    """A login tied to no agency gets 403 on create and empty lists, never another agency's data."""
    create(clients["ACENTE1"])
    loner = token_api_as(get_user_model().objects.create_user("yalniz", password="test-pass-123"))
    response = loner.post(REQUESTS, {"product": "trafik", "data": samples.TRAFIK}, format="json")
    assert response.status_code == 403 and response.json()["detail"]
    assert loner.get(REQUESTS).json()["count"] == 0
    assert loner.get(POLICIES).json()["count"] == 0


# --- Agency isolation -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_agent_cannot_read_list_or_issue_another_agencys_objects(clients, sandbox):
    """Agent B gets 404 for A's request, quote and issuance, and A's objects are absent from B's lists."""
    a, b = clients["ACENTE1"], clients["ACENTE2"]
    body, issuance = issued(a, "anka")
    other_row = row_of(body, "deniz")
    b_own = create(b)

    assert b.get(detail_url(body["id"])).status_code == 404
    assert b.get(issuance_url(issuance["id"])).status_code == 404
    for row_id in (row_of(body, "anka")["id"], other_row["id"]):
        response = b.post(issue_url(row_id), {"payment_token": samples.PAYMENT_TOKEN}, format="json")
        assert response.status_code == 404
    assert Issuance.objects.count() == 1 and Issuance.objects.get().agency.code == "ACENTE1"

    b_list = b.get(REQUESTS).json()
    assert [r["id"] for r in b_list["results"]] == [b_own["id"]]
    assert b.get(REQUESTS, {"search": samples.TRAFIK["plate"]}).json()["results"] == b_list["results"]
    assert b.get(POLICIES).json() == {"count": 0, "next": None, "previous": None, "results": []}

    # A still sees its own: the 404s above were scoping, not missing data.
    assert a.get(detail_url(body["id"])).status_code == 200
    assert a.get(issuance_url(issuance["id"])).status_code == 200
    assert a.get(POLICIES).json()["count"] == 1
    assert a.get(detail_url(b_own["id"])).status_code == 404


@pytest.mark.django_db
def test_staff_alone_see_nothing(clients, staff_client, sandbox):
    """`is_staff` grants no reading across agencies: a staff token with no agency lists nothing."""
    body_a = create(clients["ACENTE1"])
    assert staff_client.get(REQUESTS).json()["count"] == 0
    assert staff_client.get(detail_url(body_a["id"])).status_code == 404


def test_view_all_agencies_reads_every_agency(clients, staff_client, sandbox):
    """`quotes.view_all_agencies` reads every agency's requests, issuances and policies."""
    from django.contrib.auth.models import Permission

    body_a, issuance = issued(clients["ACENTE1"], "bogazici")
    body_b = create(clients["ACENTE2"])
    staff = get_user_model().objects.get(username="merkez")
    staff.user_permissions.add(Permission.objects.get(codename="view_all_agencies"))
    assert {r["id"] for r in staff_client.get(REQUESTS).json()["results"]} == {body_a["id"], body_b["id"]}
    assert staff_client.get(detail_url(body_b["id"])).status_code == 200
    assert staff_client.get(issuance_url(issuance["id"])).json()["policy_no"] == issuance["policy_no"]
    assert staff_client.get(POLICIES).json()["count"] == Policy.objects.count() == 1


# --- Schema ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_schema_is_openapi_3_with_every_route(clients):
    """GET /api/schema/ answers an OpenAPI 3 document naming each operation; /api/docs/ renders."""
    client = clients["ACENTE1"]
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.")
    assert {
        "/api/quote-requests/",
        "/api/quote-requests/{public_id}/",
        "/api/insurer-quotes/{insurer_quote_id}/issue/",
        "/api/issuances/{issuance_id}/",
        "/api/policies/",
        "/api/auth/token/",
    } <= set(schema["paths"])
    for path in ("/api/quote-requests/search/", "/api/customers/search/"):
        search = schema["paths"][path]["post"]
        assert search["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("ListSearchInput")
        assert {p["name"] for p in search["parameters"]} >= {"limit", "offset"}
    issue = schema["paths"]["/api/insurer-quotes/{insurer_quote_id}/issue/"]["post"]
    assert {"200", "202", "400", "404", "409"} <= set(issue["responses"])
    docs = client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger" in docs.content.lower()


def test_schema_validates_without_warnings(tmp_path):
    """`manage.py spectacular --validate --fail-on-warn` passes: every operation is described."""
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    assert "openapi: 3" in (tmp_path / "schema.yaml").read_text()


# --- End to end, with the real worker -----------------------------------------------------------------


def poll(client: APIClient, url: str, done: Callable[[dict], bool], *, timeout: float = 60.0) -> dict:
    def check() -> dict | None:
        body = client.get(url).json()
        return body if done(body) else None

    body = wait_until(check, timeout=timeout, interval=0.2)
    assert body is not None  # wait_until returns a truthy answer only
    return body


@pytest.mark.django_db(transaction=True)
def test_front_end_flow_with_the_real_worker(qcluster, agents, sandbox):
    """A front end's whole flow: create, poll until every insurer is final, issue, poll to a policy."""
    sandbox["deniz"].state.add_faults(
        [{"operation": "trafik_quote", "fault": "error", "code": "UNDERWRITING_DECLINED"}]
    )
    client = token_api_as(agents["ACENTE1"])
    body = create(client)
    body = poll(client, detail_url(body["id"]), lambda b: b["complete"])
    states = {row["insurer"]["code"]: row["state"] for row in body["results"]}
    assert states["anka"] == states["bogazici"] == states["cinar"] == "SUCCEEDED"
    assert states["deniz"] == "FAILED"

    response = client.post(
        issue_url(row_of(body, "anka")["id"]), {"payment_token": samples.PAYMENT_TOKEN}, format="json"
    )
    assert response.status_code == 202
    issuance = poll(client, issuance_url(response.json()["id"]), lambda i: i["state"] in ("SUBMITTED", "FAILED"))
    assert issuance["state"] == "SUBMITTED" and issuance["policy_no"]
    assert [p["policy_no"] for p in client.get(POLICIES).json()["results"]] == [issuance["policy_no"]]
    assert sandbox["anka"].state.counts()["issued_total"] == 1
