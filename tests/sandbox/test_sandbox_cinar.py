"""Çınar sandbox: errors inside HTTP 200, expiring bearer tokens, request_ref dedup, gateway 503."""

from __future__ import annotations

import base64
import re
import time
from datetime import date
from decimal import Decimal
from email.utils import parsedate_to_datetime
from typing import Any

import pytest
import requests

from .sandbox_wire import KASKO, TRAFIK, UAVT, YEAR, CinarClient, cinar_body, dask


def test_token_then_every_operation(cinar: CinarClient) -> None:
    """Token with expires_in, then the six calls with {"success": true, "data": {...}}."""
    token_body = cinar.token_response().json()
    assert token_body["access_token"] and token_body["expires_in"] == 300

    trafik = cinar.call("trafik-teklif", TRAFIK)
    assert trafik["success"] is True
    data = trafik["data"]
    assert data["teklif_no"].startswith("CN-T-") and data["para_birimi"] == "TRY" and data["gecerlilik"].endswith("Z")
    kasko = cinar.call("kasko-teklif", KASKO)["data"]
    assert kasko["teklif_no"].startswith("CN-K-") and kasko["teminatlar"]
    address = cinar.call("dask-adres", {"uavt_code": UAVT})["data"]
    assert address["uavt_kodu"] == UAVT and address["adres"] and address["bina_no"]
    dask_quote = cinar.call("dask-teklif", {**dask("cinar"), "building_id": address["bina_no"]})
    assert dask_quote["success"], dask_quote
    assert dask_quote["data"]["teklif_no"].startswith("CN-D-") and dask_quote["data"]["sigorta_bedeli"] == "1620000.00"

    issued = cinar.issue(data["teklif_no"]).json()
    assert issued["success"] and issued["data"]["police_no"].startswith("CN-P-") and issued["data"]["durum"] == "AKTIF"
    status = cinar.call("police-durum", {"policy_no": issued["data"]["police_no"]})["data"]
    period = {"baslangic": issued["data"]["baslangic"], "bitis": issued["data"]["bitis"]}
    assert status == {"police_no": issued["data"]["police_no"], "durum": "AKTIF", **period}
    document = cinar.document(issued["data"]["police_no"]).json()
    assert document["success"] is True and document["data"]["sayfa_sayisi"] == 1
    assert base64.b64decode(document["data"]["pdf_base64"], validate=True).startswith(b"%PDF-")


def test_wrong_client_is_auth_invalid_client_in_http_200(cinar: CinarClient) -> None:
    response = cinar.token_response(("acente1", "wrong"))
    assert response.status_code == 200
    assert response.json()["success"] is False and response.json()["errorCode"] == "AUTH_INVALID_CLIENT"
    assert cinar.server.state.counts()["received"] == {"token": 1}


def test_unknown_and_expired_tokens_are_auth_token_expired(cinar: CinarClient) -> None:
    """A token past expires_in, or one the insurer never issued: AUTH_TOKEN_EXPIRED, HTTP 200."""
    unknown = cinar.request("trafik-teklif", cinar_body(TRAFIK), token="never-issued")
    assert unknown.status_code == 200 and unknown.json()["errorCode"] == "AUTH_TOKEN_EXPIRED"
    cinar.server.state.configure(token_ttl_seconds=0.2)
    assert cinar.token_response().json()["expires_in"] == 0.2
    token = cinar.token()
    assert cinar.request("trafik-teklif", cinar_body(TRAFIK), token=token).json()["success"] is True
    time.sleep(0.25)
    assert cinar.request("trafik-teklif", cinar_body(TRAFIK), token=token).json()["errorCode"] == "AUTH_TOKEN_EXPIRED"
    assert cinar.request("trafik-teklif", cinar_body(TRAFIK), token=cinar.token()).json()["success"] is True


def test_a_reset_forgets_tokens(cinar: CinarClient) -> None:
    token = cinar.token()
    cinar.server.state.reset()
    assert cinar.request("trafik-teklif", cinar_body(TRAFIK), token=token).json()["errorCode"] == "AUTH_TOKEN_EXPIRED"


