"""Inputs and tiny wire clients for the sandbox's own tests.

The clients are written from the contract (CONTRACTS.md), not from the sandbox's code, so
the tests read as "send this on the wire, expect that back".
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any
from xml.sax.saxutils import escape

import defusedxml.ElementTree as SafeET
import requests

from sandbox import SandboxServer, building_id_for

TCKN = "10000000146"
OTHER_TCKN = "17291716060"
VKN = "4540536920"
YEAR = datetime.now(UTC).year

TRAFIK = {"plate": "34ABC123", "owner_id": TCKN, "registration_serial": "AB123456", "usage": "private"}
KASKO = {**TRAFIK, "model_year": YEAR - 3, "brand_code": "012", "model_code": "345"}
UAVT = "1234567890"
DASK_BASE = {
    "uavt_code": UAVT,
    "construction_type": "reinforced_concrete",
    "construction_year": 2005,
    "floor_count": 5,
    "gross_m2": 120,
    "damage_status": "none",
    "owner_id": TCKN,
}


def dask(code: str, **changes: Any) -> dict[str, Any]:
    """DASK quote input with the building id the insurer's address call returns."""
    fields = {**DASK_BASE, **changes}
    fields.setdefault("building_id", building_id_for(code, fields["uavt_code"]))
    return fields


class AnkaClient:
    code = "anka"

    def __init__(self, server: SandboxServer, http: requests.Session) -> None:
        self.server, self.http, self.url = server, http, server.base_url

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        api_key: str | None = "anka-key-acente1",
        headers: dict[str, str] | None = None,
        timeout: float = 5,
        **kw: Any,
    ) -> requests.Response:
        all_headers = {"X-Api-Key": api_key} if api_key else {}
        all_headers.update(headers or {})
        return self.http.request(method, self.url + path, json=json, headers=all_headers, timeout=timeout, **kw)

    def trafik_quote(self, fields: dict[str, Any] | None = None, **kw: Any) -> requests.Response:
        return self.request("POST", "/v1/quotes/trafik", json=fields or TRAFIK, **kw)

    def quote_no(self, **kw: Any) -> str:
        response = self.trafik_quote(**kw)
        assert response.status_code == 200, response.text
        return response.json()["quote_no"]

    def issue(self, quote_no: str, *, key: str = "idem-1", card: str = "tok_ok", **kw: Any) -> requests.Response:
        return self.request(
            "POST",
            "/v1/policies",
            json={"quote_no": quote_no, "payment_token": card},
            headers={"Idempotency-Key": key},
            **kw,
        )

    def policy_no(self, **kw: Any) -> str:
        """A freshly issued policy's number."""
        response = self.issue(self.quote_no(**kw), key=f"idem-{time.monotonic_ns()}", **kw)
        assert response.status_code == 201, response.text
        return response.json()["policy_no"]

    def document(self, policy_no: str, **kw: Any) -> requests.Response:
        return self.request("GET", f"/v1/policies/{policy_no}/document", **kw)


BOGAZICI_ELEMENTS = {
    "plate": "Plaka",
    "owner_id": "KimlikNo",
    "registration_serial": "BelgeSeriNo",
    "usage": "KullanimTarzi",
    "model_year": "ModelYili",
    "brand_code": "MarkaKodu",
    "model_code": "TipKodu",
    "uavt_code": "UavtKodu",
    "building_id": "BinaNo",
    "construction_type": "YapiTarzi",
    "construction_year": "InsaYili",
    "floor_count": "KatSayisi",
    "gross_m2": "BrutM2",
    "damage_status": "HasarDurumu",
    "quote_no": "TeklifNo",
    "payment_token": "OdemeToken",
    "policy_no": "PoliceNo",
}


