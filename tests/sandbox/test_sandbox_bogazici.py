"""Boğaziçi sandbox: SOAP 1.1, errors inside HTTP 200, and no issuance deduplication."""

from __future__ import annotations

import base64
import binascii
import time
from datetime import date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import defusedxml.ElementTree as SafeET
import pytest
import requests
from defusedxml import DefusedXmlException

from sandbox.domain import policy_pdf
from sandbox.insurers.bogazici import Bogazici

from .sandbox_wire import KASKO, OTHER_TCKN, TRAFIK, UAVT, VKN, YEAR, BogaziciClient, dask

SOAP = "{http://schemas.xmlsoap.org/soap/envelope/}"


def test_every_operation_answers_as_the_contract_says(bogazici: BogaziciClient) -> None:
    """All seven actions succeed, each wrapped in <b:{Islem}Response> with HTTP 200."""
    raw = bogazici.trafik_quote()
    assert raw.headers["Content-Type"] == "text/xml; charset=utf-8"
    assert b'<b:TrafikTeklifResponse xmlns="urn:bogazici">' in raw.content
    trafik = bogazici.result(raw)
    assert trafik["Basarili"] == "true" and trafik["HataKodu"] is None and trafik["HataMesaji"] is None
    assert trafik["TeklifNo"].startswith("BG-T-") and trafik["ParaBirimi"] == "TRY"
    assert trafik["GecerlilikTarihi"].endswith("Z") and len(trafik["BrutPrim"].split(".")[1]) == 2

    kasko = bogazici.call("KaskoTeklif", KASKO)
    assert kasko["TeklifNo"].startswith("BG-K-") and "CARPISMA" in [item["Kod"] for item in kasko["Teminatlar"]]

    address = bogazici.call("DaskAdresSorgu", {"uavt_code": UAVT})
    assert address["UavtKodu"] == UAVT and address["AcikAdres"] and address["BinaNo"]
    dask_quote = bogazici.call("DaskTeklif", {**dask("bogazici"), "building_id": address["BinaNo"]})
    assert dask_quote["Basarili"] == "true", dask_quote
    assert dask_quote["TeklifNo"].startswith("BG-D-") and dask_quote["SigortaBedeli"] == "1620000.00"

    issued = bogazici.result(bogazici.issue(trafik["TeklifNo"]))
    assert issued["PoliceNo"].startswith("BG-P-") and issued["Durum"] == "YURURLUKTE"
    status = bogazici.call("PoliceSorgu", {"policy_no": issued["PoliceNo"]})
    assert (status["PoliceNo"], status["Durum"]) == (issued["PoliceNo"], "YURURLUKTE")
    lookup = bogazici.call("TeklifPoliceSorgu", {"quote_no": trafik["TeklifNo"]})
    assert lookup["PoliceNo"] == issued["PoliceNo"]
    document = bogazici.result(bogazici.document(issued["PoliceNo"]))
    assert document["Basarili"] == "true" and document["PoliceNo"] == issued["PoliceNo"]
    assert base64.b64decode(document["PdfIcerik"], validate=True).startswith(b"%PDF-")


def test_a_company_can_be_insured_by_its_vkn(bogazici: BogaziciClient) -> None:
    assert bogazici.call("TrafikTeklif", {**TRAFIK, "owner_id": VKN})["Basarili"] == "true"
    assert bogazici.call("TrafikTeklif", {**TRAFIK, "owner_id": OTHER_TCKN})["Basarili"] == "true"


def test_issuing_twice_creates_two_policies(bogazici: BogaziciClient) -> None:
    """No dedup: the second Policelestir is a second policy; TeklifPoliceSorgu shows the latest."""
    quote_no = bogazici.quote_no()
    first = bogazici.result(bogazici.issue(quote_no))["PoliceNo"]
    second = bogazici.result(bogazici.issue(quote_no))["PoliceNo"]
    assert first != second
    counts = bogazici.server.state.counts()
    assert counts["policies_by_quote"] == {quote_no: [first, second]} and counts["issued_total"] == 2
    assert bogazici.call("TeklifPoliceSorgu", {"quote_no": quote_no})["PoliceNo"] == second


def test_lookup_of_a_quote_never_issued_is_bs_404(bogazici: BogaziciClient) -> None:
    result = bogazici.call("TeklifPoliceSorgu", {"quote_no": bogazici.quote_no()})
    assert (result["Basarili"], result["HataKodu"]) == ("false", "BS-404")


