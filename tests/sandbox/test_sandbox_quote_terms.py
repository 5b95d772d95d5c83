"""Quote and issuance terms at every sandbox insurer: policy start, installments chosen at
issuance, kasko options (CONTRACTS.md, "Policy start", "Installments", "Kasko options")."""

from __future__ import annotations

import time
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest

from sandbox import domain

from .sandbox_wire import KASKO, TRAFIK, AnkaClient, BogaziciClient, CinarClient, DenizClient


def today() -> date:
    return domain.today_in_turkiye(time.time())


def in_days(days: int) -> date:
    return today() + timedelta(days=days)


def test_option_prices_move_deterministically_with_each_option() -> None:
    """A higher deductible is cheaper, a dearer shop, more replacement days and unlimited İMM cost more."""
    tariff = Decimal("20000.00")
    price = domain.price_with_options
    assert price(tariff, {}) == tariff
    assert price(tariff, {"deductible": Decimal(10000)}) < price(tariff, {"deductible": Decimal(0)})
    assert price(tariff, {"repair_shop": "authorized"}) > price(tariff, {"repair_shop": "contracted"})
    assert price(tariff, {"replacement_car_days": 15}) > price(tariff, {"replacement_car_days": 7}) > tariff
    assert price(tariff, {"liability_limit": None}) > price(tariff, {"liability_limit": Decimal(1_000_000)})


def test_each_insurer_sells_its_own_subset_of_the_contracts_options() -> None:
    """The menus differ as insurers do: no 10 000 deductible, no 15-day car, only contracted shops."""
    from sandbox.insurers.anka import Anka
    from sandbox.insurers.bogazici import Bogazici
    from sandbox.insurers.cinar import Cinar
    from sandbox.insurers.deniz import Deniz

    assert 10000 not in Bogazici.kasko_menu.deductibles and 10000 in Anka.kasko_menu.deductibles
    assert 15 not in Cinar.kasko_menu.replacement_car_days
    assert Deniz.kasko_menu.repair_shops == ("contracted",) and None not in Deniz.kasko_menu.liability_limits
    for menu in (Anka.kasko_menu, Bogazici.kasko_menu, Cinar.kasko_menu, Deniz.kasko_menu):
        assert set(menu.deductibles) <= set(domain.KASKO_DEDUCTIBLES)
        assert set(menu.replacement_car_days) <= set(domain.KASKO_REPLACEMENT_CAR_DAYS)
        assert set(menu.repair_shops) <= set(domain.KASKO_REPAIR_SHOPS)


# --- anka -----------------------------------------------------------------------------------------


def anka_kasko(anka: AnkaClient, **terms: Any) -> Any:
    return anka.request("POST", "/v1/quotes/kasko", json={**KASKO, **terms})


def test_anka_quote_start_becomes_the_policy_period(anka: AnkaClient) -> None:
    """`starts_on` on the quote: the policy runs from that day for a year; the 201 says so."""
    start = in_days(12)
    quote = anka.request("POST", "/v1/quotes/trafik", json={**TRAFIK, "starts_on": start.isoformat()}).json()
    issued = anka.issue(quote["quote_no"], key="start-1").json()
    assert (issued["starts_on"], issued["ends_on"]) == (start.isoformat(), domain.one_year_after(start).isoformat())
    assert issued["installments"] == 1


def test_anka_issuance_start_and_installments(anka: AnkaClient) -> None:
    """An issuance's own `starts_on` wins over the quote's; an offered count is recorded and answered."""
    quote_no = anka.request("POST", "/v1/quotes/trafik", json={**TRAFIK, "starts_on": in_days(3).isoformat()}).json()[
        "quote_no"
    ]
    body = {"quote_no": quote_no, "payment_token": "tok", "starts_on": today().isoformat(), "installments": 6}
    issued = anka.request("POST", "/v1/policies", json=body, headers={"Idempotency-Key": "terms-1"})
    assert issued.status_code == 201, issued.text
    assert issued.json()["starts_on"] == today().isoformat() and issued.json()["installments"] == 6
    assert anka.server.state.ledger.policies[issued.json()["policy_no"]].installments == 6


@pytest.mark.parametrize(
    ("terms", "field"),
    [
        ({"starts_on": "2020-01-01"}, "starts_on"),
        ({"starts_on": "01.12.2026"}, "starts_on"),
        ({"starts_on": (today() + timedelta(days=31)).isoformat()}, "starts_on"),
        ({"deductible": 3000}, "deductible"),
        ({"deductible": 2500.0}, "deductible"),
        ({"replacement_car_days": 10}, "replacement_car_days"),
        ({"liability_limit": "750000.00"}, "liability_limit"),
        ({"repair_shop": "any"}, "repair_shop"),
    ],
)
def test_anka_refuses_a_bad_or_unsold_term_naming_it(anka: AnkaClient, terms: dict, field: str) -> None:
    response = anka_kasko(anka, **terms)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "VALIDATION" and response.json()["error"]["field"] == field


