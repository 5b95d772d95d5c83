"""The quote desk pages through Django's test client: access, forms, results, search, issuance."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from integrations.adapters.registry import registered_codes
from policies.models import Policy
from quotes.models import InsurerQuote, Issuance, QuoteRequest
from quotes.services import quote_requests
from tests import samples

pytestmark = pytest.mark.django_db

PASSWORD = "test-pass-123"


@pytest.fixture
def desk(agents) -> Client:
    """A browser session logged in as ACENTE1's agent."""
    client = Client()
    client.force_login(agents["ACENTE1"])
    return client


@pytest.fixture
def other_desk(agents) -> Client:
    """A browser session logged in as ACENTE2's agent."""
    client = Client()
    client.force_login(agents["ACENTE2"])
    return client


@pytest.fixture
def trafik_request(agents) -> QuoteRequest:
    """ACENTE1's trafik request, still waiting for every insurer (nothing is called in these tests)."""
    return quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)


def answer(request: QuoteRequest, code: str, **fields) -> InsurerQuote:
    """Store an insurer's answer on its row, as the worker would."""
    row = request.insurer_quotes.get(insurer__code=code)
    InsurerQuote.objects.filter(pk=row.pk).update(**fields)
    row.refresh_from_db()
    return row


def quoted(request: QuoteRequest, code: str, premium: str = "4312.50", valid_for: timedelta = timedelta(minutes=15)):
    return answer(
        request,
        code,
        state="SUCCEEDED",
        premium=Decimal(premium),
        currency="TRY",
        quote_no=f"{code.upper()}-Q-1",
        valid_until=timezone.now() + valid_for,
        finished_at=timezone.now(),
    )


def field_error(html: str, field: str) -> str:
    """The error text rendered under one field (empty when the field has none)."""
    match = re.search(rf'<p class="error" id="id_{field}_error">([^<]*)</p>', html)
    return match.group(1) if match else ""


def results_rows(html: str) -> list[tuple[str, str]]:
    """(insurer code, state) for each row of the results table, top to bottom."""
    return re.findall(r'data-insurer="([a-z]+)" data-state="([A-Z_]+)"', html)


# --- access -----------------------------------------------------------------------------------


def page_urls(request: QuoteRequest, row: InsurerQuote, issuance: Issuance) -> list[str]:
    return [
        reverse("home"),
        reverse("quote_request_new", args=["kasko"]),
        reverse("quote_request_list"),
        reverse("quote_request_detail", args=[request.public_id]),
        reverse("quote_request_results", args=[request.public_id]),
        reverse("issuance_confirm", args=[row.pk]),
        reverse("issuance_detail", args=[issuance.pk]),
        reverse("issuance_status", args=[issuance.pk]),
        reverse("policy_list"),
    ]


@pytest.fixture
def issued(agents, trafik_request) -> tuple[InsurerQuote, Issuance]:
    from quotes.services.issuance import issuance_start

    row = quoted(trafik_request, "anka")
    issuance = issuance_start(user=agents["ACENTE1"], insurer_quote_id=row.pk, payment_token=samples.PAYMENT_TOKEN)
    return row, issuance


def test_every_page_requires_login(trafik_request, issued):
    """A logged-out visitor is sent to the login form from every page, with the page to come back to."""
    row, issuance = issued
    for url in page_urls(trafik_request, row, issuance):
        response = Client().get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login") + "?next="), url


