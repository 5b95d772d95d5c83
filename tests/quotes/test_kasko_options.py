"""Kasko options on the desk and the API: muafiyet, ikame araç, İMM and servis chosen on the form
(or in the API body), checked against the contract's values, stored in the request's input, sent
to every insurer; an insurer that does not sell a value says so on its row; the comparison shows
what each price includes; "Teklifi yeniden çalış" asks again with changed options.

Every insurer is a sandbox over real HTTP; which one sells what is read from its own menu
(`kasko_menu`), so a new insurer is checked as the four are."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from pypdf import PdfReader

from integrations.adapters.registry import registered_codes
from integrations.answers.taxonomy import FIELD_LABELS_TR, OPTION_NOT_SOLD_TR
from quotes.models import InsurerQuote, QuoteRequest
from quotes.services import quote_requests as svc
from quotes.services.comparison import comparison_build
from quotes.validation import validate_fields
from tests import samples
from tests.conftest import api_as

pytestmark = pytest.mark.django_db

# Every insurer sells a 7-day car and a 1 000 000 TL İMM; not every one a 10 000 TL deductible or
# an authorized shop: the fan-out below meets both answers.
OPTIONS: dict[str, Any] = {
    "deductible": 10000,
    "replacement_car_days": 7,
    "liability_limit": 1_000_000,
    "repair_shop": "authorized",
}
FORM_OPTIONS = {
    "deductible": "10000",
    "replacement_car_days": "7",
    "liability_limit": "1000000",
    "repair_shop": "authorized",
}


def fetch_all(request: QuoteRequest) -> None:
    """Every insurer's call in the test's thread: the same service the I/O pool runs."""
    for row_id in request.insurer_quotes.values_list("id", flat=True):
        svc.insurer_quote_fetch(row_id)


def unsold(menu: Any, options: dict[str, Any]) -> set[str]:
    """The options among `options` an insurer's sandbox menu does not sell."""
    sold = {
        "deductible": menu.deductibles,
        "replacement_car_days": menu.replacement_car_days,
        "liability_limit": menu.liability_limits,
        "repair_shop": menu.repair_shops,
    }
    return {name for name, value in options.items() if value not in sold[name]}


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p class="error" id="id_{field}_error">([^<]*)</p>', html)
    return match.group(1) if match else ""


def kasko_form(**fields: str) -> dict[str, str]:
    return {**{name: str(value) for name, value in samples.KASKO.items()}, **fields}


# --- validation ------------------------------------------------------------------------------------


def test_options_are_kept_in_their_platform_form_and_absent_ones_left_out():
    clean, errors = validate_fields("kasko", {**samples.KASKO, **FORM_OPTIONS, "liability_limit": None})
    assert errors == {}
    assert (clean["deductible"], clean["replacement_car_days"], clean["repair_shop"]) == (10000, 7, "authorized")
    assert "liability_limit" in clean and clean["liability_limit"] is None  # null: unlimited İMM
    clean, errors = validate_fields("kasko", {**samples.KASKO, "deductible": "", "repair_shop": None})
    assert errors == {} and not {"deductible", "repair_shop", "liability_limit"} & clean.keys()
    assert validate_fields("kasko", {**samples.KASKO, "deductible": "5000.00"})[0]["deductible"] == 5000


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("deductible", 3000, "Muafiyet 0, 2.500, 5.000 veya 10.000 TL"),
        ("deductible", 2500.5, "Muafiyet"),
        ("deductible", True, "Muafiyet"),
        ("replacement_car_days", "10", "İkame araç gün sayısı 0, 7 veya 15 gün"),
        ("replacement_car_days", "7.0", "İkame araç"),
        ("liability_limit", 750000, "İMM limiti"),
        ("liability_limit", "sınırsız", "İMM limiti"),
        ("repair_shop", "any", "Servis türü"),
        ("repair_shop", 1, "Servis türü"),
    ],
)
def test_a_value_off_the_contracts_list_is_a_turkish_error_on_its_field(field, value, words):
    _, errors = validate_fields("kasko", {**samples.KASKO, field: value})
    assert list(errors) == [field] and errors[field].startswith(words)


