"""Customer search by name: Turkish letters, any case, typed with or without the Turkish keyboard."""

from __future__ import annotations

import pytest

from customers.models import Customer
from customers.name_search import name_fold
from customers.selectors import customer_list

pytestmark = pytest.mark.django_db

NAMES = ["IŞIK Sigorta Ltd.", "Çağrı Öztürk", "İlknur Ilgaz", "Şükrü Güneş", "Mehmet Kaya"]


@pytest.fixture
def people(agents) -> dict[str, Customer]:
    agency = agents["ACENTE1"].agent_profile.agency
    # Distinct placeholders: the numbers play no part in a name search.
    return {
        name: Customer.objects.create(agency=agency, name=name, identity_no=f"9{index:010d}")
        for index, name in enumerate(NAMES)
    }


@pytest.mark.parametrize(
    ("typed", "found"),
    [
        ("ışık", ["IŞIK Sigorta Ltd."]),
        ("isik", ["IŞIK Sigorta Ltd."]),
        ("IŞIK", ["IŞIK Sigorta Ltd."]),
        ("Isık sigorta", ["IŞIK Sigorta Ltd."]),
        ("CAGRI", ["Çağrı Öztürk"]),
        ("öztürk", ["Çağrı Öztürk"]),
        ("OZTURK", ["Çağrı Öztürk"]),
        ("ilknur", ["İlknur Ilgaz"]),
        ("İLGAZ", ["İlknur Ilgaz"]),
        ("ılgaz", ["İlknur Ilgaz"]),
        ("şükrü güneş", ["Şükrü Güneş"]),
        ("SUKRU", ["Şükrü Güneş"]),
        ("kaya", ["Mehmet Kaya"]),
        ("ka", ["Mehmet Kaya"]),
        ("100%", []),
        ("_", []),
    ],
)
def test_a_name_is_found_however_its_turkish_letters_are_typed(agents, people, typed, found):
    names = sorted(customer_list(user=agents["ACENTE1"], search=typed).values_list("name", flat=True))
    assert names == sorted(found)


def test_the_other_agency_does_not_find_them(agents, people):
    assert not customer_list(user=agents["ACENTE2"], search="isik").exists()


def test_the_desk_search_box_folds_too(desk, people):
    html = desk.get(desk.post("/musteriler/ara/", {"q": "CAGRI OZTURK"})["Location"]).content.decode()
    assert "Çağrı Öztürk" in html and "Mehmet Kaya" not in html


def test_python_and_sql_folds_agree(agents, people):
    from customers.name_search import name_folded

    folded = dict(Customer.objects.annotate(key=name_folded("name")).values_list("name", "key"))
    assert folded == {name: name_fold(name) for name in NAMES}