@pytest.mark.parametrize(
    ("islem", "fields", "code", "names"),
    [
        ("TrafikTeklif", {**TRAFIK, "plate": "99XX1"}, "BS-100", "Plaka"),
        ("TrafikTeklif", {k: v for k, v in TRAFIK.items() if k != "registration_serial"}, "BS-100", "BelgeSeriNo"),
        ("TrafikTeklif", {**TRAFIK, "owner_id": "10000000147"}, "BS-110", "KimlikNo"),
        ("KaskoTeklif", {**KASKO, "model_year": "iki bin"}, "BS-100", "ModelYili"),
        ("DaskTeklif", dask("bogazici", gross_m2=39), "BS-100", "BrutM2"),
    ],
)
def test_validation_errors_name_the_element(
    bogazici: BogaziciClient, islem: str, fields: dict, code: str, names: str
) -> None:
    """BS-100 names the element; BS-110 for an identity number that fails its checksum."""
    result = bogazici.call(islem, fields)
    assert (result["Basarili"], result["HataKodu"]) == ("false", code)
    assert names in result["HataMesaji"]


def test_elements_outside_the_namespace_do_not_count(bogazici: BogaziciClient) -> None:
    """Children must be in urn:bogazici; an unqualified <Plaka> is a missing Plaka."""
    body = BogaziciClient.envelope("TrafikTeklif", {}, ("acente1", "bogazici-pass-1")).replace(
        b"<b:TrafikTeklif>", b"<b:TrafikTeklif><Plaka>34ABC123</Plaka>"
    )
    result = bogazici.result(bogazici.request("TrafikTeklif", body=body))
    assert result["HataKodu"] == "BS-100" and "Plaka" in result["HataMesaji"]


@pytest.mark.parametrize(
    ("islem", "fields", "code"),
    [
        ("KaskoTeklif", {**KASKO, "model_year": YEAR - 21}, "BS-300"),
        ("DaskTeklif", dask("bogazici", damage_status="heavy"), "BS-310"),
        ("DaskAdresSorgu", {"uavt_code": "9999999999"}, "BS-404"),
        ("PoliceSorgu", {"policy_no": "BG-P-999999"}, "BS-404"),
        ("Policelestir", {"quote_no": "BG-T-999999", "payment_token": "tok_ok"}, "BS-404"),
    ],
)
def test_business_refusals(bogazici: BogaziciClient, islem: str, fields: dict, code: str) -> None:
    result = bogazici.call(islem, fields)
    assert (result["Basarili"], result["HataKodu"]) == ("false", code)


def test_expired_quote_is_bs_320_and_declined_card_bs_310(bogazici: BogaziciClient) -> None:
    assert bogazici.result(bogazici.issue(bogazici.quote_no(), card="tok_declined"))["HataKodu"] == "BS-310"
    bogazici.server.state.configure(quote_ttl_seconds=0.05)
    quote_no = bogazici.quote_no()
    time.sleep(0.1)
    assert bogazici.result(bogazici.issue(quote_no))["HataKodu"] == "BS-320"
    assert bogazici.server.state.counts()["issued_total"] == 0


def test_wrong_password_is_bs_200_in_http_200_and_counted(bogazici: BogaziciClient) -> None:
    response = bogazici.trafik_quote(login=("acente1", "wrong"))
    result = bogazici.result(response)
    assert (result["Basarili"], result["HataKodu"]) == ("false", "BS-200")
    counts = bogazici.server.state.counts()
    assert counts["received"] == {"trafik_quote": 1} and counts["received_by_account"] == {}


def test_the_kota_signal_under_a_low_rate(bogazici: BogaziciClient) -> None:
    """Bucket empty: HTTP 200, Basarili=false, BS-901 and TekrarDenemeSn (whole seconds, >= 1)."""
    bogazici.server.state.configure(default_rate_per_second=0.25, default_burst=1)
    assert bogazici.call("TrafikTeklif", TRAFIK)["Basarili"] == "true"
    result = bogazici.call("TrafikTeklif", TRAFIK)
    assert (result["Basarili"], result["HataKodu"], result["TekrarDenemeSn"]) == ("false", "BS-901", "4")
    assert bogazici.server.state.counts()["throttled"] == {"trafik_quote": 1}