def test_trafik_carries_no_kasko_option():
    clean, errors = validate_fields("trafik", {**samples.TRAFIK, "deductible": 5000})
    assert errors == {} and "deductible" not in clean


# --- the desk's form -------------------------------------------------------------------------------


def test_the_kasko_form_offers_the_four_options_with_the_insurers_standard_first(desk):
    form = desk.get("/teklif/yeni/kasko/").context["form"]
    labels = {name: form[name].label for name in OPTIONS}
    assert labels == {
        "deductible": "Muafiyet",
        "replacement_car_days": "İkame araç",
        "liability_limit": "İMM limiti",
        "repair_shop": "Servis",
    }
    for name in OPTIONS:
        assert form[name].value() in (None, "") and form.fields[name].choices[0] == ("", "Şirketin standardı")
    assert ("sinirsiz", "Sınırsız") in form.fields["liability_limit"].choices
    assert ("contracted", "Anlaşmalı servis") in form.fields["repair_shop"].choices
    assert "deductible" not in desk.get("/teklif/yeni/trafik/").context["form"].fields


def test_options_chosen_on_the_form_are_stored_in_the_requests_input(desk, monkeypatch):
    monkeypatch.setattr(svc, "_enqueue_dispatch", lambda request_id: None)
    response = desk.post("/teklif/yeni/kasko/", kasko_form(**{**FORM_OPTIONS, "liability_limit": "sinirsiz"}))
    assert response.status_code == 302
    data = QuoteRequest.objects.get().input_data
    assert {name: data[name] for name in OPTIONS} == {**OPTIONS, "liability_limit": None}


def test_the_insurers_standard_sends_no_option(desk, monkeypatch):
    monkeypatch.setattr(svc, "_enqueue_dispatch", lambda request_id: None)
    assert desk.post("/teklif/yeni/kasko/", kasko_form(deductible="", repair_shop="")).status_code == 302
    assert not set(OPTIONS) & QuoteRequest.objects.get().input_data.keys()


def test_a_bad_option_on_the_form_is_a_turkish_field_error_and_nothing_is_saved(desk):
    response = desk.post("/teklif/yeni/kasko/", kasko_form(deductible="3000", repair_shop="<b>x</b>"))
    assert response.status_code == 200
    html = response.content.decode()
    assert field_error(html, "deductible").startswith("Muafiyet 0, 2.500")
    assert field_error(html, "repair_shop").startswith("Servis türü")
    assert not QuoteRequest.objects.exists()


# --- the API ---------------------------------------------------------------------------------------


