"""The comparison: rows are coverages, columns are insurers, cheapest marked; a PDF with Turkish text.

Quotes come from the sandbox insurers over real HTTP, through each adapter's coverage reading,
so a cover an adapter fails to map shows up here as a row of its own.
"""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from pypdf import PdfReader

from integrations.adapters.registry import registered_codes
from quotes.models import InsurerQuote, QuoteRequest
from quotes.services import quote_requests as svc
from quotes.services.comparison import NOT_COVERED, comparison_build
from tests import samples
from tests.conftest import api_as

pytestmark = pytest.mark.django_db


def quoted_request(user, product: str, data: dict) -> QuoteRequest:
    request = svc.quote_request_create(user=user, product=product, data=data)
    for row_id in request.insurer_quotes.values_list("id", flat=True):
        svc.insurer_quote_fetch(row_id)
    return request


def desk(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_kasko_comparison_lines_up_each_insurers_covers_cheapest_first(agents, sandbox):
    request = quoted_request(agents["ACENTE1"], "kasko", samples.KASKO)
    comparison = comparison_build(request=request)
    premiums = [column.premium for column in comparison.columns]
    insurers = len(registered_codes())
    assert len(comparison.columns) == insurers and premiums == sorted(premiums)
    assert [column.cheapest for column in comparison.columns] == [True] + [False] * (insurers - 1)
    codes = [row.code for row in comparison.rows]
    # Each insurer's own codes (collision, CARPISMA, ...) meet on the platform's rows.
    assert {"collision", "theft", "fire", "glass"} <= set(codes)
    collision = next(row for row in comparison.rows if row.code == "collision")
    assert collision.name == "Çarpışma" and all(cell is not NOT_COVERED for cell in collision.cells)


def test_comparison_page_marks_the_cheapest_and_says_not_covered(agents, sandbox):
    request = quoted_request(agents["ACENTE1"], "trafik", samples.TRAFIK)
    cheapest = request.insurer_quotes.order_by("premium").first()
    # One insurer lists a cover the others do not: the others' cells say "Yok", never blank.
    details = dict(cheapest.details)
    details["coverages"] = [*details.get("coverages", []), {"code": "legal_protection", "name": "x", "limit": "5000"}]
    InsurerQuote.objects.filter(pk=cheapest.pk).update(details=details)
    html = desk(agents["ACENTE1"]).get(reverse("comparison", args=[request.public_id])).content.decode()
    header = re.search(r"<thead>(.*?)</thead>", html, re.S).group(1)
    assert header.index(cheapest.insurer.name) < header.index("En uygun")
    row = re.search(r'data-coverage="legal_protection">(.*?)</tr>', html, re.S).group(1)
    assert "Hukuksal koruma" in row and row.count("Yok") == len(registered_codes()) - 1 and "5.000,00 ₺" in row


def test_every_comparison_cell_is_named_by_its_row_for_the_phone_cards(agents, sandbox):
    """On a phone each insurer is a card (desk.css) and a cell's data-label is all that names it:
    every row but the issue buttons' labels each of its cells with its own heading, the kasko
    options' rows too (asked with values every sandbox insurer sells, so each has a column)."""
    options = {"deductible": 5000, "replacement_car_days": 7, "liability_limit": 1_000_000, "repair_shop": "contracted"}
    request = quoted_request(agents["ACENTE1"], "kasko", {**samples.KASKO, **options})
    html = desk(agents["ACENTE1"]).get(reverse("comparison", args=[request.public_id])).content.decode()
    body = re.search(r"<tbody>(.*?)</tbody>", html, re.S).group(1)
    rows = re.findall(r"<tr([^>]*)>(.*?)</tr>", body, re.S)
    assert len(rows) > 6
    assert sum('class="option"' in attributes for attributes, _ in rows) == len(options)
    for attributes, row in rows:
        if "issue-row" in attributes:
            continue
        # An option's heading is its name, then what was asked under it ("İstenen: …").
        heading = re.search(r"<th>(.*?)(?:<br>.*?)?</th>", row, re.S).group(1)
        labels = re.findall(r'<td[^>]*?data-label="([^"]*)"', row)
        assert labels == [heading] * len(registered_codes()), (heading, labels)


def test_an_expired_quote_is_not_marked_cheapest_and_offers_no_issue_button(agents, sandbox):
    request = quoted_request(agents["ACENTE1"], "trafik", samples.TRAFIK)
    cheapest = request.insurer_quotes.order_by("premium").first()
    InsurerQuote.objects.filter(pk=cheapest.pk).update(valid_until=timezone.now() - timedelta(minutes=1))
    comparison = comparison_build(request=request)
    assert comparison.columns[0].insurer_quote_id == cheapest.pk and not comparison.columns[0].cheapest
    assert comparison.columns[1].cheapest
    html = desk(agents["ACENTE1"]).get(reverse("comparison", args=[request.public_id])).content.decode()
    assert reverse("issuance_confirm", args=[cheapest.pk]) not in html
    results = desk(agents["ACENTE1"]).get(reverse("quote_request_detail", args=[request.public_id])).content.decode()
    assert reverse("issuance_confirm", args=[cheapest.pk]) not in results and "süresi doldu" in results


def test_comparison_pdf_carries_turkish_text_in_an_embedded_font(agents, sandbox):
    request = quoted_request(agents["ACENTE1"], "kasko", samples.KASKO)
    response = desk(agents["ACENTE1"]).get(reverse("comparison_download", args=[request.public_id]))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert "attachment" in response["Content-Disposition"]
    reader = PdfReader(io.BytesIO(response.content))
    text = "".join(page.extract_text() for page in reader.pages)
    assert "Kasko teklif karşılaştırması" in text and "Çarpışma" in text and "Hırsızlık" in text
    fonts = {str(font["/BaseFont"]) for page in reader.pages for font in page["/Resources"]["/Font"].values()}
    assert any("DejaVuSans" in font for font in fonts)
    assert "10000000146" not in text  # the identity number is masked on paper too


def test_another_agency_gets_404_for_page_and_pdf(agents, sandbox):
    request = quoted_request(agents["ACENTE1"], "trafik", samples.TRAFIK)
    other = desk(agents["ACENTE2"])
    assert other.get(reverse("comparison", args=[request.public_id])).status_code == 404
    assert other.get(reverse("comparison_download", args=[request.public_id])).status_code == 404


def test_comparison_api_says_covered_or_not_for_each_cell(agents, sandbox):

    request = quoted_request(agents["ACENTE1"], "kasko", samples.KASKO)
    api = api_as(agents["ACENTE1"])
    body = api.get(f"/api/quote-requests/{request.public_id}/comparison/").json()
    insurers = len(registered_codes())
    assert body["product"] == "kasko" and len(body["columns"]) == insurers
    assert [column["cheapest"] for column in body["columns"]] == [True] + [False] * (insurers - 1)
    collision = next(row for row in body["rows"] if row["code"] == "collision")
    assert all(cell["covered"] for cell in collision["cells"])
    other = api_as(agents["ACENTE2"])
    assert other.get(f"/api/quote-requests/{request.public_id}/comparison/").status_code == 404


def _issue_page(client: Client, quote: InsurerQuote, *, post: bool):
    url = reverse("issuance_confirm", args=[quote.pk])
    return client.post(url, {"payment_token": samples.PAYMENT_TOKEN}) if post else client.get(url)


def test_once_a_policy_is_issued_the_comparison_links_it_and_a_refusal_names_it(agents, sandbox, quick_issuance_policy):
    """No "Poliçeleştir" is left once the request has a policy; another quote is refused with its number."""
    from policies.models import Policy
    from quotes.services import issuance

    request = quoted_request(agents["ACENTE1"], "trafik", samples.TRAFIK)
    picked, other = request.insurer_quotes.order_by("premium")[:2]
    started = issuance.issuance_start(
        user=agents["ACENTE1"], insurer_quote_id=picked.pk, payment_token=samples.PAYMENT_TOKEN
    )
    assert issuance.issuance_process(started.pk) == "SUBMITTED"
    policy = Policy.objects.get(issuance=started)
    client = desk(agents["ACENTE1"])

    html = client.get(reverse("comparison", args=[request.public_id])).content.decode()
    assert 'class="button issue"' not in html and "Poliçeleştir<" not in html
    assert reverse("policy_detail", args=[policy.pk]) in html and policy.policy_no in html

    refused = f"Bu teklif talebi için poliçe zaten düzenlendi: {policy.policy_no}."
    for post in (False, True):
        page = _issue_page(client, other, post=post)
        body = page.content.decode()
        assert refused in body and "sürüyor" not in body and 'name="payment_token"' not in body, post
    assert page.status_code == 409


def test_while_an_issuance_runs_the_comparison_shows_it_and_a_refusal_says_it_runs(agents, sandbox):
    """An issuance on its way: its status instead of the buttons; another quote is refused as "sürüyor"."""
    from quotes.services import issuance

    request = quoted_request(agents["ACENTE1"], "trafik", samples.TRAFIK)
    picked, other = request.insurer_quotes.order_by("premium")[:2]
    started = issuance.issuance_start(
        user=agents["ACENTE1"], insurer_quote_id=picked.pk, payment_token=samples.PAYMENT_TOKEN
    )
    assert started.state == "QUEUED"
    client = desk(agents["ACENTE1"])

    html = client.get(reverse("comparison", args=[request.public_id])).content.decode()
    assert 'class="button issue"' not in html
    assert "poliçeleştirme sürüyor" in html and reverse("issuance_detail", args=[started.pk]) in html

    page = _issue_page(client, other, post=True)
    assert page.status_code == 409
    assert "Bu teklif talebi için başka bir poliçeleştirme zaten sürüyor." in page.content.decode()


def test_a_reader_of_another_agency_is_offered_no_issue_button(agents, sandbox):
    from django.contrib.auth.models import Permission

    request = quoted_request(agents["ACENTE1"], "trafik", samples.TRAFIK)
    reader = agents["ACENTE2"]
    reader.user_permissions.add(Permission.objects.get(codename="view_all_agencies"))
    html = desk(reader).get(reverse("comparison", args=[request.public_id])).content.decode()
    assert "Prim (peşin)" in html and 'class="button issue"' not in html