class BogaziciClient:
    code = "bogazici"
    B = "{urn:bogazici}"

    def __init__(self, server: SandboxServer, http: requests.Session) -> None:
        self.server, self.http, self.url = server, http, server.base_url

    @staticmethod
    def envelope(islem: str, elements: dict[str, Any], login: tuple[str, str]) -> bytes:
        user, password = login
        items = "".join(f"<b:{name}>{escape(str(value))}</b:{name}>" for name, value in elements.items())
        return (
            '<?xml version="1.0" encoding="utf-8"?>'
            '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:b="urn:bogazici">'
            f"<soap:Header><b:Kimlik><b:Kullanici>{user}</b:Kullanici><b:Sifre>{password}</b:Sifre></b:Kimlik></soap:Header>"
            f"<soap:Body><b:{islem}>{items}</b:{islem}></soap:Body></soap:Envelope>"
        ).encode()

    def request(
        self,
        islem: str,
        fields: dict[str, Any] | None = None,
        *,
        login: tuple[str, str] = ("acente1", "bogazici-pass-1"),
        action: str | None = None,
        body: bytes | None = None,
        timeout: float = 5,
        path: str = "/ws/AcenteService.asmx",
    ) -> requests.Response:
        elements = {BOGAZICI_ELEMENTS.get(k, k): v for k, v in (fields or {}).items()}
        headers = {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": f'"urn:bogazici:{action or islem}"'}
        payload = body if body is not None else self.envelope(islem, elements, login)
        return self.http.post(self.url + path, data=payload, headers=headers, timeout=timeout)

    def result(self, response: requests.Response) -> dict[str, Any]:
        assert response.status_code == 200, response.text
        root = SafeET.fromstring(response.content)
        sonuc = root.find(f".//{self.B}IslemSonuc")
        assert sonuc is not None, response.text
        out: dict[str, Any] = {}
        for child in sonuc:
            name = child.tag.removeprefix(self.B)
            if name in ("Teminatlar", "Taksitler"):
                # A <Teminat>/<Taksit> with children becomes a dict of them; an older bare one, its text.
                out[name] = [
                    {part.tag.removeprefix(self.B): part.text for part in item} if len(item) else item.text
                    for item in child
                ]
            else:
                out[name] = child.text
        return out

    def call(self, islem: str, fields: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        return self.result(self.request(islem, fields, **kw))

    def trafik_quote(self, fields: dict[str, Any] | None = None, **kw: Any) -> requests.Response:
        return self.request("TrafikTeklif", fields or TRAFIK, **kw)

    def quote_no(self, **kw: Any) -> str:
        result = self.call("TrafikTeklif", TRAFIK, **kw)
        assert result["Basarili"] == "true", result
        return result["TeklifNo"]

    def issue(self, quote_no: str, *, card: str = "tok_ok", **kw: Any) -> requests.Response:
        return self.request("Policelestir", {"quote_no": quote_no, "payment_token": card}, **kw)

    def policy_no(self, **kw: Any) -> str:
        """A freshly issued policy's number."""
        result = self.result(self.issue(self.quote_no(**kw), **kw))
        assert result["Basarili"] == "true", result
        return result["PoliceNo"]

    def document(self, policy_no: str, **kw: Any) -> requests.Response:
        return self.request("PoliceBasim", {"policy_no": policy_no}, **kw)


CINAR_FIELDS = {
    "plate": "plaka",
    "owner_id": "kimlik_no",
    "registration_serial": "belge_seri_no",
    "usage": "kullanim",
    "model_year": "model_yili",
    "brand_code": "marka_kodu",
    "model_code": "tip_kodu",
    "uavt_code": "uavt_kodu",
    "building_id": "bina_no",
    "construction_type": "yapi_tarzi",
    "construction_year": "insa_yili",
    "floor_count": "kat_sayisi",
    "gross_m2": "brut_m2",
    "damage_status": "hasar_durumu",
    "quote_no": "teklif_no",
    "payment_token": "odeme_token",
    "policy_no": "police_no",
}


def cinar_body(fields: dict[str, Any]) -> dict[str, Any]:
    return {CINAR_FIELDS.get(k, k): v for k, v in fields.items()}


class CinarClient:
    code = "cinar"

    def __init__(self, server: SandboxServer, http: requests.Session) -> None:
        self.server, self.http, self.url = server, http, server.base_url
        self._token: str | None = None

    def token_response(self, client: tuple[str, str] = ("acente1", "cinar-secret-1"), **kw: Any) -> requests.Response:
        return self.http.post(
            self.url + "/api/v2/token",
            json={"client_id": client[0], "client_secret": client[1]},
            timeout=kw.pop("timeout", 5),
            **kw,
        )

    def token(self, client: tuple[str, str] = ("acente1", "cinar-secret-1")) -> str:
        response = self.token_response(client)
        assert response.status_code == 200 and "access_token" in response.json(), response.text
        return response.json()["access_token"]

    def request(
        self, islem: str, body: dict[str, Any], *, token: str | None = None, timeout: float = 5
    ) -> requests.Response:
        if token is None:
            self._token = self._token or self.token()
            token = self._token
        return self.http.post(
            self.url + f"/api/v2/{islem}", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=timeout
        )

    def call(self, islem: str, fields: dict[str, Any], **kw: Any) -> dict[str, Any]:
        response = self.request(islem, cinar_body(fields), **kw)
        assert response.status_code == 200, response.text
        return response.json()

    def trafik_quote(self, fields: dict[str, Any] | None = None, **kw: Any) -> requests.Response:
        return self.request("trafik-teklif", cinar_body(fields or TRAFIK), **kw)

    def quote_no(self, **kw: Any) -> str:
        body = self.call("trafik-teklif", TRAFIK, **kw)
        assert body["success"], body
        return body["data"]["teklif_no"]

    def issue(self, quote_no: str, *, ref: str = "ref-1", card: str = "tok_ok", **kw: Any) -> requests.Response:
        return self.request("police-olustur", {"teklif_no": quote_no, "odeme_token": card, "request_ref": ref}, **kw)

    def policy_no(self, **kw: Any) -> str:
        """A freshly issued policy's number."""
        body = self.issue(self.quote_no(**kw), ref=f"ref-{time.monotonic_ns()}", **kw).json()
        assert body["success"], body
        return body["data"]["police_no"]

    def document(self, policy_no: str, **kw: Any) -> requests.Response:
        return self.request("police-pdf", {"police_no": policy_no}, **kw)


class DenizClient:
    code = "deniz"

    def __init__(self, server: SandboxServer, http: requests.Session) -> None:
        self.server, self.http, self.url = server, http, server.base_url

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        auth: tuple[str, str] | None = ("acente1", "deniz-pass-1"),
        params: dict[str, str] | None = None,
        timeout: float = 5,
        allow_redirects: bool = False,
    ) -> requests.Response:
        # Redirects are never followed here: a test sees the 303 and decides what to send next.
        return self.http.request(
            method,
            self.url + path,
            json=json,
            auth=auth,
            params=params,
            timeout=timeout,
            allow_redirects=allow_redirects,
        )

    @staticmethod
    def quote_body(product: str, fields: dict[str, Any]) -> dict[str, Any]:
        risk = {k: v for k, v in fields.items() if k != "owner_id"}
        return {"product": product, "insured": {"owner_id": fields["owner_id"]}, "risk": risk}

    def quote(self, product: str, fields: dict[str, Any], **kw: Any) -> requests.Response:
        return self.request("POST", "/quotes", json=self.quote_body(product, fields), **kw)

    def trafik_quote(self, fields: dict[str, Any] | None = None, **kw: Any) -> requests.Response:
        return self.quote("TRAFIK", fields or TRAFIK, **kw)

    def quote_no(self, **kw: Any) -> str:
        response = self.trafik_quote(**kw)
        assert response.status_code == 200, response.text
        return response.json()["quote_id"]

    def issue(self, quote_no: str, *, ref: str = "ref-1", card: str = "tok_ok", **kw: Any) -> requests.Response:
        body = {"quote_id": quote_no, "payment_token": card, "client_reference": ref}
        return self.request("POST", "/policy-requests", json=body, **kw)

    def wait_for(self, request_id: str, timeout: float = 3.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            body = self.request("GET", f"/policy-requests/{request_id}").json()
            if body["status"] != "PROCESSING" or time.monotonic() > deadline:
                return body
            time.sleep(0.02)

    def policy_no(self, **kw: Any) -> str:
        """A freshly issued policy's number (quote, 202, polled to ISSUED)."""
        kw.setdefault("ref", f"ref-{time.monotonic_ns()}")
        request_id = self.issue(self.quote_no(), **kw).json()["request_id"]
        issued = self.wait_for(request_id)
        assert issued["status"] == "ISSUED", issued
        return issued["policy_no"]

    def document(self, policy_no: str, **kw: Any) -> requests.Response:
        """``GET /policies/{no}/document``: 303 to a link, 202 GENERATING, or an error."""
        return self.request("GET", f"/policies/{policy_no}/document", **kw)

    def download(self, location: str, **kw: Any) -> requests.Response:
        """Fetch a document link, without credentials (the contract says it needs none)."""
        kw.setdefault("auth", None)
        return self.request("GET", location, **kw)


CLIENTS = {"anka": AnkaClient, "bogazici": BogaziciClient, "cinar": CinarClient, "deniz": DenizClient}