def test_anka_refuses_a_quote_start_that_has_passed_by_issuance(anka: AnkaClient) -> None:
    """A quote asked for today and issued after midnight would start in the past: refused, never
    moved silently."""
    quote_no = anka.quote_no()
    anka.server.state.ledger.quotes[quote_no].terms = domain.QuoteTerms(starts_on=in_days(-1))
    refused = anka.issue(quote_no, key="terms-past")
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "starts_on"
    later = anka.request(
        "POST",
        "/v1/policies",
        json={"quote_no": quote_no, "payment_token": "tok", "starts_on": in_days(2).isoformat()},
        headers={"Idempotency-Key": "terms-past-2"},
    )
    assert later.status_code == 201 and later.json()["starts_on"] == in_days(2).isoformat()


def test_anka_refuses_a_count_the_quote_did_not_offer(anka: AnkaClient) -> None:
    body = {"quote_no": anka.quote_no(), "payment_token": "tok", "installments": 12}
    refused = anka.request("POST", "/v1/policies", json=body, headers={"Idempotency-Key": "terms-2"})
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "installments"
    assert anka.server.state.counts()["issued_total"] == 0


def test_anka_kasko_options_are_priced_and_listed(anka: AnkaClient) -> None:
    """The options move the premium (the same options, the same price) and come back as covers;
    the product's covers keep the vehicle value of the tariff."""
    plain = anka_kasko(anka).json()
    options = {"deductible": "5000.00", "replacement_car_days": 7, "liability_limit": None, "repair_shop": "authorized"}
    chosen, again = anka_kasko(anka, **options).json(), anka_kasko(anka, **options).json()
    assert chosen["premium"] == again["premium"] != plain["premium"]
    assert chosen["coverages"][:5] == plain["coverages"]
    assert chosen["coverages"][5:] == [
        {"code": "liability", "name": "İhtiyari mali mesuliyet", "limit": None},
        {"code": "replacement_car", "name": "İkame araç (7 gün)", "limit": None, "days": 7},
        {"code": "deductible", "name": "Muafiyet", "limit": "5000.00"},
    ]
    assert anka_kasko(anka, liability_limit=2_500_000).json()["coverages"][-1]["limit"] == "2500000.00"


def test_anka_options_on_a_trafik_quote_are_ignored(anka: AnkaClient) -> None:
    """Kasko options belong to kasko: a trafik quote carrying one is priced and listed as without it."""
    plain = anka.trafik_quote().json()
    with_option = anka.request("POST", "/v1/quotes/trafik", json={**TRAFIK, "deductible": 5000}).json()
    assert (with_option["premium"], with_option["coverages"]) == (plain["premium"], plain["coverages"])


# --- bogazici -------------------------------------------------------------------------------------


def test_bogazici_start_and_installments(bogazici: BogaziciClient) -> None:
    """<BaslangicTarihi> on the quote sets the period; <TaksitSayisi> is answered back."""
    start = in_days(30)
    quote = bogazici.call("TrafikTeklif", {**TRAFIK, "BaslangicTarihi": start.isoformat()})
    assert quote["Basarili"] == "true", quote
    issued = bogazici.call("Policelestir", {"quote_no": quote["TeklifNo"], "payment_token": "t", "TaksitSayisi": 3})
    assert issued["Basarili"] == "true", issued
    assert (issued["BaslangicTarihi"], issued["BitisTarihi"]) == (
        start.isoformat(),
        domain.one_year_after(start).isoformat(),
    )
    assert issued["TaksitSayisi"] == "3"


@pytest.mark.parametrize(
    ("islem", "fields", "element"),
    [
        ("KaskoTeklif", {**KASKO, "Muafiyet": "10000"}, "Muafiyet"),  # Boğaziçi sells no 10 000 deductible
        ("KaskoTeklif", {**KASKO, "IkameGun": "yedi"}, "IkameGun"),
        ("KaskoTeklif", {**KASKO, "ImmLimit": "5000000"}, "ImmLimit"),
        ("KaskoTeklif", {**KASKO, "ServisTuru": "authorized"}, "ServisTuru"),
        ("TrafikTeklif", {**TRAFIK, "BaslangicTarihi": "2020-01-01"}, "BaslangicTarihi"),
    ],
)
def test_bogazici_refuses_a_bad_or_unsold_term_naming_its_element(
    bogazici: BogaziciClient, islem: str, fields: dict, element: str
) -> None:
    result = bogazici.call(islem, fields)
    assert (result["Basarili"], result["HataKodu"]) == ("false", "BS-100")
    assert result["HataMesaji"].startswith(element)


