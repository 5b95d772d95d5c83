"""The vehicle picker's answers: Turkish-insensitive search over the current list, for logged-in users only."""

from __future__ import annotations

from datetime import date

import pytest
from django.test import Client
from django.urls import reverse

from .conftest import HEADER, import_rows

pytestmark = pytest.mark.django_db

BRANDS, TYPES, YEARS = reverse("vehicle_brands"), reverse("vehicle_types"), reverse("vehicle_years")


def brands(client: Client, query: str = "") -> list[str]:
    response = client.get(BRANDS, {"q": query})
    assert response.status_code == 200
    return [brand["name"] for brand in response.json()["results"]]


@pytest.mark.parametrize("typed", ["fıat", "FIAT", "FİAT", "fiat", "Fiat", "  fi  "])
def test_a_brand_is_found_however_the_agent_types_its_i(desk, sample_list, typed):
    """Dotless ı, dotted İ, upper or lower case: every way a Turkish keyboard writes FIAT finds it."""
    assert brands(desk, typed) == ["FIAT"]


def test_brand_search_matches_inside_names_and_by_code(desk, sample_list):
    assert brands(desk, "renault") == ["RENAULT"]
    assert brands(desk, "benz") == ["MERCEDES-BENZ"]
    assert brands(desk, "012") == ["FIAT"]  # the code, for an agent who knows it
    assert brands(desk, "peugeot citroen") == []  # every word must match
    everyone = desk.get(BRANDS).json()
    assert everyone["list"] == "Aralık 2026" and everyone["more"] is False
    assert len(everyone["results"]) == 16 and everyone["results"][0] == {"code": "006", "name": "BMW"}


def test_types_of_one_brand_by_every_word_typed(desk, sample_list):
    """ "egea 1.4" finds the Egeas with a 1.4 engine of FIAT, and nothing of another brand."""
    answer = desk.get(TYPES, {"marka": "012", "q": "egea 1.4"}).json()
    assert answer["results"] == [
        {"code": "345", "name": "EGEA 1.4 FIRE URBAN"},
        {"code": "347", "name": "EGEA CROSS 1.4 FIRE STREET"},
    ]
    turkish = desk.get(TYPES, {"marka": "062", "q": "menzil"}).json()["results"]  # the list writes MENZİL
    assert [t["code"] for t in turkish] == ["011", "012"]
    assert desk.get(TYPES, {"marka": "038", "q": "egea"}).json()["results"] == []
    assert len(desk.get(TYPES, {"marka": "012"}).json()["results"]) == 5


def test_a_types_years_come_with_their_value_in_turkish_money(desk, sample_list):
    answer = desk.get(YEARS, {"marka": "012", "tip": "345"}).json()
    years = [entry["year"] for entry in answer["results"]]
    assert years == list(range(2026, 2015, -1))  # newest first; the Egea came out in 2016
    newest = answer["results"][0]
    assert newest == {"year": 2026, "value": "1290000.00", "value_text": "1.290.000,00 TL"}


def test_the_current_edition_answers_an_older_ones_names_do_not(desk, sample_list):
    """November's list knew a brand December's does not: the picker offers December's only."""
    import_rows([HEADER, ["099", "101", "ESKİ MARKA", "ESKİ TİP", "1000", "", ""]], month=date(2026, 11, 1))
    assert brands(desk, "eski") == []
    assert desk.get(YEARS, {"marka": "099", "tip": "101"}).json()["results"] == []


@pytest.mark.parametrize(
    ("url", "params"),
    [(TYPES, {"marka": "12"}), (TYPES, {"marka": "٠١٢"}), (YEARS, {"marka": "012", "tip": "34"}), (YEARS, {})],
)
def test_what_is_not_a_code_finds_nothing(desk, sample_list, url, params):
    assert desk.get(url, params).json()["results"] == []


def test_without_a_list_the_picker_is_told_so(desk):
    answer = desk.get(BRANDS, {"q": "fiat"}).json()
    assert answer == {"list": None, "results": [], "more": False, "detail": "Kasko değer listesi yüklenmemiş."}


@pytest.mark.parametrize("url", [BRANDS, f"{TYPES}?marka=012", f"{YEARS}?marka=012&tip=345"])
def test_logged_out_gets_401_and_no_vehicle(sample_list, url):
    """No login, no list: a 401 with a sentence (a script cannot show a login page), nothing of the list."""
    response = Client().get(url)
    assert response.status_code == 401
    assert response.json() == {"detail": "Oturumunuz kapanmış; yeniden giriş yapın."}
    assert "FIAT" not in response.content.decode()


def test_the_answers_are_read_only(desk, sample_list):
    assert desk.post(BRANDS, {"q": "fiat"}).status_code == 405