@pytest.mark.parametrize(
    ("islem", "fields", "code"),
    [
        ("trafik-teklif", {**TRAFIK, "plate": "34ABC"}, "VAL_PLAKA"),
        ("trafik-teklif", {**TRAFIK, "owner_id": "1234"}, "VAL_KIMLIK"),
        ("trafik-teklif", {**TRAFIK, "owner_id": None}, "VAL_KIMLIK"),
        ("trafik-teklif", {**TRAFIK, "usage": "rental"}, "VAL_KULLANIM"),
        ("kasko-teklif", {**KASKO, "brand_code": "12"}, "VAL_MARKA_KODU"),
        ("dask-teklif", dask("cinar", gross_m2=1001), "VAL_BRUT_M2"),
        ("dask-adres", {"uavt_code": "12345"}, "VAL_UAVT_KODU"),
        ("dask-adres", {"uavt_code": "9000000000"}, "VAL_UAVT_KODU"),
        ("police-durum", {"policy_no": "CN-P-999999"}, "VAL_POLICE_NO"),
    ],
)
def test_validation_codes_per_field(cinar: CinarClient, islem: str, fields: dict, code: str) -> None:
    """VAL_<FIELD>; unknown records are reported against the field that named them."""
    body = cinar.call(islem, fields)
    assert body["success"] is False and body["errorCode"] == code and body["message"]


@pytest.mark.parametrize(
    ("islem", "fields", "code"),
    [
        ("kasko-teklif", {**KASKO, "model_year": YEAR - 30}, "BIZ_NOT_ELIGIBLE"),
        ("dask-teklif", dask("cinar", damage_status="heavy"), "BIZ_RISK_DECLINED"),
    ],
)
def test_business_refusals(cinar: CinarClient, islem: str, fields: dict, code: str) -> None:
    assert cinar.call(islem, fields)["errorCode"] == code


def test_issuance_refusals(cinar: CinarClient) -> None:
    """Unknown quote, declined card, expired quote, missing request_ref."""
    assert cinar.issue("CN-T-999999").json()["errorCode"] == "VAL_TEKLIF_NO"
    assert cinar.issue(cinar.quote_no(), card="tok_declined").json()["errorCode"] == "BIZ_RISK_DECLINED"
    missing_ref = cinar.request("police-olustur", {"teklif_no": cinar.quote_no(), "odeme_token": "tok_ok"}).json()
    assert missing_ref["errorCode"] == "VAL_REQUEST_REF"
    cinar.server.state.configure(quote_ttl_seconds=0.05)
    quote_no = cinar.quote_no()
    time.sleep(0.1)
    assert cinar.issue(quote_no, ref="late").json()["errorCode"] == "BIZ_QUOTE_EXPIRED"
    assert cinar.server.state.counts()["issued_total"] == 0


def test_repeated_request_ref_answers_duplicate_with_the_first_policy(cinar: CinarClient) -> None:
    """BIZ_DUPLICATE_REQUEST carries data.police_no of the policy the first call created."""
    quote_no = cinar.quote_no()
    first = cinar.issue(quote_no, ref="r-1").json()
    again = cinar.issue(quote_no, ref="r-1").json()
    assert again["success"] is False and again["errorCode"] == "BIZ_DUPLICATE_REQUEST"
    assert again["data"]["police_no"] == first["data"]["police_no"]
    assert cinar.server.state.counts()["issued_total"] == 1


def test_a_refused_request_ref_can_be_sent_again(cinar: CinarClient) -> None:
    quote_no = cinar.quote_no()
    assert cinar.issue(quote_no, ref="r-2", card="tok_declined").json()["success"] is False
    assert cinar.issue(quote_no, ref="r-2").json()["success"] is True


def test_gateway_throttle_is_503_with_an_http_date(cinar: CinarClient) -> None:
    """Over the rate: 503, Retry-After as an IMF-fixdate at least one second ahead."""
    cinar.server.state.configure(default_rate_per_second=0.5, default_burst=2)
    token = cinar.token()  # the token call takes a token from the bucket too
    assert cinar.request("trafik-teklif", cinar_body(TRAFIK), token=token).json()["success"]
    before = time.time()
    throttled = cinar.request("trafik-teklif", cinar_body(TRAFIK), token=token)
    assert throttled.status_code == 503
    retry_at = parsedate_to_datetime(throttled.headers["Retry-After"]).timestamp()
    assert throttled.headers["Retry-After"].endswith(" GMT")
    assert before + 1 <= retry_at + 0.001 and retry_at <= before + 4
    assert cinar.token_response().status_code == 503
    assert cinar.server.state.counts()["throttled"] == {"trafik_quote": 1, "token": 1}


