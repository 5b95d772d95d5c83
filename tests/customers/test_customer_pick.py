"""The quote form's customer search box: the endpoint it asks (scoped to the agent's agency, the
term in a POST body, identity masked), and the form's own lookup when no script runs."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from stdnum.tr import tckimlik

from customers.models import Customer
from customers.selectors import CUSTOMER_PICK_LIMIT
from quotes.forms import CUSTOMER_AMBIGUOUS_MESSAGE, CUSTOMER_NOT_FOUND_MESSAGE, INVALID_CUSTOMER_MESSAGE
from quotes.models import QuoteRequest
from tests import samples

pytestmark = pytest.mark.django_db

PICK = "/musteriler/sec/"


def tckn(base: int) -> str:
    """A valid TCKN from nine digits (first not zero): the checksums computed, never guessed."""
    digits = str(base)
    return digits + tckimlik.calc_check_digits(digits)


def add(user, name: str, identity_no: str) -> Customer:
    return Customer.objects.create(
        agency=user.agent_profile.agency, name=name, identity_no=identity_no, created_by=user
    )


def found(client: Client, term: str) -> dict:
    response = client.post(PICK, {"q": term})
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    return response.json()


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p class="error" id="id_{field}_error">([^<]*)</p>', html)
    return match.group(1) if match else ""


@pytest.fixture
def people(agents) -> dict[str, Customer]:
    """ÇAĞLAR at both agencies (the same name), a namesake-free İŞBİLEN, and an Ayşe."""
    own, other = agents["ACENTE1"], agents["ACENTE2"]
    return {
        "caglar": add(own, "ÇAĞLAR YILMAZ", tckn(234567891)),
        "isbilen": add(own, "İŞBİLEN Ltd.", tckn(345678912)),
        "ayse": add(own, "Ayşe Çağ", tckn(456789123)),
        "other_caglar": add(other, "ÇAĞLAR DEMİR", tckn(987654321)),
    }


def test_part_of_a_turkish_name_finds_the_agencys_customers_only(desk, people):
    """ "çağ" finds ÇAĞLAR and Ayşe Çağ of the agent's agency, never the other agency's ÇAĞLAR."""
    answer = found(desk, "çağ")
    assert [item["name"] for item in answer["results"]] == ["Ayşe Çağ", "ÇAĞLAR YILMAZ"]
    assert answer["more"] is False
    caglar = next(item for item in answer["results"] if item["name"] == "ÇAĞLAR YILMAZ")
    number = people["caglar"].identity_no
    assert caglar == {
        "id": people["caglar"].pk,
        "name": "ÇAĞLAR YILMAZ",
        "identity": f"{number[:3]}******{number[-2:]}",
        "label": f"ÇAĞLAR YILMAZ · {number[:3]}******{number[-2:]}",
    }
    assert number not in str(answer)
    # Plain letters find Turkish ones, in any case.
    assert [item["name"] for item in found(desk, "isbilen")["results"]] == ["İŞBİLEN Ltd."]


def test_the_other_agency_never_sees_this_agencys_customers(other_desk, people):
    """The other agency's agent, the same term and the same identity prefix: only its own."""
    assert [item["name"] for item in found(other_desk, "çağ")["results"]] == ["ÇAĞLAR DEMİR"]
    assert found(other_desk, people["isbilen"].identity_no)["results"] == []
    assert found(other_desk, people["caglar"].identity_no[:7])["results"] == []


def test_an_identity_number_prefix_finds_by_number(desk, people):
    assert [item["id"] for item in found(desk, people["ayse"].identity_no[:5])["results"]] == [people["ayse"].pk]
    assert [item["id"] for item in found(desk, people["caglar"].identity_no)["results"]] == [people["caglar"].pk]


def test_at_most_twenty_are_listed_and_the_answer_says_there_are_more(desk, agents):
    for index in range(CUSTOMER_PICK_LIMIT + 3):
        add(agents["ACENTE1"], f"Çağrı {index:02d}", tckn(500000000 + index * 1000))
    answer = found(desk, "cagri")
    assert len(answer["results"]) == CUSTOMER_PICK_LIMIT and answer["more"] is True


def test_a_term_too_short_or_blank_lists_nobody(desk, people):
    assert found(desk, "ç")["results"] == [] and found(desk, "   ")["results"] == []
    assert found(desk, "x" * 500)["results"] == []