@pytest.mark.parametrize(
    "code", ["BS-100", "BS-110", "BS-200", "BS-300", "BS-310", "BS-320", "BS-404", "BS-900", "BS-902", "BS-777"]
)
def test_error_fault_renders_each_code_in_http_200(bogazici: BogaziciClient, code: str) -> None:
    bogazici.server.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": code}])
    result = bogazici.result(bogazici.trafik_quote())
    assert (result["Basarili"], result["HataKodu"]) == ("false", code) and result["HataMesaji"]
    assert "TekrarDenemeSn" not in result


def test_bs_901_fault_with_and_without_tekrar_deneme(bogazici: BogaziciClient) -> None:
    """wait_seconds sets TekrarDenemeSn; null leaves it out; absent means 1."""
    bogazici.server.state.add_faults(
        [
            {"operation": "*", "fault": "error", "code": "BS-901", "wait_seconds": 5},
            {"operation": "*", "fault": "error", "code": "BS-901", "wait_seconds": None},
            {"operation": "*", "fault": "error", "code": "BS-901"},
        ]
    )
    with_wait, without, default = (bogazici.call("TrafikTeklif", TRAFIK) for _ in range(3))
    assert (with_wait["HataKodu"], with_wait["TekrarDenemeSn"]) == ("BS-901", "5")
    assert without["HataKodu"] == "BS-901" and "TekrarDenemeSn" not in without
    assert default["TekrarDenemeSn"] == "1"
    assert bogazici.server.state.counts()["throttled"] == {"trafik_quote": 3}


def test_bs_902_on_issuance_can_leave_a_policy_behind(bogazici: BogaziciClient) -> None:
    """commit: true makes the backend timeout happen after the policy was written."""
    bogazici.server.state.add_faults(
        [{"operation": "issue_policy", "fault": "error", "code": "BS-902", "commit": True}]
    )
    quote_no = bogazici.quote_no()
    assert bogazici.result(bogazici.issue(quote_no))["HataKodu"] == "BS-902"
    assert bogazici.call("TeklifPoliceSorgu", {"quote_no": quote_no})["Basarili"] == "true"
    assert bogazici.server.state.counts()["issued_total"] == 1


@pytest.mark.parametrize(
    ("code", "expected"), [(None, "soap:Server"), ("soap:Client", "soap:Client"), ("Server", "soap:Server")]
)
def test_soap_fault_is_http_500(bogazici: BogaziciClient, code: str | None, expected: str) -> None:
    rule = {"operation": "trafik_quote", "fault": "soap_fault", **({"code": code} if code else {})}
    bogazici.server.state.add_faults([rule])
    response = bogazici.trafik_quote()
    assert response.status_code == 500
    fault = SafeET.fromstring(response.content).find(f"{SOAP}Body/{SOAP}Fault")
    assert fault is not None and fault.findtext("faultcode") == expected and fault.findtext("faultstring")


def test_xml_bomb_is_refused_by_a_safe_parser(bogazici: BogaziciClient) -> None:
    """The answer defines nested entities; defusedxml must refuse it."""
    bogazici.server.state.add_faults([{"operation": "trafik_quote", "fault": "xml_bomb"}])
    response = bogazici.trafik_quote()
    assert response.status_code == 200 and b"<!ENTITY lol9" in response.content and len(response.content) < 4000
    with pytest.raises(DefusedXmlException):
        SafeET.fromstring(response.content)


def test_malformed_or_mismatched_requests_are_client_faults(bogazici: BogaziciClient) -> None:
    """Unreadable XML, a DTD, a SOAPAction that disagrees with the body: soap:Client, HTTP 500."""
    doctype = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>'
    for response in (
        bogazici.request("TrafikTeklif", body=b"<soap:Envelope"),
        bogazici.request("TrafikTeklif", body=doctype),
        bogazici.request("TrafikTeklif", TRAFIK, action="KaskoTeklif"),
        bogazici.request("Bilinmeyen", {}),
    ):
        assert response.status_code == 500
        assert SafeET.fromstring(response.content).findtext(f"{SOAP}Body/{SOAP}Fault/faultcode") == "soap:Client"


def test_wrong_path_is_a_404_page(bogazici: BogaziciClient) -> None:
    response = bogazici.request("TrafikTeklif", TRAFIK, path="/ws/Other.asmx")
    assert response.status_code == 404 and response.headers["Content-Type"].startswith("text/html")


# --- policy periods ---------------------------------------------------------------------------------