def test_the_api_takes_the_options_and_null_for_an_unlimited_imm(agents, monkeypatch):
    monkeypatch.setattr(svc, "_enqueue_dispatch", lambda request_id: None)
    body = {"product": "kasko", "data": {**samples.KASKO, **OPTIONS, "liability_limit": None}}
    response = api_as(agents["ACENTE1"]).post("/api/quote-requests/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["data"]["liability_limit"] is None and response.json()["data"]["deductible"] == 10000
    data = QuoteRequest.objects.get().input_data
    assert {name: data[name] for name in OPTIONS} == {**OPTIONS, "liability_limit": None}


def test_the_api_refuses_a_bad_option_on_its_field_and_an_option_on_trafik(agents):
    client = api_as(agents["ACENTE1"])
    body = {"product": "kasko", "data": {**samples.KASKO, "deductible": 3000, "replacement_car_days": 10}}
    response = client.post("/api/quote-requests/", body, format="json")
    assert response.status_code == 400
    errors = response.json()["data"]
    assert set(errors) == {"deductible", "replacement_car_days"} and errors["deductible"][0].startswith("Muafiyet")
    trafik = client.post(
        "/api/quote-requests/", {"product": "trafik", "data": {**samples.TRAFIK, "deductible": 0}}, format="json"
    )
    assert trafik.status_code == 400 and list(trafik.json()["data"]) == ["deductible"]
    assert not QuoteRequest.objects.exists()


# --- the fan-out at the sandbox insurers -------------------------------------------------------------


@pytest.fixture
def asked(agents, sandbox) -> QuoteRequest:
    """A kasko request with OPTIONS, every insurer asked over real HTTP."""
    request = svc.quote_request_create(user=agents["ACENTE1"], product="kasko", data={**samples.KASKO, **OPTIONS})
    fetch_all(request)
    return request


def test_every_insurer_is_asked_with_the_options_and_one_not_selling_one_says_so(asked, sandbox):
    """Each row as that insurer's menu has it: a quote priced with the options (the insurer kept
    them), or a refusal in plain Turkish naming the option it does not sell."""
    rows = {row.insurer.code: row for row in asked.insurer_quotes.select_related("insurer")}
    assert sorted(rows) == registered_codes()
    outcomes = set()
    for code, row in rows.items():
        not_sold = unsold(sandbox[code].insurer.kasko_menu, OPTIONS)
        if not not_sold:
            assert row.state == InsurerQuote.State.SUCCEEDED, (code, row.message)
            priced = sandbox[code].state.ledger.quotes[row.quote_no].terms.options
            assert {name: priced[name] for name in OPTIONS} == OPTIONS, code
            outcomes.add("priced")
        else:
            assert row.state == InsurerQuote.State.FAILED, code
            assert (row.error_class, row.error_kind) == ("permanent", "validation"), code
            assert row.message in {OPTION_NOT_SOLD_TR.format(label=FIELD_LABELS_TR[name]) for name in not_sold}, (
                code,
                row.message,
            )
            assert "satmıyor" in row.message and row.provider_code, code
            outcomes.add("refused")
    assert outcomes == {"priced", "refused"}  # the options chosen meet both answers


def test_the_results_page_shows_the_refusal_and_the_options_asked(desk, asked):
    html = desk.get(reverse("quote_request_detail", args=[asked.public_id])).content.decode()
    refused = asked.insurer_quotes.filter(state=InsurerQuote.State.FAILED).first()
    assert refused.message in html
    for words in ("Muafiyet", "10.000,00 ₺", "7 gün", "1.000.000,00 ₺", "Yetkili servis", "Teklifi yeniden çalış"):
        assert words in html


def test_the_comparison_shows_what_each_price_includes_side_by_side(desk, asked):
    comparison = comparison_build(request=asked)
    assert comparison.columns  # the insurers that priced it
    options = {row.code: row for row in comparison.options}
    assert list(options) == list(OPTIONS)
    expected = {
        "deductible": "10.000,00 ₺",
        "replacement_car_days": "7 gün",
        "liability_limit": "1.000.000,00 ₺",
        "repair_shop": "Yetkili servis",
    }
    for name, text in expected.items():
        assert options[name].asked == text
        assert [cell.text for cell in options[name].cells] == [text] * len(comparison.columns)
    # The options are rows of their own, not limits among the covers (7 days is no lira amount).
    assert not {"deductible", "replacement_car", "liability"} & {row.code for row in comparison.rows}
    html = desk.get(reverse("comparison", args=[asked.public_id])).content.decode()
    for name, text in expected.items():
        row = re.search(rf'data-option="{name}">(.*?)</tr>', html, re.S).group(1)
        assert row.count(text) == len(comparison.columns) + 1  # each insurer's cell, and "İstenen"


def test_the_comparison_reads_the_insurers_answer_not_the_request(desk, asked):
    """An insurer that priced another deductible than asked, and listed no İMM: its cells say so."""
    column = comparison_build(request=asked).columns[0]
    quote = InsurerQuote.objects.get(pk=column.insurer_quote_id)
    covers = [c for c in quote.details["coverages"] if c["code"] not in ("deductible", "liability")]
    covers.append({"code": "deductible", "name": "Muafiyet", "limit": "2500.00"})
    InsurerQuote.objects.filter(pk=quote.pk).update(details={**quote.details, "coverages": covers})
    options = {row.code: row for row in comparison_build(request=asked).options}
    index = [c.insurer_quote_id for c in comparison_build(request=asked).columns].index(quote.pk)
    assert options["deductible"].cells[index].text == "2.500,00 ₺" and options["deductible"].asked == "10.000,00 ₺"
    assert options["liability_limit"].cells[index].text == "Belirtilmedi"
    assert not options["liability_limit"].cells[index].listed


def test_the_comparison_pdf_and_api_carry_the_options(agents, asked):
    client = Client()
    client.force_login(agents["ACENTE1"])
    pdf = client.get(reverse("comparison_download", args=[asked.public_id]))
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.content)).pages)
    assert "Muafiyet (istenen: 10.000,00 ₺)" in text and "Yetkili servis" in text and "7 gün" in text
    body = api_as(agents["ACENTE1"]).get(f"/api/quote-requests/{asked.public_id}/comparison/").json()
    options = {row["code"]: row for row in body["options"]}
    assert {cell["value"] for cell in options["deductible"]["cells"]} == {"10000.00"}
    assert {cell["value"] for cell in options["replacement_car_days"]["cells"]} == {7}
    assert all(cell["listed"] for row in body["options"] for cell in row["cells"])


