"""The policy pages and the request list on the desk: search, filters, detail, plate warning."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from customers.models import Customer
from policies import periods
from policies.models import Policy
from quotes.models import InsurerQuote
from quotes.services import quote_requests
from tests import samples

from .policy_samples import imported_policy, issued_policy

pytestmark = pytest.mark.django_db


def listed(html: str) -> list[str]:
    """Policy numbers in the list, top to bottom."""
    return re.findall(r'data-policy-no="([^"]+)"', html)


def search(client: Client, term: str) -> tuple[str, str]:
    response = client.post(reverse("policy_search"), {"q": term})
    assert response.status_code == 302
    return response["Location"], client.get(response["Location"]).content.decode()


@pytest.fixture
def portfolio(agents) -> dict[str, Policy]:
    """ACENTE1: a trafik policy ending in 10 days, a kasko one in 45, an ended one, a cancelled one;
    ACENTE2: one trafik policy ending in 10 days."""
    today = periods.today()
    ayse = Customer.objects.create(
        agency=agents["ACENTE1"].agent_profile.agency, name="Ayşe Yılmaz", identity_no="10000000146"
    )
    return {
        "soon": issued_policy(
            agents["ACENTE1"],
            "ANK-SOON",
            starts_on=today - timedelta(days=355),
            ends_on=today + timedelta(days=10),
            customer=ayse,
        ),
        "later": imported_policy(
            "ACENTE1",
            "bogazici",
            "BGZ-LATER",
            product="kasko",
            plate="06BYZ42",
            owner_id="17291716060",
            starts_on=today - timedelta(days=320),
            ends_on=today + timedelta(days=45),
        ),
        "ended": imported_policy(
            "ACENTE1",
            "cinar",
            "CNR-ENDED",
            plate="35AB1234",
            starts_on=today - timedelta(days=400),
            ends_on=today - timedelta(days=35),
            status=Policy.Status.EXPIRED,
        ),
        "cancelled": imported_policy(
            "ACENTE1",
            "deniz",
            "DNZ-CANCELLED",
            product="dask",
            plate="",
            owner_id="17291716060",
            status=Policy.Status.CANCELLED,
        ),
        "other": imported_policy(
            "ACENTE2", "anka", "ANK-OTHER", starts_on=today - timedelta(days=355), ends_on=today + timedelta(days=10)
        ),
    }


# --- list -----------------------------------------------------------------------------------------


def test_list_shows_plates_spaced_ids_masked_and_own_agency_only(desk, portfolio):
    """Plates read "34 ABC 123", identity numbers are masked, another agency's policy is absent."""
    html = desk.get(reverse("policy_list")).content.decode()
    assert sorted(listed(html)) == ["ANK-SOON", "BGZ-LATER", "CNR-ENDED", "DNZ-CANCELLED"]
    assert "34 ABC 123" in html and "06 BYZ 42" in html and "35 AB 1234" in html
    assert "10000000146" not in html and "100******46" in html
    assert "Ayşe Yılmaz" in html


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("34 abc 123", ["ANK-SOON"]),
        ("06byz42", ["BGZ-LATER"]),
        ("ayşe", ["ANK-SOON"]),
        ("17291716060", ["BGZ-LATER", "DNZ-CANCELLED"]),
        ("cnr-ended", ["CNR-ENDED"]),
    ],
)
def test_search_by_plate_customer_name_identity_or_policy_number(desk, portfolio, term, expected):
    """Search finds a plate as typed, a customer's name, a full TCKN/VKN or a policy number."""
    url, html = search(desk, term)
    assert "arama=" in url and term not in url
    assert sorted(listed(html)) == sorted(expected)


def test_identity_search_stays_out_of_every_link(desk, portfolio):
    """A TCKN search keeps the term out of filter, pager and export links (only the token travels)."""
    url, html = search(desk, "17291716060")
    token = url.split("arama=")[1]
    assert f'name="arama" value="{token}"' in html
    assert f"arama={token}&amp;format=csv" in html
    for link in re.findall(r'(?:href|action|value)="([^"]*)"', html):
        assert "17291716060" not in link


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"urun": "kasko"}, ["BGZ-LATER"]),
        ({"sirket": "cinar"}, ["CNR-ENDED"]),
        ({"durum": "CANCELLED"}, ["DNZ-CANCELLED"]),
        ({"donem": "30"}, ["ANK-SOON"]),
        ({"donem": "60"}, ["ANK-SOON", "BGZ-LATER"]),
        ({"donem": "bitti"}, ["CNR-ENDED"]),
        ({"urun": "trafik", "donem": "60"}, ["ANK-SOON"]),
    ],
)
def test_filters_by_product_insurer_status_and_period(desk, portfolio, query, expected):
    html = desk.get(reverse("policy_list"), query).content.decode()
    assert sorted(listed(html)) == sorted(expected)