def test_issue_status_and_lookup_say_when_the_policy_runs(bogazici: BogaziciClient) -> None:
    """Policelestir, PoliceSorgu and TeklifPoliceSorgu carry BaslangicTarihi/BitisTarihi: from tomorrow
    in Türkiye's calendar, for a year, as YYYY-MM-DD."""
    quote_no = bogazici.quote_no()
    issued = bogazici.result(bogazici.issue(quote_no))
    status = bogazici.call("PoliceSorgu", {"policy_no": issued["PoliceNo"]})
    lookup = bogazici.call("TeklifPoliceSorgu", {"quote_no": quote_no})
    periods = {(answer["BaslangicTarihi"], answer["BitisTarihi"]) for answer in (issued, status, lookup)}
    assert len(periods) == 1
    starts_on, ends_on = (date.fromisoformat(value) for value in periods.pop())
    tomorrow = datetime.now(ZoneInfo("Europe/Istanbul")).date() + timedelta(days=1)
    assert starts_on in (tomorrow, tomorrow + timedelta(days=1))  # a test run across midnight
    assert (ends_on.year - starts_on.year, ends_on.month, ends_on.day) == (1, starts_on.month, starts_on.day)


def test_a_seeded_policy_answers_with_its_given_period(bogazici: BogaziciClient) -> None:
    bogazici.server.state.seed_policies(
        [{"policy_no": "BG-P-SEED-1", "status": "ACTIVE", "starts_on": "2026-03-01", "ends_on": "2027-03-01"}]
    )
    status = bogazici.call("PoliceSorgu", {"policy_no": "BG-P-SEED-1"})
    assert (status["BaslangicTarihi"], status["BitisTarihi"]) == ("2026-03-01", "2027-03-01")


# --- coverages and installments on every quote ----------------------------------------------------------


def _coverages(result: dict) -> dict[str, tuple[str, str | None]]:
    return {item["Kod"]: (item["Ad"], item["Limit"]) for item in result["Teminatlar"]}


def test_trafik_quote_lists_the_legal_limits(bogazici: BogaziciClient) -> None:
    coverages = _coverages(bogazici.call("TrafikTeklif", TRAFIK))
    assert {code: limit for code, (_, limit) in coverages.items()} == {
        "SAKATLANMA_OLUM": "2700000.00",
        "TEDAVI": "2700000.00",
        "MADDI_HASAR": "300000.00",
    }
    assert all(name for name, _ in coverages.values())


def test_kasko_quote_lists_its_covers_glass_unlimited(bogazici: BogaziciClient) -> None:
    """Kasko covers up to the vehicle's value; an empty <Limit/> is "unlimited" (glass)."""
    result = bogazici.call("KaskoTeklif", KASKO)
    coverages = _coverages(result)
    assert list(coverages) == ["CARPISMA", "HIRSIZLIK", "YANGIN", "SEL", "CAM"]
    assert coverages["CAM"][1] is None
    assert coverages["CARPISMA"][0] == "Çarpışma"
    collision_limit = coverages["CARPISMA"][1]
    assert collision_limit is not None and Decimal(collision_limit) > Decimal(result["BrutPrim"])


def test_dask_quote_lists_the_earthquake_cover_at_the_sum_insured(bogazici: BogaziciClient) -> None:
    result = bogazici.call("DaskTeklif", dask("bogazici"))
    assert result["Basarili"] == "true", result
    assert _coverages(result) == {"DEPREM": ("Deprem", result["SigortaBedeli"])}


@pytest.mark.parametrize(("islem", "fields"), [("TrafikTeklif", TRAFIK), ("KaskoTeklif", KASKO)])
def test_quotes_offer_installments(bogazici: BogaziciClient, islem: str, fields: dict) -> None:
    """<Taksitler><Taksit><Sayi/><Toplam/>: one payment costs the premium, more parts cost more."""
    result = bogazici.call(islem, fields)
    plans = [(int(item["Sayi"]), Decimal(item["Toplam"])) for item in result["Taksitler"]]
    assert [count for count, _ in plans] == [1, 3, 6, 9]
    assert plans[0][1] == Decimal(result["BrutPrim"])
    totals = [total for _, total in plans]
    assert totals == sorted(totals) and totals[-1] > totals[0]


