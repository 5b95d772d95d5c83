"""A kasko's vehicle against the current TSB list: unknown codes and years are field errors, on the
desk's form and in the API alike, before any insurer is asked."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from quotes.models import QuoteRequest
from tests import samples
from tests.conftest import api_as

pytestmark = pytest.mark.django_db

KASKO_URL = reverse("quote_request_new", args=["kasko"])
# The tests' kasko vehicle is on the sample list: FIAT (012) EGEA 1.4 FIRE URBAN (345), 2021.
FIAT_EGEA = {**samples.KASKO, "model_year": "2021"}


def field_error(html: str, field: str) -> str:
    found = re.search(rf'<p class="error" id="id_{field}_error">(.*?)</p>', html)
    return found.group(1) if found else ""


@pytest.fixture
def api(agents) -> APIClient:
    client = api_as(agents["ACENTE1"])
    return client


def post_api(api: APIClient, data: dict):
    return api.post("/api/quote-requests/", {"product": "kasko", "data": data}, format="json")


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"brand_code": "999"}, "brand_code", "Marka kodu 999 kasko değer listesinde (Aralık 2026) yok."),
        ({"model_code": "999"}, "model_code", "Tip kodu 999, FIAT markasında yok (kasko değer listesi, Aralık 2026)."),
        # 201 is a RENAULT type code: a real type, of another brand.
        ({"model_code": "201"}, "model_code", "Tip kodu 201, FIAT markasında yok (kasko değer listesi, Aralık 2026)."),
        (
            {"model_year": "2015"},
            "model_year",
            "FIAT EGEA 1.4 FIRE URBAN için 2015 model yılının kasko değeri listede yok (listede 2016–2026 arası var).",
        ),
    ],
)
def test_a_vehicle_not_on_the_list_is_an_error_on_its_field_on_the_desk(desk, sample_list, changes, field, message):
    response = desk.post(KASKO_URL, {**FIAT_EGEA, **changes})
    html = response.content.decode()
    assert response.status_code == 200
    assert field_error(html, field) == message
    others = {"brand_code", "model_code", "model_year", "plate"} - {field}
    assert all(field_error(html, other) == "" for other in others)
    assert QuoteRequest.objects.count() == 0


@pytest.mark.parametrize(
    ("changes", "field", "fragment"),
    [
        ({"brand_code": "999"}, "brand_code", "Marka kodu 999"),
        ({"model_code": "999"}, "model_code", "Tip kodu 999"),
        ({"model_year": 2015}, "model_year", "2015 model yılının"),
    ],
)
def test_the_api_answers_the_same_field_errors_under_data(api, sample_list, changes, field, fragment):
    response = post_api(api, {**samples.KASKO, **changes})
    assert response.status_code == 400, response.content
    assert list(response.json()["data"]) == [field]
    assert fragment in response.json()["data"][field][0]
    assert QuoteRequest.objects.count() == 0


def test_a_vehicle_on_the_list_is_quoted_with_its_codes(desk, api, sample_list):
    """The codes stay what the insurers get: the request stores them as typed or picked."""
    response = desk.post(KASKO_URL, FIAT_EGEA)
    assert response.status_code == 302, response.content.decode()[:2000]
    stored = QuoteRequest.objects.get()
    assert (stored.input_data["brand_code"], stored.input_data["model_code"], stored.input_data["model_year"]) == (
        "012",
        "345",
        2021,
    )
    assert (
        post_api(api, {**samples.KASKO, "brand_code": "006", "model_code": "601", "model_year": 2024}).status_code
        == 201
    )


def test_a_malformed_code_gets_its_format_message_not_a_list_message(desk, sample_list):
    """The list is asked only about codes of the right form: "12" is told it needs 3 digits."""
    html = desk.post(KASKO_URL, {**FIAT_EGEA, "brand_code": "12"}).content.decode()
    assert field_error(html, "brand_code") == "Marka kodu 3 haneli olmalıdır (ör. 012)."
    assert field_error(html, "model_code") == ""  # not judged against a brand that is not known


def test_an_unknown_brand_is_reported_once_not_again_as_an_unknown_type(api, sample_list):
    response = post_api(api, {**samples.KASKO, "brand_code": "999", "model_code": "888", "model_year": 1990})
    assert set(response.json()["data"]) == {"brand_code"}


def test_without_any_list_the_codes_are_checked_for_their_form_only(desk):
    """No edition loaded (a new installation): the desk still quotes; the insurers judge the codes."""
    response = desk.post(KASKO_URL, {**samples.KASKO, "brand_code": "999", "model_code": "888"})
    assert response.status_code == 302
    assert "Kasko değer listesi yüklenmemiş" in desk.get(KASKO_URL).content.decode()


def test_the_kasko_form_offers_the_picker_and_keeps_the_labelled_code_fields(desk, sample_list):
    html = desk.get(KASKO_URL).content.decode()
    assert "data-vehicle-picker" in html and "Aralık 2026" in html
    assert "/static/insurehub/vehicle-picker.js" in html
    for label in ('for="id_model_year">Model yılı', 'for="id_brand_code">Marka kodu', 'for="id_model_code">Tip kodu'):
        assert label in html
    assert 'for="vehicle-brand-search">Marka ara' in html and 'for="vehicle-year">Yıl' in html
    trafik = desk.get(reverse("quote_request_new", args=["trafik"])).content.decode()
    assert "data-vehicle-picker" not in trafik and "vehicle-picker.js" not in trafik