def test_a_kasko_without_options_shows_no_option_rows(agents, sandbox):
    request = svc.quote_request_create(user=agents["ACENTE1"], product="kasko", data=samples.KASKO)
    fetch_all(request)
    assert comparison_build(request=request).options == []


# --- "Teklifi yeniden çalış" -------------------------------------------------------------------------


def test_rerun_fills_the_form_with_the_previous_request_and_its_options(desk, asked):
    form = desk.get(reverse("quote_request_rerun", args=[asked.public_id])).context["form"]
    assert form.product == "kasko"
    assert {name: form[name].value() for name in OPTIONS} == {name: str(value) for name, value in OPTIONS.items()}
    for name in ("plate", "registration_serial", "usage", "brand_code", "model_code"):
        assert form[name].value() == asked.input_data[name]
    assert form["owner_id"].value() == asked.owner_id


def test_rerun_with_changed_options_asks_every_insurer_again_and_keeps_the_old_request(desk, asked, sandbox):
    changed = {**FORM_OPTIONS, "deductible": "5000", "repair_shop": "contracted", "liability_limit": "sinirsiz"}
    page = desk.get(reverse("quote_request_rerun", args=[asked.public_id]))
    assert f'action="{reverse("quote_request_new", args=["kasko"])}"' in page.content.decode()
    response = desk.post(reverse("quote_request_new", args=["kasko"]), kasko_form(**changed))
    assert response.status_code == 302
    again = QuoteRequest.objects.exclude(pk=asked.pk).get()
    assert again.input_data["deductible"] == 5000 and again.input_data["liability_limit"] is None
    assert asked.input_data["deductible"] == 10000  # the first request stays as it was
    fetch_all(again)
    for row in again.insurer_quotes.select_related("insurer"):
        not_sold = unsold(
            sandbox[row.insurer.code].insurer.kasko_menu,
            {**OPTIONS, **{"deductible": 5000, "repair_shop": "contracted", "liability_limit": None}},
        )
        assert (row.state == InsurerQuote.State.SUCCEEDED) == (not not_sold), (row.insurer.code, row.message)


def test_rerun_of_another_agencys_request_is_not_found(other_desk, asked):
    assert other_desk.get(reverse("quote_request_rerun", args=[asked.public_id])).status_code == 404


def test_a_renewal_asks_with_the_options_of_the_policys_request(agents, monkeypatch):
    """ "Yeniden teklif al" quotes the same cover: the options the policy was sold with go along."""
    from datetime import timedelta

    from policies import periods
    from quotes.services.renewals import renewal_quote_create

    from .policy_samples import issued_policy

    monkeypatch.setattr(svc, "_enqueue_dispatch", lambda request_id: None)
    chosen = {**OPTIONS, "liability_limit": None}
    policy = issued_policy(
        agents["ACENTE1"],
        "ANK-OPT",
        product="kasko",
        data={**samples.KASKO, **chosen},
        ends_on=periods.today() + timedelta(days=10),
    )
    renewal = renewal_quote_create(user=agents["ACENTE1"], policy_id=policy.pk)
    assert {name: renewal.input_data[name] for name in OPTIONS} == chosen