def test_older_bare_coverage_form_on_request(bogazici: BogaziciClient) -> None:
    """The `coverages_bare` fault answers as older Boğaziçi answers did: <Teminat>CODE</Teminat>."""
    bogazici.server.state.add_faults([{"operation": "kasko_quote", "fault": "coverages_bare"}])
    result = bogazici.call("KaskoTeklif", KASKO)
    assert result["Basarili"] == "true" and result["Teminatlar"] == ["CARPISMA", "HIRSIZLIK", "YANGIN", "SEL", "CAM"]
    assert bogazici.server.state.counts()["faults"] == {"kasko_quote": 1}


def test_malformed_coverage_entries_on_request(bogazici: BogaziciClient) -> None:
    """The `coverage_malformed` fault adds an entry without a Kod and one whose Limit is no amount."""
    bogazici.server.state.add_faults([{"operation": "trafik_quote", "fault": "coverage_malformed"}])
    entries = bogazici.call("TrafikTeklif", TRAFIK)["Teminatlar"]
    assert len(entries) == 5
    assert entries[3]["Kod"] is None and entries[4]["Limit"] == "sınırsız"


# --- PoliceBasim: the policy PDF -------------------------------------------------------------------------


def test_police_basim_sends_the_policy_pdf_base64(bogazici: BogaziciClient) -> None:
    """The PDF is the sandbox's deterministic document for this policy, printed with its period."""
    quote_no = bogazici.quote_no()
    issued = bogazici.result(bogazici.issue(quote_no))
    response = bogazici.document(issued["PoliceNo"])
    assert response.headers["Content-Type"] == "text/xml; charset=utf-8"
    assert b'<b:PoliceBasimResponse xmlns="urn:bogazici">' in response.content
    result = bogazici.result(response)
    assert (result["Basarili"], result["HataKodu"], result["PoliceNo"]) == ("true", None, issued["PoliceNo"])
    expected = policy_pdf(
        Bogazici.document_name,
        issued["PoliceNo"],
        date.fromisoformat(issued["BaslangicTarihi"]),
        date.fromisoformat(issued["BitisTarihi"]),
    )
    assert base64.b64decode(result["PdfIcerik"], validate=True) == expected
    assert bogazici.server.state.counts()["received"]["policy_document"] == 1


def test_police_basim_is_bs_405_until_printed(bogazici: BogaziciClient) -> None:
    """document_delay_seconds after issuance: BS-405 "Basım hazır değil" with TekrarDenemeSn in whole
    seconds (at least 1), in HTTP 200; then the PDF."""
    bogazici.server.state.configure(document_delay_seconds=2.5)
    first_policy = bogazici.policy_no()
    result = bogazici.result(bogazici.document(first_policy))
    assert (result["Basarili"], result["HataKodu"], result["HataMesaji"]) == ("false", "BS-405", "Basım hazır değil")
    assert result["TekrarDenemeSn"] == "3"
    bogazici.server.state.configure(document_delay_seconds=0.3)
    policy_no = bogazici.policy_no()
    result = bogazici.result(bogazici.document(policy_no))
    assert (result["HataKodu"], result["TekrarDenemeSn"]) == ("BS-405", "1")
    time.sleep(0.35)
    assert bogazici.result(bogazici.document(policy_no))["Basarili"] == "true"


@pytest.mark.parametrize("policy_no", ["BG-P-999999", "AK-P-000001"])
def test_police_basim_of_an_unknown_policy_is_bs_404(bogazici: BogaziciClient, policy_no: str) -> None:
    result = bogazici.call("PoliceBasim", {"policy_no": policy_no})
    assert (result["Basarili"], result["HataKodu"]) == ("false", "BS-404")


def test_police_basim_of_another_agencys_policy_is_bs_404(bogazici: BogaziciClient) -> None:
    policy_no = bogazici.policy_no()
    result = bogazici.call("PoliceBasim", {"policy_no": policy_no}, login=("acente2", "bogazici-pass-2"))
    assert (result["Basarili"], result["HataKodu"]) == ("false", "BS-404")


def test_police_basim_without_policeno_is_bs_100(bogazici: BogaziciClient) -> None:
    result = bogazici.call("PoliceBasim", {})
    assert result["HataKodu"] == "BS-100" and "PoliceNo" in result["HataMesaji"]


def test_police_basim_of_a_seeded_policy_is_ready_at_once(bogazici: BogaziciClient) -> None:
    bogazici.server.state.configure(document_delay_seconds=60)
    bogazici.server.state.seed_policies([{"policy_no": "BG-P-SEED-2", "status": "ACTIVE"}])
    result = bogazici.call("PoliceBasim", {"policy_no": "BG-P-SEED-2"})
    assert base64.b64decode(result["PdfIcerik"]).startswith(b"%PDF-")