def test_the_endpoint_needs_a_login_a_post_and_a_csrf_token(people, agents):
    """Logged out: 401 with a Turkish sentence (a script cannot show a login page); a GET (a term
    in a URL) is refused; a POST without the form's CSRF token too."""
    anonymous = Client().post(PICK, {"q": "çağ"})
    assert anonymous.status_code == 401 and "giriş" in anonymous.json()["detail"]
    client = Client(enforce_csrf_checks=True)
    client.force_login(agents["ACENTE1"])
    assert client.get(PICK, {"q": "çağ"}).status_code == 405
    assert client.post(PICK, {"q": "çağ"}).status_code == 403


def test_the_form_page_lists_no_customer_and_carries_the_search_box(desk, people):
    """No <select> of every customer any more: the box names its endpoint, the pick is hidden."""
    html = desk.get("/teklif/yeni/trafik/").content.decode()
    assert 'data-customer-search="/musteriler/sec/"' in html and 'type="hidden" name="customer"' in html
    assert "ÇAĞLAR" not in html and '<option value="yeni"' not in html
    assert "/static/insurehub/customer-search.js" in html


# --- the form without scripts: the box is looked up on submit -------------------------------------


def post_trafik(client: Client, **fields: str):
    return client.post("/teklif/yeni/trafik/", {**samples.TRAFIK, "owner_id": "", **fields})


def test_a_name_typed_without_a_pick_is_looked_up_and_names_one_customer(desk, people):
    response = post_trafik(desk, customer_query="işbilen")
    assert response.status_code == 302
    request = QuoteRequest.objects.get()
    assert request.customer == people["isbilen"] and request.owner_id == people["isbilen"].identity_no


def test_a_full_name_among_several_matches_is_that_customer(desk, people, agents):
    add(agents["ACENTE1"], "ÇAĞLAR YILMAZ KARA", tckn(678912345))
    assert post_trafik(desk, customer_query="Çağlar Yılmaz").status_code == 302
    assert QuoteRequest.objects.get().customer == people["caglar"]


def test_an_ambiguous_or_unknown_name_is_a_customer_field_error(desk, people):
    response = post_trafik(desk, customer_query="çağ")
    assert response.status_code == 200 and field_error(response.content.decode(), "customer") == (
        CUSTOMER_AMBIGUOUS_MESSAGE
    )
    response = post_trafik(desk, customer_query="Demir")  # the other agency's ÇAĞLAR DEMİR
    assert field_error(response.content.decode(), "customer") == CUSTOMER_NOT_FOUND_MESSAGE
    assert not QuoteRequest.objects.exists()


@pytest.mark.parametrize("pick", ["abc", "9" * 19, "١", "-1", "0"])
def test_a_pick_that_is_no_customer_of_the_agency_is_a_field_error_never_a_500(desk, people, pick):
    response = post_trafik(desk, customer=pick)
    assert response.status_code == 200
    assert field_error(response.content.decode(), "customer") == INVALID_CUSTOMER_MESSAGE


def test_another_agencys_customer_picked_by_id_is_refused(desk, people):
    response = post_trafik(
        desk,
        customer=str(people["other_caglar"].pk),
        customer_query="ÇAĞLAR DEMİR",
        owner_id=samples.TRAFIK["owner_id"],
    )
    assert list(response.context["form"].errors) == ["customer"]
    assert not QuoteRequest.objects.exists()


def test_the_new_customer_tick_adds_one_inline(desk, agents):
    response = post_trafik(
        desk,
        owner_id=tckn(789123456),
        new_customer="on",
        customer_name="Çağla Öztürk",
        customer_phone="0532 123 45 67",
    )
    assert response.status_code == 302
    assert QuoteRequest.objects.get().customer == Customer.objects.get(name="Çağla Öztürk")


def test_a_long_name_picked_and_sent_back_is_still_the_customer(desk, agents):
    """The box shows "NAME · 123******50"; a 200-character name fits, whatever the script wrote."""
    long_name = "Çağlayan " + "Ö" * 191
    customer = add(agents["ACENTE1"], long_name, tckn(891234567))
    label = desk.post(PICK, {"q": "çağlayan"}).json()["results"][0]["label"]
    response = post_trafik(desk, customer=str(customer.pk), customer_query=label)
    assert response.status_code == 302 and QuoteRequest.objects.get().customer == customer