def test_filter_by_start_date_range(desk, portfolio):
    """starts_on between the two dates (inclusive); policies without a known start are left out."""
    today = periods.today()
    start = portfolio["soon"].starts_on
    html = desk.get(
        reverse("policy_list"),
        {"baslangic_min": start.isoformat(), "baslangic_max": (today - timedelta(days=300)).isoformat()},
    ).content.decode()
    assert sorted(listed(html)) == ["ANK-SOON", "BGZ-LATER"]


def test_bad_filter_is_named_and_ignored_not_a_500(desk, portfolio):
    """An unknown choice or an unreadable date is shown on its field; the other filters still apply."""
    response = desk.get(reverse("policy_list"), {"donem": "90", "baslangic_min": "yarın", "urun": "kasko"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="id_donem_error"' in html and 'id="id_baslangic_min_error"' in html
    assert listed(html) == ["BGZ-LATER"]


def test_pages_carry_the_filters(desk, agents, monkeypatch):
    """The pager links keep the filters, so page 2 is page 2 of the same filtered list."""
    from insurehub import desk_lists as common

    monkeypatch.setattr(common, "PAGE_SIZE", 2)
    for number in range(3):
        imported_policy("ACENTE1", "anka", f"ANK-K-{number}", product="kasko")
    imported_policy("ACENTE1", "anka", "ANK-T-0")
    html = desk.get(reverse("policy_list"), {"urun": "kasko"}).content.decode()
    link = re.search(r'href="\?([^"]*sayfa=2)"', html).group(1).replace("&amp;", "&")
    assert "urun=kasko" in link
    second = desk.get(reverse("policy_list") + "?" + link).content.decode()
    assert len(listed(html)) == 2 and len(listed(second)) == 1
    assert all(number.startswith("ANK-K-") for number in listed(html) + listed(second))


# --- detail ---------------------------------------------------------------------------------------


def test_detail_shows_period_customer_and_source_request(desk, portfolio):
    policy = portfolio["soon"]
    html = desk.get(reverse("policy_detail", args=[policy.pk])).content.decode()
    assert policy.insurer.name in html and "Trafik" in html and "ANK-SOON" in html and "Yürürlükte" in html
    assert policy.starts_on.strftime("%d.%m.%Y") in html and policy.ends_on.strftime("%d.%m.%Y") in html
    assert "(10 gün)" in html and "4.312,50 ₺" in html and "Ayşe Yılmaz" in html
    assert "100******46" in html and "10000000146" not in html
    assert reverse("quote_request_detail", args=[policy.issuance.quote_request.public_id]) in html
    assert reverse("renewal_quote", args=[policy.pk]) in html


def test_detail_of_an_imported_policy_says_so_and_offers_no_requote(desk, portfolio):
    html = desk.get(reverse("policy_detail", args=[portfolio["cancelled"].pk])).content.decode()
    assert "Platform dışından aktarıldı" in html and "Şirketten henüz bilgi gelmedi" in html
    assert reverse("renewal_quote", args=[portfolio["cancelled"].pk]) not in html


def test_detail_of_another_agency_or_unknown_is_not_found(desk, other_desk, portfolio):
    assert other_desk.get(reverse("policy_detail", args=[portfolio["soon"].pk])).status_code == 404
    assert desk.get(reverse("policy_detail", args=[portfolio["other"].pk])).status_code == 404
    assert desk.get(reverse("policy_detail", args=[999999])).status_code == 404


def test_policy_pages_require_login(portfolio):
    for url in (
        reverse("policy_detail", args=[portfolio["soon"].pk]),
        reverse("policy_export"),
        reverse("renewal_list"),
    ):
        response = Client().get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url


# --- request list ---------------------------------------------------------------------------------


def outcomes(html: str) -> list[str]:
    return re.findall(r'data-outcome="([a-z-]+)"', html)


@pytest.fixture
def requests_of_every_outcome(agents, portfolio) -> dict:
    """ANK-SOON's request became a policy; one request has a quote, one waits, one got no answer."""
    user = agents["ACENTE1"]
    quoted = quote_requests.quote_request_create(user=user, product="kasko", data=samples.KASKO)
    InsurerQuote.objects.filter(request=quoted, insurer__code="cinar").update(state="SUCCEEDED", premium=900)
    waiting = quote_requests.quote_request_create(
        user=user, product="trafik", data={**samples.TRAFIK, "plate": "06BYZ42"}
    )
    silent = quote_requests.quote_request_create(
        user=user, product="trafik", data={**samples.TRAFIK, "plate": "35AB1234"}
    )
    InsurerQuote.objects.filter(request=silent).update(state="NO_ANSWER")
    return {"issued": portfolio["soon"].issuance.quote_request, "quoted": quoted, "waiting": waiting, "silent": silent}


def test_request_list_shows_outcomes_and_links_the_policy(desk, requests_of_every_outcome, portfolio):
    html = desk.get(reverse("quote_request_list")).content.decode()
    assert sorted(outcomes(html)) == ["bekliyor", "police", "teklif", "yanit-yok"]
    assert "Poliçeleşti" in html and "Teklif alındı" in html and "Bekliyor" in html and "Yanıt yok" in html
    assert f'href="{reverse("policy_detail", args=[portfolio["soon"].pk])}">ANK-SOON</a>' in html


@pytest.mark.parametrize("outcome", ["bekliyor", "police", "teklif", "yanit-yok"])
def test_request_list_filters_by_outcome(desk, requests_of_every_outcome, outcome):
    assert outcomes(desk.get(reverse("quote_request_list"), {"sonuc": outcome}).content.decode()) == [outcome]


def test_request_list_filters_by_product_and_date(desk, requests_of_every_outcome):
    today = periods.today()
    kasko = desk.get(reverse("quote_request_list"), {"urun": "kasko"}).content.decode()
    assert outcomes(kasko) == ["teklif"]
    todays = desk.get(reverse("quote_request_list"), {"tarih_min": today.isoformat(), "tarih_max": today.isoformat()})
    assert len(outcomes(todays.content.decode())) == 4
    tomorrow = (today + timedelta(days=1)).isoformat()
    later = desk.get(reverse("quote_request_list"), {"tarih_min": tomorrow}).content.decode()
    assert outcomes(later) == [] and "Bu filtrelere uyan talep yok." in later


def test_request_past_its_deadline_without_answers_is_no_answer(desk, requests_of_every_outcome):
    from django.utils import timezone

    waiting = requests_of_every_outcome["waiting"]
    type(waiting).objects.filter(pk=waiting.pk).update(deadline_at=timezone.now() - timedelta(seconds=1))
    assert sorted(outcomes(desk.get(reverse("quote_request_list")).content.decode())) == [
        "police",
        "teklif",
        "yanit-yok",
        "yanit-yok",
    ]


# --- plate warning --------------------------------------------------------------------------------


def warning_for(client: Client, request) -> object:
    response = client.get(reverse("quote_request_detail", args=[request.public_id]))
    assert response.status_code == 200
    return response.context["policy_in_force"]


def test_new_trafik_request_on_a_plate_with_a_policy_in_force_warns(desk, agents, portfolio):
    """A new trafik request for 34ABC123 (ANK-SOON in force) carries the warning; nothing is blocked."""
    request = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    policy = warning_for(desk, request)
    assert policy == portfolio["soon"]
    html = render_to_string("quotes/policy_in_force_warning.html", {"policy_in_force": policy})
    assert "Bu plakada" in html and "çakışan yürürlükte bir Trafik poliçesi var" in html and "ANK-SOON" in html
    assert policy.ends_on.strftime("%d.%m.%Y") in html


def test_no_warning_on_the_request_the_policy_came_from(desk, portfolio):
    assert warning_for(desk, portfolio["soon"].issuance.quote_request) is None


def test_no_warning_for_ended_cancelled_other_product_or_other_agency(desk, other_desk, agents, portfolio):
    """Only an ACTIVE policy of the same product and agency on the same plate, in the new period, warns."""
    Policy.objects.filter(pk=portfolio["soon"].pk).update(ends_on=periods.today() - timedelta(days=1))
    request = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    assert warning_for(desk, request) is None
    kasko = quote_requests.quote_request_create(
        user=agents["ACENTE1"], product="kasko", data={**samples.KASKO, "plate": "34ABC123"}
    )
    assert warning_for(desk, kasko) is None  # a trafik policy on the plate is not a kasko one
    kasko_again = quote_requests.quote_request_create(
        user=agents["ACENTE1"], product="kasko", data={**samples.KASKO, "plate": "06BYZ42"}
    )
    assert warning_for(desk, kasko_again) == portfolio["later"]  # kasko warns too (never blocks)
    # ACENTE2's ANK-OTHER (34ABC123, in force) warns ACENTE2 only.
    other = quote_requests.quote_request_create(user=agents["ACENTE2"], product="trafik", data=samples.TRAFIK)
    assert warning_for(other_desk, other) == portfolio["other"]


def test_policy_without_a_known_period_still_warns(desk, agents):
    imported_policy("ACENTE1", "deniz", "DNZ-NODATES", plate="34ABC123")
    request = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    assert warning_for(desk, request).policy_no == "DNZ-NODATES"


def test_a_policy_starting_later_in_the_new_period_warns(desk, agents):
    """The bug a day of use found: every policy starts tomorrow, renewals included, and a banner
    that looked only at today missed them. Any overlap with the new period warns."""
    today = periods.today()
    imported_policy(
        "ACENTE1", "deniz", "DNZ-FUTURE", starts_on=today + timedelta(days=5), ends_on=today + timedelta(days=370)
    )
    request = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    assert warning_for(desk, request).policy_no == "DNZ-FUTURE"


def test_a_policy_that_ends_the_day_the_new_one_starts_does_not_warn(desk, agents):
    today = periods.today()
    imported_policy(
        "ACENTE1", "deniz", "DNZ-ENDS", starts_on=today - timedelta(days=360), ends_on=today + timedelta(days=5)
    )
    data = {**samples.TRAFIK, "starts_on": (today + timedelta(days=5)).isoformat()}
    request = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=data)
    assert warning_for(desk, request) is None