def test_police_basim_is_authenticated_and_rate_limited(bogazici: BogaziciClient) -> None:
    """Wrong password: BS-200; an empty bucket: BS-901 and TekrarDenemeSn; every call counted."""
    policy_no = bogazici.policy_no()
    assert bogazici.call("PoliceBasim", {"policy_no": policy_no}, login=("acente1", "x"))["HataKodu"] == "BS-200"
    bogazici.server.state.configure(default_rate_per_second=0.25, default_burst=1)
    served, throttled = (bogazici.call("PoliceBasim", {"policy_no": policy_no}) for _ in range(2))
    assert served["Basarili"] == "true"
    assert (throttled["Basarili"], throttled["HataKodu"], throttled["TekrarDenemeSn"]) == ("false", "BS-901", "4")
    counts = bogazici.server.state.counts()
    assert counts["received"]["policy_document"] == 3 and counts["throttled"] == {"policy_document": 1}


def test_bs_405_fault_with_and_without_tekrar_deneme(bogazici: BogaziciClient) -> None:
    """An injected BS-405: wait_seconds sets TekrarDenemeSn, null leaves it out, absent means 1."""
    policy_no = bogazici.policy_no()
    bogazici.server.state.add_faults(
        [
            {"operation": "policy_document", "fault": "error", "code": "BS-405", "wait_seconds": 4},
            {"operation": "policy_document", "fault": "error", "code": "BS-405", "wait_seconds": None},
            {"operation": "policy_document", "fault": "error", "code": "BS-405"},
        ]
    )
    with_wait, without, default = (bogazici.call("PoliceBasim", {"policy_no": policy_no}) for _ in range(3))
    assert (with_wait["HataKodu"], with_wait["HataMesaji"], with_wait["TekrarDenemeSn"]) == (
        "BS-405",
        "Basım hazır değil",
        "4",
    )
    assert without["HataKodu"] == "BS-405" and "TekrarDenemeSn" not in without
    assert default["TekrarDenemeSn"] == "1"
    assert bogazici.call("PoliceBasim", {"policy_no": policy_no})["Basarili"] == "true"


@pytest.mark.parametrize(
    ("rule", "status"),
    [
        ({"fault": "error", "code": "BS-900"}, 200),
        ({"fault": "html", "http_status": 503}, 503),
        ({"fault": "soap_fault"}, 500),
        ({"fault": "garbage"}, 200),
        ({"fault": "latency", "seconds": 0.2}, 200),
    ],
    ids=["bs900", "html", "soap-fault", "garbage", "latency"],
)
def test_police_basim_faults(bogazici: BogaziciClient, rule: dict, status: int) -> None:
    policy_no = bogazici.policy_no()
    bogazici.server.state.add_faults([{"operation": "policy_document", **rule}])
    started = time.monotonic()
    response = bogazici.document(policy_no)
    assert response.status_code == status
    if rule["fault"] == "latency":
        assert time.monotonic() - started >= 0.2 and bogazici.result(response)["Basarili"] == "true"
    assert bogazici.server.state.counts()["faults"] == {"policy_document": 1}


def test_police_basim_can_be_reset_mid_answer(bogazici: BogaziciClient) -> None:
    policy_no = bogazici.policy_no()
    bogazici.server.state.add_faults([{"operation": "policy_document", "fault": "reset"}])
    with pytest.raises(requests.exceptions.ConnectionError):
        bogazici.document(policy_no)


def test_unreadable_document_faults(bogazici: BogaziciClient) -> None:
    """document_not_base64 and document_not_pdf answer Basarili=true with a PdfIcerik no client can use."""
    policy_no = bogazici.policy_no()
    bogazici.server.state.add_faults(
        [
            {"operation": "policy_document", "fault": "document_not_base64"},
            {"operation": "policy_document", "fault": "document_not_pdf"},
        ]
    )
    not_base64 = bogazici.call("PoliceBasim", {"policy_no": policy_no})
    assert not_base64["Basarili"] == "true"
    with pytest.raises(binascii.Error):
        base64.b64decode(not_base64["PdfIcerik"], validate=True)
    not_pdf = bogazici.call("PoliceBasim", {"policy_no": policy_no})
    assert not base64.b64decode(not_pdf["PdfIcerik"], validate=True).startswith(b"%PDF-")
