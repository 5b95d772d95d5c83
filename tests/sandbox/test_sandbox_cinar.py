"""Çınar sandbox: errors inside HTTP 200, expiring bearer tokens, request_ref dedup, gateway 503."""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime

import pytest

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
    assert status == {"police_no": issued["data"]["police_no"], "durum": "AKTIF"}


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
