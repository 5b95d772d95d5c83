"""Customer search by name: Turkish letters, any case, typed with or without the Turkish keyboard."""

from __future__ import annotations

import pytest

from customers.models import Customer
from customers.name_search import name_fold
from customers.selectors import customer_list
from tests import samples
from tests.conftest import api_as

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


# --- every list: the same search, wherever a customer's name is looked up -------------------------

# Each name holds the letters SQLite's LIKE and lower() do not fold: Ş, Ç, Ğ, İ, I, ı.
LIST_NAMES = {
    "ayse": "Ayşe Yılmaz",
    "caglar": "Çağlar Demir",
    "isik": "IŞIK Lojistik",
    "istanbul": "İstanbul Tekstil A.Ş.",
    "plain": "Mehmet Kaya",
}
TYPED = [
    ("AYŞE", "ayse"),
    ("ayşe", "ayse"),
    ("çağlar", "caglar"),
    ("ÇAĞLAR", "caglar"),
    ("IŞIK", "isik"),
    ("ışık", "isik"),
    ("İSTANBUL", "istanbul"),
    ("istanbul", "istanbul"),
]


def _tckn(first_nine: str) -> str:
    """A valid TCKN from its first nine digits (the two check digits computed)."""
    digits = [int(d) for d in first_nine]
    tenth = (sum(digits[0:9:2]) * 7 - sum(digits[1:8:2])) % 10
    return first_nine + str(tenth) + str((sum(digits) + tenth) % 10)


@pytest.fixture
def book(agents) -> dict[str, dict]:
    """For each name: ACENTE1's customer, a quote request for them and a policy of theirs."""
    from policies.models import Policy
    from quotes.services import quote_requests
    from tests.quotes.policy_samples import imported_policy

    user = agents["ACENTE1"]
    entries = {}
    for index, (key, name) in enumerate(LIST_NAMES.items()):
        customer = Customer.objects.create(
            agency=user.agent_profile.agency, name=name, identity_no=_tckn(f"2{index + 1:08d}")
        )
        plate = f"34TR{index + 1:03d}"
        request = quote_requests.quote_request_create(
            user=user, product="trafik", data={**samples.TRAFIK, "plate": plate, "owner_id": ""}, customer=customer
        )
        policy = imported_policy(
            "ACENTE1", "anka", f"POL-{key.upper()}", plate=plate, owner_id=customer.identity_no, customer=customer
        )
        assert Policy.objects.filter(pk=policy.pk, customer=customer).exists()
        entries[key] = {"customer": customer, "request": request, "policy": policy}
    return entries


def _desk_list(desk, search_url: str, term: str) -> str:
    return desk.get(desk.post(search_url, {"q": term})["Location"]).content.decode()


@pytest.mark.parametrize(("typed", "key"), TYPED)
def test_the_customer_list_finds_the_name_on_the_desk_the_api_and_the_admin(agents, desk, book, typed, key):
    from django.contrib.auth.models import Permission

    expected, others = LIST_NAMES[key], [name for k, name in LIST_NAMES.items() if k != key]
    html = _desk_list(desk, "/musteriler/ara/", typed)
    assert expected in html and not any(name in html for name in others), typed

    api = api_as(agents["ACENTE1"])
    for answer in (
        api.get("/api/customers/", {"search": typed}),
        api.post("/api/customers/search/", {"search": typed}, format="json"),
    ):
        assert [item["name"] for item in answer.json()["results"]] == [expected], typed

    staff = agents["ACENTE1"]
    staff.is_staff = True
    staff.save()
    staff.user_permissions.add(Permission.objects.get(codename="view_customer"))
    admin_html = desk.get("/admin/customers/customer/", {"q": typed}).content.decode()
    assert expected in admin_html and not any(name in admin_html for name in others), typed


@pytest.mark.parametrize(("typed", "key"), TYPED)
def test_the_policy_list_and_its_export_find_the_customer_name(desk, book, typed, key):
    import re

    html = _desk_list(desk, "/policeler/ara/", typed)
    assert re.findall(r'data-policy-no="([^"]+)"', html) == [f"POL-{key.upper()}"], typed
    token = re.search(r'name="arama" value="([^"]+)"', html).group(1)
    exported = desk.get("/policeler/disari-aktar/", {"arama": token, "format": "csv"})
    lines = b"".join(exported.streaming_content).decode("utf-8-sig").splitlines()
    assert [line.split(";")[0] for line in lines[1:]] == [f"POL-{key.upper()}"], typed


@pytest.mark.parametrize(("typed", "key"), TYPED)
def test_the_quote_request_list_finds_the_customer_name_on_the_desk_and_the_api(agents, desk, book, typed, key):

    wanted = str(book[key]["request"].public_id)
    html = _desk_list(desk, "/talepler/ara/", typed)
    shown = {str(entry["request"].public_id) for entry in book.values() if str(entry["request"].public_id) in html}
    assert shown == {wanted}, typed

    api = api_as(agents["ACENTE1"])
    for answer in (
        api.get("/api/quote-requests/", {"search": typed}),
        api.post("/api/quote-requests/search/", {"search": typed}, format="json"),
    ):
        assert [item["id"] for item in answer.json()["results"]] == [wanted], typed