def test_throttle_fault_on_the_token_endpoint(cinar: CinarClient) -> None:
    cinar.server.state.add_faults([{"operation": "token", "fault": "throttle", "wait_seconds": 3}])
    response = cinar.token_response()
    assert response.status_code == 503
    assert parsedate_to_datetime(response.headers["Retry-After"]).timestamp() >= time.time() + 2


@pytest.mark.parametrize(
    "code",
    [
        "VAL_PLAKA",
        "VAL_KIMLIK",
        "AUTH_INVALID_CLIENT",
        "AUTH_TOKEN_EXPIRED",
        "BIZ_NOT_ELIGIBLE",
        "BIZ_RISK_DECLINED",
        "BIZ_QUOTE_EXPIRED",
        "SYS_BUSY",
        "NEW_CODE_42",
    ],
)
def test_error_fault_renders_each_code_in_http_200(cinar: CinarClient, code: str) -> None:
    cinar.server.state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": code}])
    response = cinar.trafik_quote()
    assert response.status_code == 200
    body = response.json()
    assert body["success"] is False and body["errorCode"] == code and body["message"]


def test_maintenance_says_how_long(cinar: CinarClient) -> None:
    cinar.server.state.add_faults([{"operation": "*", "fault": "error", "code": "SYS_MAINTENANCE", "wait_seconds": 42}])
    body = cinar.trafik_quote().json()
    assert body["errorCode"] == "SYS_MAINTENANCE" and body["data"] == {"retry_after_seconds": 42}


def test_duplicate_fault_on_issuance_names_a_policy_that_exists(cinar: CinarClient) -> None:
    """BIZ_DUPLICATE_REQUEST means "it succeeded": the sandbox makes that true before answering."""
    quote_no = cinar.quote_no()
    cinar.server.state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "BIZ_DUPLICATE_REQUEST"}])
    body = cinar.issue(quote_no).json()
    assert body["errorCode"] == "BIZ_DUPLICATE_REQUEST"
    assert cinar.server.state.counts()["policies_by_quote"] == {quote_no: [body["data"]["police_no"]]}
    cinar.server.state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "BIZ_DUPLICATE_REQUEST"}])
    again = cinar.issue(quote_no).json()  # same request_ref: nothing new, the same policy named
    assert again["data"]["police_no"] == body["data"]["police_no"]
    assert cinar.server.state.counts()["issued_total"] == 1


# --- policy periods ------------------------------------------------------------------------------

DAY_MONTH_YEAR = re.compile(r"[0-9]{2}\.[0-9]{2}\.[0-9]{4}")


def day_month_year(value: str) -> date:
    assert DAY_MONTH_YEAR.fullmatch(value), value
    day, month, year = (int(part) for part in value.split("."))
    return date(year, month, day)


def test_issuance_status_and_duplicate_give_the_period_day_month_year(cinar: CinarClient) -> None:
    """baslangic/bitis as DD.MM.YYYY on police-olustur, police-durum and BIZ_DUPLICATE_REQUEST's data."""
    quote_no = cinar.quote_no()
    issued = cinar.issue(quote_no, ref="period-1").json()["data"]
    starts_on, ends_on = day_month_year(issued["baslangic"]), day_month_year(issued["bitis"])
    assert date.today() <= starts_on <= date.fromordinal(date.today().toordinal() + 2)
    assert (ends_on.year - starts_on.year, ends_on.month) == (1, starts_on.month)
    period = {"baslangic": issued["baslangic"], "bitis": issued["bitis"]}

    status = cinar.call("police-durum", {"policy_no": issued["police_no"]})["data"]
    again = cinar.issue(quote_no, ref="period-1").json()

    assert {key: status[key] for key in period} == period
    assert again["errorCode"] == "BIZ_DUPLICATE_REQUEST"
    assert again["data"] == {"police_no": issued["police_no"], **period}


def test_duplicate_fault_carries_the_period_of_the_policy_it_names(cinar: CinarClient) -> None:
    cinar.server.state.add_faults([{"operation": "issue_policy", "fault": "error", "code": "BIZ_DUPLICATE_REQUEST"}])
    body = cinar.issue(cinar.quote_no(), ref="period-2").json()
    assert body["errorCode"] == "BIZ_DUPLICATE_REQUEST"
    assert day_month_year(body["data"]["baslangic"]) < day_month_year(body["data"]["bitis"])


