"""Boğaziçi sandbox, PoliceIptal and UretimListesi: BS-330 with the first result, no deduplication."""

from __future__ import annotations

import pytest
import requests

from sandbox import SandboxServer

from .cancellation_wire import EFFECTIVE_ON, LIST_FROM, LIST_TO, PREMIUM, REFUND, BogaziciCancel, seeded

POLICY = "BG-P-IPTAL-1"


@pytest.fixture
def bogazici(servers: dict[str, SandboxServer], http: requests.Session) -> BogaziciCancel:
    servers["bogazici"].state.seed_policies([seeded(POLICY)])
    return BogaziciCancel(servers["bogazici"], http)


def iptal(bogazici: BogaziciCancel, **changes: str) -> dict:
    fields = {"IptalNedeni": "SIGORTALI_TALEBI", "IptalTarihi": EFFECTIVE_ON, **changes}
    return bogazici.result(bogazici.cancel_response(POLICY, fields["IptalNedeni"], fields["IptalTarihi"]))


def test_success_elements(bogazici: BogaziciCancel) -> None:
    assert iptal(bogazici) == {
        "Basarili": "true",
        "HataKodu": None,
        "HataMesaji": None,
        "PoliceNo": POLICY,
        "Durum": "IPTAL",
        "IadePrim": REFUND,
        "IptalTarihi": EFFECTIVE_ON,
    }


def test_a_second_police_iptal_only_answers_bs_330_with_the_success_elements(bogazici: BogaziciCancel) -> None:
    first = iptal(bogazici)
    again = iptal(bogazici, IptalNedeni="ARAC_SATIS", IptalTarihi="2027-02-01")
    assert (again["Basarili"], again["HataKodu"], again["HataMesaji"]) == ("false", "BS-330", "Poliçe zaten iptal")
    assert {key: again[key] for key in ("PoliceNo", "Durum", "IadePrim", "IptalTarihi")} == {
        key: first[key] for key in ("PoliceNo", "Durum", "IadePrim", "IptalTarihi")
    }
    assert bogazici.server.state.counts()["cancellations_by_policy"] == {POLICY: 1}


@pytest.mark.parametrize(
    ("changes", "element"),
    [
        ({"IptalNedeni": "customer_request"}, "IptalNedeni"),  # the platform's word is not Boğaziçi's
        ({"IptalTarihi": "2026-05-31"}, "IptalTarihi"),
        ({"IptalTarihi": "01.12.2026"}, "IptalTarihi"),
    ],
)
def test_bs_100_names_the_element(bogazici: BogaziciCancel, changes: dict, element: str) -> None:
    result = iptal(bogazici, **changes)
    assert result["HataKodu"] == "BS-100" and element in result["HataMesaji"]


def test_bs_340_for_a_dask_policy_with_an_open_claim(bogazici: BogaziciCancel) -> None:
    bogazici.server.state.seed_policies([seeded("BG-P-DASK-1", product="dask", open_claim=True)])
    result = bogazici.result(bogazici.cancel_response("BG-P-DASK-1", "DIGER", EFFECTIVE_ON))
    assert (result["HataKodu"], result["HataMesaji"].split(":")[0]) == ("BS-340", "Poliçe iptal edilemez")


def test_a_bs_330_fault_cancels_first_and_carries_the_elements(bogazici: BogaziciCancel) -> None:
    bogazici.server.state.add_faults([{"operation": "cancel_policy", "fault": "error", "code": "BS-330"}])
    result = iptal(bogazici)
    assert (result["HataKodu"], result["IadePrim"]) == ("BS-330", REFUND)


def test_uretim_listesi_elements_and_pages(bogazici: BogaziciCancel) -> None:
    result = bogazici.call("UretimListesi", {"BaslangicTarihi": LIST_FROM, "BitisTarihi": LIST_TO, "Sayfa": 1})
    assert (result["Basarili"], result["Sayfa"], result["ToplamSayfa"]) == ("true", "1", "1")
    page = bogazici.list_page(LIST_FROM, LIST_TO)
    assert page.items == [
        {
            "policy_no": POLICY,
            "quote_no": "",
            "product": "trafik",
            "status": "ACTIVE",
            "starts_on": "2026-06-01",
            "ends_on": "2027-06-01",
            "premium": PREMIUM,
        }
    ]
    empty = bogazici.call("UretimListesi", {"BaslangicTarihi": "2020-01-01", "BitisTarihi": "2020-01-02", "Sayfa": 1})
    assert empty["ToplamSayfa"] == "0"


def test_uretim_listesi_refusals_name_the_element(bogazici: BogaziciCancel) -> None:
    reversed_range = bogazici.call("UretimListesi", {"BaslangicTarihi": LIST_TO, "BitisTarihi": LIST_FROM})
    assert reversed_range["HataKodu"] == "BS-100" and "BitisTarihi" in reversed_range["HataMesaji"]
    bad_page = bogazici.call("UretimListesi", {"BaslangicTarihi": LIST_FROM, "BitisTarihi": LIST_TO, "Sayfa": "bir"})
    assert bad_page["HataKodu"] == "BS-100" and "Sayfa" in bad_page["HataMesaji"]