def test_bogazici_refuses_a_count_not_offered(bogazici: BogaziciClient) -> None:
    result = bogazici.call("Policelestir", {"quote_no": bogazici.quote_no(), "payment_token": "t", "TaksitSayisi": 2})
    assert (result["HataKodu"], result["HataMesaji"]) == ("BS-100", "TaksitSayisi alanı geçersiz")


def test_bogazici_kasko_options_are_priced_and_listed(bogazici: BogaziciClient) -> None:
    """<ImmLimit>0</ImmLimit> is unlimited (an empty <Limit/>); the days ride in <Gun>."""
    plain = bogazici.call("KaskoTeklif", KASKO)
    options = {"Muafiyet": "2500", "IkameGun": "15", "ImmLimit": "0", "ServisTuru": "ANLASMALI"}
    chosen = bogazici.call("KaskoTeklif", {**KASKO, **options})
    assert chosen["Basarili"] == "true", chosen
    assert chosen["BrutPrim"] != plain["BrutPrim"]
    assert chosen["Teminatlar"][:5] == plain["Teminatlar"]
    assert chosen["Teminatlar"][5:] == [
        {"Kod": "IMM", "Ad": "İhtiyari Mali Mesuliyet", "Limit": None},
        {"Kod": "IKAME_ARAC", "Ad": "İkame Araç (15 gün)", "Limit": None, "Gun": "15"},
        {"Kod": "MUAFIYET", "Ad": "Muafiyet", "Limit": "2500.00"},
    ]
    limited = bogazici.call("KaskoTeklif", {**KASKO, "ImmLimit": "500000.00"})
    assert limited["Teminatlar"][-1] == {"Kod": "IMM", "Ad": "İhtiyari Mali Mesuliyet", "Limit": "500000.00"}


def test_bogazici_empty_term_elements_are_not_given(bogazici: BogaziciClient) -> None:
    """An empty element is how a SOAP client leaves a term out: priced as without it."""
    plain = bogazici.call("KaskoTeklif", KASKO)
    empty = bogazici.call("KaskoTeklif", {**KASKO, "Muafiyet": "", "ImmLimit": "", "BaslangicTarihi": ""})
    assert empty["BrutPrim"] == plain["BrutPrim"] and empty["Teminatlar"] == plain["Teminatlar"]


# --- cinar ----------------------------------------------------------------------------------------


def test_cinar_start_and_installments(cinar: CinarClient) -> None:
    """`baslangic` is day.month.year; `taksit_sayisi` is recorded and answered back."""
    start = in_days(1)
    quote = cinar.call("trafik-teklif", {**TRAFIK, "baslangic": f"{start:%d.%m.%Y}"})
    assert quote["success"], quote
    issued = cinar.request(
        "police-olustur",
        {"teklif_no": quote["data"]["teklif_no"], "odeme_token": "t", "request_ref": "terms-1", "taksit_sayisi": 9},
    ).json()
    assert issued["success"], issued
    assert issued["data"]["baslangic"] == f"{start:%d.%m.%Y}" and issued["data"]["taksit_sayisi"] == 9


@pytest.mark.parametrize(
    ("terms", "code"),
    [
        ({"baslangic": in_days(2).isoformat()}, "VAL_BASLANGIC"),  # ISO is not Çınar's date
        ({"baslangic": "31.02.2026"}, "VAL_BASLANGIC"),
        ({"ikame_gun": 15}, "VAL_IKAME_GUN"),  # Çınar has no 15-day replacement car
        ({"muafiyet": "-5"}, "VAL_MUAFIYET"),
        ({"imm_limit": "2500000.00"}, "VAL_IMM_LIMIT"),
        ({"servis_turu": "authorized"}, "VAL_SERVIS_TURU"),
    ],
)
def test_cinar_refuses_a_bad_or_unsold_term(cinar: CinarClient, terms: dict, code: str) -> None:
    body = cinar.call("kasko-teklif", {**KASKO, **terms})
    assert (body["success"], body["errorCode"]) == (False, code), body


def test_cinar_refuses_a_count_not_offered_as_val_taksit(cinar: CinarClient) -> None:
    body = {"teklif_no": cinar.quote_no(), "odeme_token": "t", "request_ref": "terms-2", "taksit_sayisi": 4}
    assert cinar.request("police-olustur", body).json()["errorCode"] == "VAL_TAKSIT"