def test_seeded_policy_status_gives_its_seeded_period(cinar: CinarClient) -> None:
    cinar.server.state.seed_policies(
        [{"policy_no": "CN-P-555001", "status": "CANCELLED", "starts_on": "2026-03-01", "ends_on": "2027-03-01"}]
    )
    status = cinar.call("police-durum", {"policy_no": "CN-P-555001"})["data"]
    assert status == {"police_no": "CN-P-555001", "durum": "IPTAL", "baslangic": "01.03.2026", "bitis": "01.03.2027"}


# --- coverages and installments ------------------------------------------------------------------


def test_trafik_quote_lists_the_legal_limits(cinar: CinarClient) -> None:
    data = cinar.call("trafik-teklif", TRAFIK)["data"]
    assert [(cover["kod"], cover["limit"]) for cover in data["teminatlar"]] == [
        ("SAKATLANMA_OLUM", "2700000.00"),
        ("TEDAVI", "2700000.00"),
        ("MADDI_HASAR", "300000.00"),
    ]
    assert all(cover["ad"] for cover in data["teminatlar"])


def test_kasko_quote_lists_covers_with_limits_glass_unlimited(cinar: CinarClient) -> None:
    covers = {cover["kod"]: cover for cover in cinar.call("kasko-teklif", KASKO)["data"]["teminatlar"]}
    assert list(covers) == ["CARPISMA", "HIRSIZLIK", "YANGIN", "DOGAL_AFET", "CAM"]
    assert covers["CAM"]["limit"] is None
    assert Decimal(covers["CARPISMA"]["limit"]) > 0 and covers["CARPISMA"]["ad"] == "Çarpışma"


def test_dask_quote_lists_the_earthquake_cover_at_the_sum_insured(cinar: CinarClient) -> None:
    data = cinar.call("dask-teklif", dask("cinar"))["data"]
    assert data["teminatlar"] == [
        {"kod": "DEPREM", "ad": "Deprem ve deprem kaynaklı yangın", "limit": data["sigorta_bedeli"]}
    ]


@pytest.mark.parametrize("islem", ["trafik-teklif", "kasko-teklif", "dask-teklif"])
def test_every_quote_offers_installments(cinar: CinarClient, islem: str) -> None:
    """taksitler: {taksit_sayisi, toplam}; paying in one part costs the premium, more parts cost more."""
    by_islem: dict[str, dict[str, Any]] = {"trafik-teklif": TRAFIK, "kasko-teklif": KASKO, "dask-teklif": dask("cinar")}
    fields = by_islem[islem]
    data = cinar.call(islem, fields)["data"]
    plans = {plan["taksit_sayisi"]: Decimal(plan["toplam"]) for plan in data["taksitler"]}
    assert plans[1] == Decimal(data["prim"])
    assert 3 in plans and plans[3] > plans[1]
    assert list(plans) == sorted(plans)


def test_coverages_bare_variant_sends_codes_only(cinar: CinarClient) -> None:
    cinar.server.state.add_faults([{"operation": "kasko_quote", "fault": "coverages_bare"}])
    data = cinar.call("kasko-teklif", KASKO)["data"]
    assert data["teminatlar"] == ["CARPISMA", "HIRSIZLIK", "YANGIN", "DOGAL_AFET", "CAM"]


@pytest.mark.parametrize(
    ("fault", "key"), [("coverage_malformed", "teminatlar"), ("installment_malformed", "taksitler")]
)
def test_malformed_entry_variants_add_to_the_good_entries(cinar: CinarClient, fault: str, key: str) -> None:
    good = cinar.call("trafik-teklif", TRAFIK)["data"][key]
    cinar.server.state.add_faults([{"operation": "trafik_quote", "fault": fault}])
    sent = cinar.call("trafik-teklif", TRAFIK)["data"][key]
    assert sent[: len(good)] == good and len(sent) > len(good)


# --- police-pdf ----------------------------------------------------------------------------------


def test_police_pdf_is_the_same_pdf_every_time(cinar: CinarClient) -> None:
    policy_no = cinar.policy_no()
    first = cinar.document(policy_no).json()["data"]
    second = cinar.document(policy_no).json()["data"]
    pdf = base64.b64decode(first["pdf_base64"], validate=True)
    assert pdf.startswith(b"%PDF-") and policy_no.encode() in pdf
    assert second == first
    assert cinar.server.state.counts()["received"]["policy_document"] == 2