def test_logged_out_poll_sends_the_whole_page_to_login(trafik_request):
    """An htmx poll after the session ended redirects the page, not the table cell, to the login."""
    url = reverse("quote_request_results", args=[trafik_request.public_id])
    response = Client().get(url, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response["HX-Redirect"].startswith(reverse("login"))


def test_other_agency_gets_not_found_everywhere(other_desk, trafik_request, issued):
    """ACENTE2's agent gets 404 for every ACENTE1 request, quote and issuance id."""
    row, issuance = issued
    for url in page_urls(trafik_request, row, issuance)[3:-1]:
        assert other_desk.get(url).status_code == 404, url
    response = other_desk.post(reverse("issuance_confirm", args=[row.pk]), {"payment_token": "tok_demo_4242"})
    assert response.status_code == 404
    assert Issuance.objects.count() == 1


def test_unknown_request_id_is_not_found(desk):
    """A well-formed id that does not exist answers 404."""
    assert desk.get(reverse("quote_request_detail", args=[uuid.uuid4()])).status_code == 404


def test_staff_alone_see_no_agency(trafik_request):
    """`is_staff` grants nothing on the desk: a staff user with no agency sees no request."""
    staff = get_user_model().objects.create_user("operasyon", password=PASSWORD, is_staff=True)
    client = Client()
    client.force_login(staff)
    assert client.get(reverse("quote_request_detail", args=[trafik_request.public_id])).status_code == 404
    assert trafik_request.plate not in client.get(reverse("quote_request_list")).content.decode()


def test_view_all_agencies_reads_every_agency_but_issues_nothing(trafik_request, django_capture_on_commit_callbacks):
    """`quotes.view_all_agencies` reads another agency's requests; its quotes still cannot be issued."""
    from django.contrib.auth.models import Permission

    reader = get_user_model().objects.create_user("merkez", password=PASSWORD)
    reader.user_permissions.add(Permission.objects.get(codename="view_all_agencies"))
    client = Client()
    client.force_login(reader)
    assert client.get(reverse("quote_request_detail", args=[trafik_request.public_id])).status_code == 200
    assert "34 ABC 123" in client.get(reverse("quote_request_list")).content.decode()
    row = quoted(trafik_request, "anka")
    page = client.get(reverse("quote_request_detail", args=[trafik_request.public_id])).content.decode()
    assert reverse("issuance_confirm", args=[row.pk]) not in page  # no button that would lead to a 404
    assert client.get(reverse("issuance_confirm", args=[row.pk])).status_code == 404
    response = client.post(reverse("issuance_confirm", args=[row.pk]), {"payment_token": "tok_demo_4242"})
    assert response.status_code == 404 and not Issuance.objects.exists()


def test_login_form_logs_in_and_logout_logs_out(agents):
    """The real login form takes the agent to the desk; logging out (POST) ends the session."""
    client = Client()
    page = client.get(reverse("login")).content.decode()
    assert "Kullanıcı adı" in page and "Parola" in page
    response = client.post(reverse("login"), {"username": "ajan-acente1", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get(reverse("home")).status_code == 200
    client.post(reverse("logout"))
    assert client.get(reverse("home")).status_code == 302


def test_wrong_password_is_refused_in_turkish(agents):
    """A wrong password shows a Turkish error and no session."""
    response = Client().post(reverse("login"), {"username": "ajan-acente1", "password": "yanlis"})
    assert response.status_code == 200
    assert "Kullanıcı adı veya parola hatalı." in response.content.decode()


# --- new request forms ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("product", "labels"),
    [
        (
            "trafik",
            ["Plaka", "T.C. Kimlik / Vergi No", "Ruhsat seri no", "Kullanım tarzı", "Hususi", "Ticari", "Taksi"],
        ),
        ("kasko", ["Plaka", "Model yılı", "Marka kodu", "Tip kodu"]),
        ("dask", ["UAVT adres kodu", "Yapı tarzı", "İnşa yılı", "Kat sayısı", "Brüt alan (m²)", "Hasar durumu"]),
    ],
)
def test_each_product_has_its_turkish_form(desk, product, labels):
    """Each product tab shows its own fields with Turkish labels and its first button: "Teklif al",
    or for DASK "Adresi göster" (the address is confirmed before pricing)."""
    page = desk.get(reverse("quote_request_new", args=[product])).content.decode()
    button = "Adresi göster" if product == "dask" else "Teklif al"
    for label in [*labels, f">{button}</button>"]:
        assert label in page, label


def test_home_is_the_trafik_form(desk):
    """The desk opens on a new trafik request, with tabs for the other products."""
    page = desk.get(reverse("home")).content.decode()
    assert 'name="registration_serial"' in page
    assert reverse("quote_request_new", args=["dask"]) in page


def test_unknown_product_is_not_found(desk):
    assert desk.get(reverse("quote_request_new", args=["saglik"])).status_code == 404


def test_bad_trafik_input_shows_each_error_next_to_its_field_and_saves_nothing(desk, sandbox):
    """Plate, TCKN checksum, serial and usage errors are shown under their fields; nothing is stored or sent."""
    data = {"plate": "99 ZZ 1", "owner_id": "12345678901", "registration_serial": "A123", "usage": ""}
    response = desk.post(reverse("quote_request_new", args=["trafik"]), data)
    html = response.content.decode()
    assert response.status_code == 200
    assert field_error(html, "plate") == "Geçerli bir plaka girin (ör. 34 ABC 123)."
    assert field_error(html, "owner_id") == "Geçersiz T.C. kimlik / vergi numarası."
    assert field_error(html, "registration_serial").startswith("Ruhsat seri numarası 2 harf ve 6 rakam")
    assert field_error(html, "usage") == "Bu alan zorunludur."
    assert 'value="99 ZZ 1"' in html  # what the agent typed stays, to be corrected
    assert QuoteRequest.objects.count() == 0 and InsurerQuote.objects.count() == 0
    assert all(server.state.counts()["total_received"] == 0 for server in sandbox.values())


def test_bad_vkn_checksum_is_refused(desk):
    """A 10-digit tax number with a wrong check digit is refused next to the identity field."""
    data = {**samples.TRAFIK, "owner_id": "4540536921"}
    html = desk.post(reverse("quote_request_new", args=["trafik"]), data).content.decode()
    assert field_error(html, "owner_id") == "Geçersiz T.C. kimlik / vergi numarası."
    assert QuoteRequest.objects.count() == 0


def test_kasko_year_and_codes_are_checked(desk):
    """Model year range and 3-digit brand/type codes are checked on the server."""
    data = {**samples.KASKO, "model_year": "1900", "brand_code": "12", "model_code": "34a"}
    html = desk.post(reverse("quote_request_new", args=["kasko"]), data).content.decode()
    assert field_error(html, "model_year").startswith("Model yılı 1950 ile")
    assert field_error(html, "brand_code") == "Marka kodu 3 haneli olmalıdır (ör. 012)."
    assert field_error(html, "model_code") == "Tip kodu 3 haneli olmalıdır (ör. 012)."
    assert field_error(html, "plate") == ""
    assert QuoteRequest.objects.count() == 0


def test_dask_code_year_and_area_ranges_are_checked(desk):
    """UAVT code length, construction year and gross area ranges are checked on the server."""
    data = {
        **samples.DASK_RISK,
        "uavt_code": "12345",
        "construction_year": "1800",
        "gross_m2": "20",
        "floor_count": "0",
    }
    html = desk.post(reverse("quote_request_new", args=["dask"]), data).content.decode()
    assert field_error(html, "uavt_code") == "UAVT kodu 10 haneli olmalıdır."
    assert field_error(html, "construction_year").startswith("Yapım yılı 1900 ile")
    assert field_error(html, "gross_m2") == "Brüt alan 40 ile 1000 m² arasında olmalıdır."
    assert field_error(html, "floor_count") == "Kat sayısı 1 ile 99 arasında olmalıdır."
    assert QuoteRequest.objects.count() == 0


def test_valid_request_is_stored_and_queued_without_calling_insurers(desk, sandbox, django_capture_on_commit_callbacks):
    """A valid form stores one row per insurer and queues the calls; the web request calls nobody."""
    data = {"plate": "34 abc 123", "owner_id": "10000000146", "registration_serial": "ab 123456", "usage": "private"}
    with django_capture_on_commit_callbacks() as callbacks:
        response = desk.post(reverse("quote_request_new", args=["trafik"]), data)
    request = QuoteRequest.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("quote_request_detail", args=[request.public_id])
    assert request.plate == "34ABC123" and request.input_data["registration_serial"] == "AB123456"
    assert request.insurer_quotes.count() == len(registered_codes())
    assert len(callbacks) == 1
    assert all(server.state.counts()["total_received"] == 0 for server in sandbox.values())


def test_dask_request_is_stored(desk):
    """A valid DASK form (address code and building details) whose address was confirmed becomes a
    request (tests/quotes/test_dask_address.py: the step before)."""
    data = {**samples.DASK_ADDRESS, **{k: str(v) for k, v in samples.DASK_RISK.items()}}
    data["confirmed_uavt"] = data["uavt_code"]
    response = desk.post(reverse("quote_request_new", args=["dask"]), data)
    assert response.status_code == 302
    assert QuoteRequest.objects.get().product == "dask"


def test_no_insurer_for_the_agency_is_a_clear_error(desk):
    """With every insurer switched off, the agent is told so and nothing is saved."""
    from integrations.models import Insurer

    Insurer.objects.update(is_active=False)
    html = desk.post(reverse("quote_request_new", args=["trafik"]), samples.TRAFIK).content.decode()
    assert "Bu ürün için tanımlı aktif sigorta şirketi hesabı yok." in html
    assert QuoteRequest.objects.count() == 0


# --- results ----------------------------------------------------------------------------------


def test_results_show_each_insurer_cheapest_first_with_turkish_states(desk, trafik_request):
    """Premiums in Turkish format cheapest first, then a retrying insurer, a refusal and a lost answer."""
    quoted(trafik_request, "cinar", premium="4312.50")
    quoted(trafik_request, "anka", premium="3999.90")
    answer(trafik_request, "deniz", state="RETRYING", attempt=2, max_attempts=3)
    answer(trafik_request, "bogazici", state="FAILED", message="Araç teminata uygun değil")
    html = desk.get(reverse("quote_request_results", args=[trafik_request.public_id])).content.decode()
    named = {"anka", "cinar", "deniz", "bogazici"}  # any other registered insurer is still waiting
    assert [row for row in results_rows(html) if row[0] in named] == [
        ("anka", "SUCCEEDED"),
        ("cinar", "SUCCEEDED"),
        ("deniz", "RETRYING"),
        ("bogazici", "FAILED"),
    ]
    assert "3.999,90 ₺" in html and "4.312,50 ₺" in html
    assert "Tekrar deneniyor (2/3)" in html
    assert "Araç teminata uygun değil" in html
    assert html.count("Poliçeleştir</a>") == 2
    assert 'hx-trigger="every 1s"' in html  # deniz is still working: keep polling


def test_waiting_insurers_are_shown_as_being_asked(desk, trafik_request):
    """Rows not answered yet say "Soruluyor…", and the detail page polls the results fragment."""
    html = desk.get(reverse("quote_request_detail", args=[trafik_request.public_id])).content.decode()
    assert html.count("Soruluyor…") == len(registered_codes())
    assert f'hx-get="{reverse("quote_request_results", args=[trafik_request.public_id])}"' in html
    assert "htmx" in html and "cdn" not in html.lower()


def test_polling_stops_once_every_answer_is_in(desk, trafik_request):
    """When every row is final the fragment comes back without a trigger, so htmx stops asking."""
    for code in sorted(set(registered_codes()) - {"deniz"}):
        quoted(trafik_request, code)
    answer(trafik_request, "deniz", state="FAILED", message="Bu ürün için yetkiniz yok.")
    html = desk.get(reverse("quote_request_results", args=[trafik_request.public_id])).content.decode()
    assert "hx-trigger" not in html and 'data-complete="true"' in html
    assert "Bu ürün için yetkiniz yok." in html


def test_insurer_past_the_deadline_shows_no_answer(desk, trafik_request):
    """Past the request's deadline, an insurer that never answered shows "Yanıt alınamadı"; polling stops."""
    quoted(trafik_request, "anka")
    answer(trafik_request, "cinar", state="RETRYING", attempt=3, max_attempts=3)
    QuoteRequest.objects.filter(pk=trafik_request.pk).update(deadline_at=timezone.now() - timedelta(seconds=1))
    html = desk.get(reverse("quote_request_results", args=[trafik_request.public_id])).content.decode()
    unanswered = len(registered_codes()) - 1
    assert html.count("Yanıt alınamadı") == unanswered
    assert "hx-trigger" not in html
    assert trafik_request.insurer_quotes.filter(state="NO_ANSWER").count() == unanswered


def test_detail_masks_the_customer_id(desk, trafik_request):
    """The customer's identity number is masked on the results page too (KVKK)."""
    html = desk.get(reverse("quote_request_detail", args=[trafik_request.public_id])).content.decode()
    assert "10000000146" not in html and "100******46" in html


# --- request list and search ------------------------------------------------------------------


@pytest.fixture
def two_requests(agents) -> tuple[QuoteRequest, QuoteRequest]:
    first = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    second = quote_requests.quote_request_create(
        user=agents["ACENTE1"],
        product="trafik",
        data={**samples.TRAFIK, "plate": "06 BYZ 42", "owner_id": "17291716060"},
    )
    return first, second


def test_list_masks_customer_ids(desk, two_requests):
    """Past requests are listed with plates and masked identity numbers only."""
    html = desk.get(reverse("quote_request_list")).content.decode()
    assert "34 ABC 123" in html and "06 BYZ 42" in html
    assert "10000000146" not in html and "17291716060" not in html
    assert "100******46" in html and "172******60" in html


def search(client: Client, term: str, list_name: str = "quote_request_list") -> tuple[str, str]:
    """Search as the form does (POST), follow to the results; returns (results URL, page)."""
    post_url = reverse("quote_request_search" if list_name == "quote_request_list" else "policy_search")
    response = client.post(post_url, {"q": term})
    assert response.status_code == 302
    page = client.get(response["Location"])
    assert page.status_code == 200
    return response["Location"], page.content.decode()


def test_search_by_plate_as_typed(desk, two_requests):
    """Searching "06 byz 42" finds the request stored as 06BYZ42 and only that one."""
    _, html = search(desk, "06 byz 42")
    assert "06 BYZ 42" in html and "34 ABC 123" not in html


def test_search_by_customer_id(desk, two_requests):
    """Searching by a TCKN finds that customer's request; the number stays masked in the list."""
    _, html = search(desk, "10000000146")
    assert "34 ABC 123" in html and "06 BYZ 42" not in html
    assert "10000000146" not in html and "100******46" in html


def test_search_without_match_says_so(desk, two_requests):
    _, html = search(desk, "35 AA 999")
    assert "için talep bulunamadı" in html


def test_identity_number_search_puts_it_in_no_url(desk, two_requests, monkeypatch):
    """A TCKN search travels in the POST body only: not in the redirect, the page's links or the pager."""
    from insurehub import desk_lists as views

    monkeypatch.setattr(views, "PAGE_SIZE", 1)
    quote_requests.quote_request_create(user=two_requests[0].created_by, product="trafik", data=samples.TRAFIK)
    url, html = search(desk, "10000000146")
    assert "10000000146" not in url and "arama=" in url
    # Two requests of that customer, one per page: the pager carries the token, not the number.
    assert "sayfa=2" in html and "10000000146" not in html
    next_query = re.search(r'href="(\?arama=[^"]*sayfa=2)"', html).group(1).replace("&amp;", "&")
    second = desk.get(reverse("quote_request_list") + next_query).content.decode()
    assert "100******46" in second and "06 BYZ 42" not in second
    for link in re.findall(r'(?:href|action)="([^"]*)"', html + second):
        assert "10000000146" not in link


def test_search_url_is_useless_in_another_session(desk, other_desk, two_requests):
    """The results URL names a token of the searching session: elsewhere it finds nothing and says so."""
    url, _ = search(desk, "10000000146")
    html = other_desk.get(url).content.decode()
    assert "süresi doldu" in html and "100******46" not in html


def test_search_token_runs_out(desk, two_requests, monkeypatch):
    """A results URL stops working after SEARCH_TTL_SECONDS: the term is not kept for ever."""
    import time

    from insurehub import desk_lists as views

    url, _ = search(desk, "10000000146")
    later = time.time() + views.SEARCH_TTL_SECONDS + 1
    monkeypatch.setattr(views.time, "time", lambda: later)
    html = desk.get(url).content.decode()
    assert "süresi doldu" in html and "34 ABC 123" in html and "06 BYZ 42" in html


def test_identity_number_in_query_string_is_not_searched(desk, two_requests):
    """An old-style `?q=<TCKN>` link is not acted on: identity searches only come by POST."""
    html = desk.get(reverse("quote_request_list"), {"q": "10000000146"}).content.decode()
    assert "34 ABC 123" in html and "06 BYZ 42" in html


def test_policy_search_by_customer_id(desk, two_requests):
    """The policy list searches the same way (POST, token URL), scoped to the agency."""
    first = two_requests[0]
    row = quoted(first, "anka")
    Policy.objects.create(
        agency=first.agency,
        insurer=row.insurer,
        account=row.account,
        product="trafik",
        policy_no="ANK-P-SEARCH",
        plate=first.plate,
        owner_id=first.owner_id,
        premium=Decimal("100.00"),
    )
    url, html = search(desk, "10000000146", list_name="policy_list")
    assert "10000000146" not in url and "ANK-P-SEARCH" in html
    _, html = search(desk, "17291716060", list_name="policy_list")
    assert "ANK-P-SEARCH" not in html and "için poliçe bulunamadı" in html


def test_list_shows_only_own_agency(other_desk, two_requests):
    """Another agency's requests never appear in the list."""
    html = other_desk.get(reverse("quote_request_list")).content.decode()
    assert "34 ABC 123" not in html and "Henüz teklif talebi yok." in html


# --- issuance ---------------------------------------------------------------------------------


def test_confirm_page_shows_the_quote_and_a_demo_token(desk, trafik_request, settings):
    """The confirm step shows insurer, premium, quote number and validity, with the demo token
    filled in under the demo settings only."""
    row = quoted(trafik_request, "cinar", premium="4312.50")
    html = desk.get(reverse("issuance_confirm", args=[row.pk])).content.decode()
    assert "tok_demo_4242" not in html
    settings.DEMO_PAYMENT_TOKEN = "tok_demo_4242"
    html = desk.get(reverse("issuance_confirm", args=[row.pk])).content.decode()
    for text in (row.insurer.name, "4.312,50 ₺", "CINAR-Q-1", "tok_demo_4242"):
        assert text in html
    assert "Onayla ve poliçeleştir" in html and "data-submit-once" in html


def test_confirming_twice_gives_one_issuance(desk, trafik_request, django_capture_on_commit_callbacks):
    """Two POSTs of the confirm form (double click, second tab, browser retry) land on one issuance."""
    row = quoted(trafik_request, "anka")
    url = reverse("issuance_confirm", args=[row.pk])
    with django_capture_on_commit_callbacks() as callbacks:
        first = desk.post(url, {"payment_token": "tok_demo_4242"})
        second = desk.post(url, {"payment_token": "tok_demo_4242"})
    issuance = Issuance.objects.get()
    assert first["Location"] == second["Location"] == reverse("issuance_detail", args=[issuance.pk])
    assert len(callbacks) == 1  # one job queued for the insurer
    assert desk.get(url)["Location"] == reverse("issuance_detail", args=[issuance.pk])


def test_issuance_page_polls_until_the_policy_number_is_in(desk, trafik_request):
    """The status page says it is working, then shows "Poliçe no: …" and stops polling."""
    row = quoted(trafik_request, "anka")
    desk.post(reverse("issuance_confirm", args=[row.pk]), {"payment_token": "tok_demo_4242"})
    issuance = Issuance.objects.get()
    html = desk.get(reverse("issuance_detail", args=[issuance.pk])).content.decode()
    assert "Poliçeleştirme işleniyor" in html and 'hx-trigger="every 1s"' in html
    Issuance.objects.filter(pk=issuance.pk).update(state="SUBMITTED", policy_no="ANK-P-000123")
    html = desk.get(reverse("issuance_status", args=[issuance.pk])).content.decode()
    assert re.search(r"Poliçe no: <strong[^>]*>ANK-P-000123</strong>", html)
    assert "hx-trigger" not in html


def test_failed_issuance_shows_the_reason(desk, trafik_request):
    """A refused issuance shows the insurer's reason in Turkish and stops polling."""
    row = quoted(trafik_request, "deniz")
    desk.post(reverse("issuance_confirm", args=[row.pk]), {"payment_token": "tok_demo_4242"})
    issuance = Issuance.objects.get()
    Issuance.objects.filter(pk=issuance.pk).update(state="FAILED", error_message="Ödeme reddedildi")
    html = desk.get(reverse("issuance_status", args=[issuance.pk])).content.decode()
    assert "Poliçeleştirilemedi: Ödeme reddedildi" in html and "hx-trigger" not in html


def test_expired_quote_is_refused_with_a_clear_message(desk, trafik_request):
    """Confirming a quote past its validity is refused in Turkish; no issuance is stored."""
    row = quoted(trafik_request, "anka", valid_for=-timedelta(minutes=1))
    response = desk.post(reverse("issuance_confirm", args=[row.pk]), {"payment_token": "tok_demo_4242"})
    assert response.status_code == 409
    assert "Teklifin süresi dolmuş. Lütfen yeni teklif alın." in response.content.decode()
    assert "Onayla ve poliçeleştir" not in response.content.decode()
    assert Issuance.objects.count() == 0


def test_expired_quote_confirm_page_offers_no_button(desk, trafik_request):
    """Opening the confirm step of an expired quote says so up front instead of offering to issue."""
    row = quoted(trafik_request, "anka", valid_for=-timedelta(minutes=1))
    html = desk.get(reverse("issuance_confirm", args=[row.pk])).content.decode()
    assert "Teklifin süresi dolmuş" in html and "Onayla ve poliçeleştir" not in html


def test_missing_payment_token_is_refused(desk, trafik_request):
    """Without a payment token nothing is issued, and the field says why."""
    row = quoted(trafik_request, "anka")
    html = desk.post(reverse("issuance_confirm", args=[row.pk]), {"payment_token": ""}).content.decode()
    assert field_error(html, "payment_token") == "Ödeme bilgisi eksik."
    assert Issuance.objects.count() == 0


def test_only_one_insurer_can_be_issued_per_request(desk, trafik_request):
    """Once one quote is being issued, the others are no longer offered, and a forced POST is refused."""
    cheap, dear = quoted(trafik_request, "anka", "3000"), quoted(trafik_request, "cinar", "3500")
    desk.post(reverse("issuance_confirm", args=[cheap.pk]), {"payment_token": "tok_demo_4242"})
    html = desk.get(reverse("quote_request_results", args=[trafik_request.public_id])).content.decode()
    assert "Poliçeleştir</a>" not in html and "Poliçeleştirme durumu" in html
    response = desk.post(reverse("issuance_confirm", args=[dear.pk]), {"payment_token": "tok_demo_4242"})
    assert response.status_code == 409
    assert Issuance.objects.count() == 1


def test_policy_list_masks_ids_and_is_agency_scoped(desk, other_desk, issued):
    """Policies are listed with Turkish premiums and masked ids, to their own agency only."""
    row, issuance = issued
    Policy.objects.create(
        agency=issuance.agency,
        insurer=row.insurer,
        account=row.account,
        product="trafik",
        policy_no="ANK-P-000777",
        issuance=issuance,
        plate="34ABC123",
        owner_id="10000000146",
        premium=Decimal("4312.50"),
    )
    html = desk.get(reverse("policy_list")).content.decode()
    assert "ANK-P-000777" in html and "4.312,50 ₺" in html and "100******46" in html and "10000000146" not in html
    assert "ANK-P-000777" not in other_desk.get(reverse("policy_list")).content.decode()