def test_cinar_kasko_options_are_priced_and_listed(cinar: CinarClient) -> None:
    plain = cinar.call("kasko-teklif", KASKO)["data"]
    options = {"muafiyet": 10000, "ikame_gun": 7, "imm_limit": "3000000.00", "servis_turu": "yetkili"}
    chosen = cinar.call("kasko-teklif", {**KASKO, **options})["data"]
    assert chosen["prim"] != plain["prim"] and chosen["teminatlar"][:5] == plain["teminatlar"]
    assert chosen["teminatlar"][5:] == [
        {"kod": "IMM", "ad": "İhtiyari mali mesuliyet", "limit": "3000000.00"},
        {"kod": "IKAME_ARAC", "ad": "İkame araç (7 gün)", "limit": None, "gun": 7},
        {"kod": "MUAFIYET", "ad": "Muafiyet", "limit": "10000.00"},
    ]
    assert cinar.call("kasko-teklif", {**KASKO, "imm_limit": None})["data"]["teminatlar"][-1]["limit"] is None


# --- deniz ----------------------------------------------------------------------------------------


def deniz_kasko(deniz: DenizClient, **risk: Any) -> Any:
    body = deniz.quote_body("KASKO", KASKO)
    body["risk"].update(risk)
    return deniz.request("POST", "/quotes", json=body)


def test_deniz_start_and_installments(deniz: DenizClient) -> None:
    """`risk.starts_on` on the quote; `installments` beside the quote id; the poll tells both."""
    start = in_days(20)
    body = deniz.quote_body("TRAFIK", TRAFIK)
    body["risk"]["starts_on"] = start.isoformat()
    quote_id = deniz.request("POST", "/quotes", json=body).json()["quote_id"]
    request = {"quote_id": quote_id, "payment_token": "t", "client_reference": "terms-1", "installments": 3}
    accepted = deniz.request("POST", "/policy-requests", json=request)
    assert accepted.status_code == 202, accepted.text
    issued = deniz.wait_for(accepted.json()["request_id"])
    assert issued["period"] == {"from": start.isoformat(), "to": domain.one_year_after(start).isoformat()}
    assert issued["installments"] == 3


def test_deniz_refuses_a_count_not_offered_before_accepting(deniz: DenizClient) -> None:
    request = {"quote_id": deniz.quote_no(), "payment_token": "t", "client_reference": "terms-2", "installments": 0}
    refused = deniz.request("POST", "/policy-requests", json=request)
    assert refused.status_code == 400 and refused.json()["code"] == "INVALID_REQUEST"
    assert refused.json()["detail"].startswith("installments is invalid")
    assert deniz.server.state.counts()["issued_total"] == 0


@pytest.mark.parametrize(
    ("risk", "path"),
    [
        ({"options": {"deductible": {"amount": "0.00", "currency": "TRY"}}}, "risk.options.deductible"),
        ({"options": {"deductible": 5000}}, "risk.options.deductible"),  # money is an amount object
        ({"options": {"liability_limit": None}}, "risk.options.liability_limit"),  # no unlimited İMM
        ({"options": {"repair_shop": "AUTHORIZED"}}, "risk.options.repair_shop"),  # contracted shops only
        ({"options": {"replacement_car_days": 10}}, "risk.options.replacement_car_days"),
        ({"options": "all"}, "risk.options"),
        ({"starts_on": "tomorrow"}, "risk.starts_on"),
    ],
)
def test_deniz_refuses_a_bad_or_unsold_term_naming_its_path(deniz: DenizClient, risk: dict, path: str) -> None:
    response = deniz_kasko(deniz, **risk)
    assert response.status_code == 400 and response.json()["code"] == "INVALID_REQUEST"
    assert response.json()["detail"].startswith(f"{path} is invalid")


def test_deniz_kasko_options_are_priced_and_listed(deniz: DenizClient) -> None:
    plain = deniz_kasko(deniz).json()
    options = {
        "deductible": {"amount": "10000.00", "currency": "TRY"},
        "replacement_car_days": 15,
        "liability_limit": {"amount": "5000000.00", "currency": "TRY"},
        "repair_shop": "CONTRACTED",
    }
    chosen = deniz_kasko(deniz, options=options).json()
    assert chosen["gross_premium"] != plain["gross_premium"] and chosen["coverages"][:5] == plain["coverages"]
    assert chosen["coverages"][5:] == [
        {
            "code": "liability",
            "label": "İhtiyari mali sorumluluk",
            "sum_insured": {"amount": "5000000.00", "currency": "TRY"},
        },
        {"code": "replacement_car", "label": "İkame araç (15 gün)", "sum_insured": None, "days": 15},
        {"code": "deductible", "label": "Muafiyet", "sum_insured": {"amount": "10000.00", "currency": "TRY"}},
    ]
