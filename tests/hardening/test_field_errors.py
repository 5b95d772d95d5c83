"""Bad input, field by field: every field of every product gives a clear Turkish error on that field.

Over the web form and the API alike, one bad field among good ones: the answer names that field
with a non-empty message, the page or body shows it, nothing is stored, and nothing crashes.
A hypothesis pass then throws arbitrary text at every field of the forms.
"""

from __future__ import annotations

import html

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from quotes.models import QuoteRequest
from quotes.validation import PRODUCT_FIELDS
from tests import samples
from tests.conftest import api_as
from tests.hardening.test_isolation_matrix import agency_objects

pytestmark = pytest.mark.django_db

VALID = {
    "trafik": dict(samples.TRAFIK),
    "kasko": dict(samples.KASKO),
    "dask": {**samples.DASK_RISK, **samples.DASK_ADDRESS},
}
# Values no field accepts: blank, whitespace, a control character, non-ASCII digits, markup, huge text,
# a number with a fraction, an absurd number.
BAD_TEXT = ["", "   ", "34\x00ABC", "١٢٣٤٥٦٧٨٩٠", "<script>alert(1)</script>", "9" * 300, "1.5", "-99999999999"]
# What JSON adds: wrong types.
BAD_JSON: list[object] = [None, True, [], {"value": 1}, 1e308]
CASES = [(product, field) for product, fields in PRODUCT_FIELDS.items() for field in fields]


@pytest.fixture
def api(agents) -> APIClient:
    client = api_as(agents["ACENTE1"])
    return client


@pytest.mark.parametrize(("product", "field"), CASES)
def test_form_names_the_bad_field_in_turkish(desk, product, field):
    """One bad field among good ones: the form comes back with a message on that field, nothing saved."""
    for bad in BAD_TEXT:
        response = desk.post(f"/teklif/yeni/{product}/", {**VALID[product], field: bad})
        assert response.status_code == 200, (field, bad)
        errors = response.context["form"].errors
        assert list(errors) == [field], (field, bad, errors)
        message = errors[field][0]
        assert " " in message.strip(), message  # a sentence for the agent, not a code
        assert html.escape(message) in response.content.decode(), (field, bad)
    assert QuoteRequest.objects.count() == 0


@pytest.mark.parametrize(("product", "field"), CASES)
def test_api_names_the_bad_field(api, product, field):
    """The same over the API: 400 with `data.<field>` holding a message, for text and wrong JSON types."""
    for bad in [*BAD_TEXT, *BAD_JSON]:
        response = api.post(
            "/api/quote-requests/", {"product": product, "data": {**VALID[product], field: bad}}, "json"
        )
        assert response.status_code == 400, (field, bad, response.content)
        body = response.json()
        assert list(body) == ["data"] and list(body["data"]) == [field], (field, bad, body)
        assert all(isinstance(m, str) and m for m in body["data"][field])
    assert QuoteRequest.objects.count() == 0


def test_payment_token_errors_name_the_field(agents, desk, api):
    """Issuance: a missing, blank or oversized payment token is a field error on the form and the API."""
    objects = agency_objects(agents["ACENTE1"])
    for bad in ["", "   ", "x" * 5000]:
        response = desk.post(f"/teklifler/{objects.quote.pk}/policelestir/", {"payment_token": bad})
        assert response.status_code == 200 and "payment_token" in response.context["form"].errors, bad
        response = api.post(f"/api/insurer-quotes/{objects.quote.pk}/issue/", {"payment_token": bad}, "json")
        assert response.status_code == 400 and "payment_token" in response.json(), bad


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    product=st.sampled_from(sorted(PRODUCT_FIELDS)),
    values=st.dictionaries(
        st.sampled_from(sorted({f for fields in PRODUCT_FIELDS.values() for f in fields})),
        st.text(max_size=40),
    ),
)
def test_any_form_input_is_a_request_or_field_errors(desk, product, values):
    """Whatever is typed: a new request (redirect), DASK's address step (its code's address shown,
    nothing stored yet), or the form again with errors only on its own fields."""
    response = desk.post(f"/teklif/yeni/{product}/", {**VALID[product], **values})
    assert response.status_code in (200, 302)
    if response.status_code == 200:
        errors = response.context["form"].errors
        if product == "dask" and not errors:
            assert response.context["address_check"] is not None
            return
        assert errors and set(errors) <= set(PRODUCT_FIELDS[product])
        assert all(message for messages in errors.values() for message in messages)