@pytest.mark.parametrize(("delay", "said"), [(2.5, 3), (0.3, 1)])
def test_police_pdf_not_ready_says_whole_seconds(cinar: CinarClient, delay: float, said: int) -> None:
    """DOC_NOT_READY, data.retry_after_seconds rounded up and at least 1, then the PDF."""
    cinar.server.state.configure(document_delay_seconds=delay)
    policy_no = cinar.policy_no()
    body = cinar.document(policy_no).json()
    assert body["success"] is False and body["errorCode"] == "DOC_NOT_READY" and body["message"]
    assert body["data"] == {"retry_after_seconds": said}
    if delay < 1:
        time.sleep(delay + 0.05)
        assert cinar.document(policy_no).json()["success"] is True


def test_police_pdf_of_an_unknown_policy_is_biz_policy_not_found(cinar: CinarClient) -> None:
    body = cinar.document("CN-P-999999").json()
    assert body["success"] is False and body["errorCode"] == "BIZ_POLICY_NOT_FOUND"
    assert cinar.call("police-pdf", {})["errorCode"] == "VAL_POLICE_NO"


def test_police_pdf_of_another_agencys_policy_is_not_found(cinar: CinarClient) -> None:
    policy_no = cinar.policy_no()
    other = cinar.token(("acente2", "cinar-secret-2"))
    assert cinar.document(policy_no, token=other).json()["errorCode"] == "BIZ_POLICY_NOT_FOUND"


def test_police_pdf_needs_a_live_token(cinar: CinarClient) -> None:
    body = cinar.document("CN-P-999999", token="never-issued").json()
    assert body["errorCode"] == "AUTH_TOKEN_EXPIRED"
    assert cinar.server.state.counts()["received"] == {"policy_document": 1}


def test_police_pdf_is_rate_limited_by_the_gateway(cinar: CinarClient) -> None:
    policy_no = cinar.policy_no()
    cinar.server.state.configure(default_rate_per_second=0.5, default_burst=1)
    assert cinar.document(policy_no).json()["success"] is True  # the bucket's one token
    throttled = cinar.document(policy_no)
    assert throttled.status_code == 503 and throttled.headers["Retry-After"].endswith(" GMT")
    assert cinar.server.state.counts()["throttled"] == {"policy_document": 1}


def test_doc_not_ready_fault_says_the_wait_given(cinar: CinarClient) -> None:
    policy_no = cinar.policy_no()
    cinar.server.state.add_faults(
        [{"operation": "policy_document", "fault": "error", "code": "DOC_NOT_READY", "wait_seconds": 4}]
    )
    body = cinar.document(policy_no).json()
    assert body["errorCode"] == "DOC_NOT_READY" and body["data"] == {"retry_after_seconds": 4}
    assert cinar.document(policy_no).json()["success"] is True
    assert cinar.server.state.counts()["faults"] == {"policy_document": 1}


@pytest.mark.parametrize(
    ("fault", "check"),
    [
        ({"fault": "html", "http_status": 502}, lambda r: r.status_code == 502 and "<html>" in r.text),
        ({"fault": "garbage"}, lambda r: r.status_code == 200 and not r.text.rstrip().endswith("}")),
        ({"fault": "empty"}, lambda r: r.status_code == 200 and r.content == b""),
        ({"fault": "error", "code": "SYS_BUSY"}, lambda r: r.json()["errorCode"] == "SYS_BUSY"),
        ({"fault": "latency", "seconds": 0.3}, lambda r: r.json()["success"] is True),
    ],
)
def test_police_pdf_takes_the_common_faults(cinar: CinarClient, fault: dict, check) -> None:
    policy_no = cinar.policy_no()
    cinar.server.state.add_faults([{"operation": "policy_document", **fault}])
    response = cinar.document(policy_no)
    assert check(response), response.text[:300]


def test_police_pdf_reset_fault_drops_the_connection(cinar: CinarClient) -> None:
    policy_no = cinar.policy_no()
    cinar.server.state.add_faults([{"operation": "policy_document", "fault": "reset"}])
    with pytest.raises(requests.ConnectionError):
        cinar.document(policy_no)


@pytest.mark.parametrize("fault", ["document_not_base64", "document_not_pdf"])
def test_broken_document_variants(cinar: CinarClient, fault: str) -> None:
    policy_no = cinar.policy_no()
    cinar.server.state.add_faults([{"operation": "policy_document", "fault": fault}])
    encoded = cinar.document(policy_no).json()["data"]["pdf_base64"]
    if fault == "document_not_base64":
        with pytest.raises(ValueError):
            base64.b64decode(encoded, validate=True)
    else:
        assert not base64.b64decode(encoded, validate=True).startswith(b"%PDF-")
