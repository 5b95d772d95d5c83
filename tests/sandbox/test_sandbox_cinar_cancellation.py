"""Çınar sandbox, police-iptal and uretim-listesi: request_ref, dates as 01.12.2026, codes in HTTP 200."""

from __future__ import annotations

import pytest
import requests

from sandbox import SandboxServer

from .cancellation_wire import EFFECTIVE_ON, REFUND, CinarCancel, seeded

POLICY = "CN-P-IPTAL-1"
CANCELLED = {"police_no": POLICY, "durum": "IPTAL", "iade_prim": REFUND, "iptal_tarihi": "01.12.2026"}


@pytest.fixture
def cinar(servers: dict[str, SandboxServer], http: requests.Session) -> CinarCancel:
    servers["cinar"].state.seed_policies([seeded(POLICY)])
    return CinarCancel(servers["cinar"], http)


def iptal(cinar: CinarCancel, ref: str = "ref-1", **changes: str) -> dict:
    body = {
        "police_no": POLICY,
        "iptal_nedeni": "musteri_talebi",
        "iptal_tarihi": "01.12.2026",
        "request_ref": ref,
        **changes,
    }
    response = cinar.request("police-iptal", body)
    assert response.status_code == 200
    return response.json()


def test_success_data_dates_as_cinar_writes_them(cinar: CinarCancel) -> None:
    assert iptal(cinar) == {"success": True, "data": CANCELLED}
    assert cinar.status_word(POLICY) == "IPTAL"


def test_a_used_request_ref_is_a_duplicate_with_the_data_before_any_other_check(cinar: CinarCancel) -> None:
    """Even with another date and the policy expired since: BIZ_DUPLICATE_REQUEST, data as on success."""
    iptal(cinar)
    cinar.server.state.set_policy_status(POLICY, "EXPIRED")
    again = iptal(cinar, iptal_tarihi="99.99.9999")
    assert (again["success"], again["errorCode"], again["data"]) == (False, "BIZ_DUPLICATE_REQUEST", CANCELLED)


def test_already_cancelled_under_another_ref_carries_the_data(cinar: CinarCancel) -> None:
    iptal(cinar)
    again = iptal(cinar, ref="ref-2", iptal_nedeni="diger")
    assert (again["errorCode"], again["data"]) == ("BIZ_ALREADY_CANCELLED", CANCELLED)


def test_only_a_success_binds_the_ref(cinar: CinarCancel) -> None:
    cinar.server.state.set_policy_status(POLICY, "EXPIRED")
    assert iptal(cinar)["errorCode"] == "BIZ_CANCEL_NOT_ALLOWED"
    cinar.server.state.set_policy_status(POLICY, "ACTIVE")
    assert iptal(cinar)["success"] is True


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"iptal_tarihi": EFFECTIVE_ON}, "VAL_IPTAL_TARIHI"),  # ISO is not Çınar's form
        ({"iptal_tarihi": "31.05.2026"}, "VAL_IPTAL_TARIHI"),  # before the period
        ({"iptal_nedeni": "customer_request"}, "VAL_IPTAL_NEDENI"),
        ({"request_ref": ""}, "VAL_REQUEST_REF"),
        ({"police_no": "CN P 1"}, "VAL_POLICE_NO"),
        ({"police_no": "CN-P-YOK-1"}, "BIZ_POLICY_NOT_FOUND"),
    ],
)
def test_refusal_codes(cinar: CinarCancel, changes: dict, code: str) -> None:
    answer = iptal(cinar, **changes)
    assert (answer["success"], answer["errorCode"]) == (False, code)


def test_a_duplicate_fault_cancels_first_and_carries_the_data(cinar: CinarCancel) -> None:
    cinar.server.state.add_faults([{"operation": "cancel_policy", "fault": "error", "code": "BIZ_DUPLICATE_REQUEST"}])
    answer = iptal(cinar)
    assert (answer["errorCode"], answer["data"]) == ("BIZ_DUPLICATE_REQUEST", CANCELLED)


def test_uretim_listesi_data_and_refusals(cinar: CinarCancel) -> None:
    body = cinar.request("uretim-listesi", {"baslangic": "01.05.2026", "bitis": "31.05.2026", "sayfa": 1}).json()
    assert body["data"]["sayfa"] == 1 and body["data"]["toplam_sayfa"] == 1
    assert body["data"]["policeler"] == [
        {
            "police_no": POLICY,
            "teklif_no": "",
            "brans": "trafik",
            "durum": "AKTIF",
            "baslangic": "01.06.2026",
            "bitis": "01.06.2027",
            "prim": "1629.27",
        }
    ]
    for bad in ({"baslangic": "2026-05-01", "bitis": "31.05.2026"}, {"baslangic": "01.05.2026"}):
        assert cinar.request("uretim-listesi", bad).json()["errorCode"] == "VAL_TARIH"
    empty = cinar.request("uretim-listesi", {"baslangic": "01.01.2020", "bitis": "01.01.2020", "sayfa": 1}).json()
    assert empty["data"] == {"policeler": [], "sayfa": 1, "toplam_sayfa": 0}
