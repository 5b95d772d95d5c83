"""The customer pages of the desk: list and search, add, edit, the customer's page; agency isolation."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from customers.models import Customer
from integrations.models import InsurerAccount
from policies.models import Policy
from quotes.services.quote_requests import quote_request_create
from tests import samples

from .conftest import OTHER_TCKN, TCKN

pytestmark = pytest.mark.django_db

UNKNOWN_PK = 987654321


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p class="error" id="id_{field}_error">([^<]*)</p>', html)
    return match.group(1) if match else ""


def new_customer_form(**fields) -> dict[str, str]:
    return {"name": "Ayşe Yılmaz", "identity_no": OTHER_TCKN, "phone": "0532 123 45 67", **fields}


def policy_for(customer: Customer, *, ends_in_days: int | None, policy_no: str, via_request: bool = False) -> Policy:
    account = InsurerAccount.objects.filter(agency=customer.agency).select_related("insurer").first()
    assert account is not None  # every test agency has accounts at the sandbox insurers
    today = timezone.localdate()
    return Policy.objects.create(
        agency=customer.agency,
        insurer=account.insurer,
        account=account,
        product="trafik",
        policy_no=policy_no,
        plate=samples.TRAFIK["plate"],
        owner_id=customer.identity_no,
        premium=Decimal("1000.00"),
        customer=customer,
        starts_on=today - timedelta(days=300),
        ends_on=None if ends_in_days is None else today + timedelta(days=ends_in_days),
    )


# --- list and search ------------------------------------------------------------------------------


def test_list_shows_only_the_agencys_customers_with_numbers_masked(desk, customers):
    html = desk.get("/musteriler/").content.decode()
    assert "Müşteri ACENTE1" in html and "Müşteri ACENTE2" not in html
    assert "123******50" in html and TCKN not in html


def test_search_by_full_number_never_puts_it_in_a_url(desk, customers):
    """The search POSTs; the list comes back at a token URL naming nobody, the number shown masked."""
    response = desk.post("/musteriler/ara/", {"q": TCKN})
    location = response["Location"]
    assert response.status_code == 302 and TCKN not in location and "arama=" in location
    html = desk.get(location).content.decode()
    assert "Müşteri ACENTE1" in html and "Müşteri ACENTE2" not in html and TCKN not in html


def test_search_by_part_of_a_name(desk, customers, agents):
    Customer.objects.create(agency=customers["ACENTE1"].agency, name="Zeynep Kaya", identity_no=OTHER_TCKN)
    html = desk.get(desk.post("/musteriler/ara/", {"q": "zeynep"})["Location"]).content.decode()
    assert "Zeynep Kaya" in html and "Müşteri ACENTE1" not in html


# --- add and edit ---------------------------------------------------------------------------------


def test_agent_adds_a_customer_and_lands_on_their_page(desk, agents):
    response = desk.post(
        "/musteriler/yeni/",
        new_customer_form(kvkk_consent_at="2026-01-15T10:30", kvkk_consent_channel="wet_signature"),
    )
    customer = Customer.objects.get(identity_no=OTHER_TCKN)
    assert response.status_code == 302 and response["Location"] == f"/musteriler/{customer.pk}/"
    assert customer.agency == agents["ACENTE1"].agent_profile.agency and customer.phone == "+905321234567"
    assert timezone.localtime(customer.kvkk_consent_at).strftime("%d.%m.%Y %H:%M") == "15.01.2026 10:30"
    html = desk.get(response["Location"]).content.decode()
    assert "Ayşe Yılmaz" in html and "Islak imzalı form" in html and OTHER_TCKN not in html


@pytest.mark.parametrize(
    ("fields", "field", "fragment"),
    [
        ({"identity_no": "12345678951"}, "identity_no", "Geçersiz T.C. kimlik"),
        ({"phone": "12345"}, "phone", "Telefon"),
        ({"email": "ayse@"}, "email", "E-posta"),
        ({"kvkk_consent_at": "2026-01-15T10:30"}, "kvkk_consent_channel", "onay şekli"),
        ({"kvkk_consent_channel": "sms"}, "kvkk_consent_at", "onay zamanı"),
        ({"name": ""}, "name", "Ad soyad"),
    ],
)
def test_a_bad_field_is_named_on_the_form_and_nothing_is_saved(desk, agents, fields, field, fragment):
    response = desk.post("/musteriler/yeni/", new_customer_form(**fields))
    assert response.status_code == 400
    assert list(response.context["form"].errors) == [field]
    assert fragment in field_error(response.content.decode(), field)
    assert not Customer.objects.exists()


def test_a_number_the_agency_already_has_is_a_field_error(desk, customers):
    response = desk.post("/musteriler/yeni/", new_customer_form(identity_no=TCKN))
    assert response.status_code == 400
    assert "zaten var" in field_error(response.content.decode(), "identity_no")
    assert Customer.objects.filter(identity_no=TCKN).count() == 2


def test_agent_edits_a_customer(desk, customers):
    customer = customers["ACENTE1"]
    form = desk.get(f"/musteriler/{customer.pk}/duzenle/").content.decode()
    assert f'value="{TCKN}"' in form  # the form holds the number to edit it
    response = desk.post(
        f"/musteriler/{customer.pk}/duzenle/",
        {"name": "Yeni Ad", "identity_no": TCKN, "email": "yeni@example.com"},
    )
    assert response.status_code == 302
    customer.refresh_from_db()
    assert (customer.name, customer.email) == ("Yeni Ad", "yeni@example.com")


def test_agency_admin_may_add_customers_too(desk, agents):
    profile = agents["ACENTE1"].agent_profile
    profile.is_agency_admin = True
    profile.save()
    assert desk.post("/musteriler/yeni/", new_customer_form()).status_code == 302


# --- the customer's page --------------------------------------------------------------------------


def test_customer_page_lists_requests_policies_and_renewals_within_60_days(desk, agents, customers):
    customer = customers["ACENTE1"]
    request = quote_request_create(
        user=agents["ACENTE1"], product="trafik", data={**samples.TRAFIK, "owner_id": TCKN}, customer=customer
    )
    soon = policy_for(customer, ends_in_days=30, policy_no="PN-SOON")
    later = policy_for(customer, ends_in_days=200, policy_no="PN-LATER")
    ended = policy_for(customer, ends_in_days=-3, policy_no="PN-ENDED")
    other = policy_for(customers["ACENTE2"], ends_in_days=30, policy_no="PN-OTHER")
    html = desk.get(f"/musteriler/{customer.pk}/").content.decode()
    renewals = html.split('id="renewals"')[1].split('id="quote-requests"')[0]
    assert soon.policy_no in renewals and later.policy_no not in renewals and ended.policy_no not in renewals
    policies = html.split('id="policies"')[1]
    for policy in (soon, later, ended):
        assert policy.policy_no in policies
    assert other.policy_no not in html
    assert str(request.public_id) in html.split('id="quote-requests"')[1]
    assert f"/teklif/yeni/trafik/?musteri={customer.pk}" in html


def test_policy_issued_from_the_customers_request_counts_as_theirs(desk, agents, customers):
    """Even when the policy row itself carries no customer (issued before that link was written)."""
    from quotes.models import InsurerQuote, Issuance

    customer = customers["ACENTE1"]
    request = quote_request_create(
        user=agents["ACENTE1"], product="trafik", data={**samples.TRAFIK, "owner_id": TCKN}, customer=customer
    )
    row = request.insurer_quotes.select_related("insurer", "account").first()
    InsurerQuote.objects.filter(pk=row.pk).update(state="SUCCEEDED", quote_no="Q-1", premium=Decimal("10"))
    issuance = Issuance.objects.create(
        insurer_quote=row,
        quote_request=request,
        agency=request.agency,
        requested_by=agents["ACENTE1"],
        reference="IH-CUST-1",
        state="SUBMITTED",
        payload={},
        policy_no="PN-VIA-REQUEST",
    )
    Policy.objects.create(
        agency=request.agency,
        insurer=row.insurer,
        account=row.account,
        product="trafik",
        policy_no="PN-VIA-REQUEST",
        issuance=issuance,
        owner_id=TCKN,
    )
    assert "PN-VIA-REQUEST" in desk.get(f"/musteriler/{customer.pk}/").content.decode()


# --- isolation and roles --------------------------------------------------------------------------


_CSRF_RE = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]*"')


def assert_hidden(client: Client, path: str, unknown_path: str, method: str = "get", **kwargs) -> None:
    """Another agency's customer answers like one that does not exist (the page's logout form
    carries a CSRF token masked afresh on every page, so that is left out of the comparison)."""
    response = getattr(client, method)(path, **kwargs)
    unknown = getattr(client, method)(unknown_path, **kwargs)
    assert response.status_code == 404, (path, response.status_code)
    assert _CSRF_RE.sub(b"", response.content) == _CSRF_RE.sub(b"", unknown.content)


@pytest.mark.parametrize("suffix", ["", "duzenle/"])
def test_another_agencys_customer_is_not_found(desk, customers, suffix):
    other = customers["ACENTE2"]
    assert_hidden(desk, f"/musteriler/{other.pk}/{suffix}", f"/musteriler/{UNKNOWN_PK}/{suffix}")
    assert desk.get(f"/musteriler/{customers['ACENTE1'].pk}/{suffix}").status_code == 200


def test_another_agencys_customer_cannot_be_edited_by_post(desk, customers):
    other = customers["ACENTE2"]
    assert_hidden(
        desk,
        f"/musteriler/{other.pk}/duzenle/",
        f"/musteriler/{UNKNOWN_PK}/duzenle/",
        "post",
        data={"name": "Ele geçirildi", "identity_no": TCKN},
    )
    other.refresh_from_db()
    assert other.name == "Müşteri ACENTE2"


def test_cross_agency_reader_reads_every_agency_but_writes_nothing(reader, customers):
    client = Client()
    client.force_login(reader)
    listed = client.get("/musteriler/").content.decode()
    for customer in customers.values():
        assert customer.name in listed
        page = client.get(f"/musteriler/{customer.pk}/")
        assert page.status_code == 200 and "Düzenle" not in page.content.decode()
        assert client.get(f"/musteriler/{customer.pk}/duzenle/").status_code == 404
    assert client.get("/musteriler/yeni/").status_code == 403
    assert client.post("/musteriler/yeni/", new_customer_form()).status_code == 403
    assert not Customer.objects.filter(identity_no=OTHER_TCKN).exists()


def test_pages_need_a_login(db):
    for path in ("/musteriler/", "/musteriler/yeni/", "/musteriler/1/", "/musteriler/1/duzenle/"):
        assert Client().get(path)["Location"].startswith("/giris/")


def test_phone_is_shown_the_way_agents_dial_it():
    from customers.templatetags.customer_desk import phone_display

    assert phone_display("+905321234567") == "0532 123 45 67"
    assert phone_display("") == "" and phone_display("+441234") == "+441234"
