"""Boğaziçi Sigorta's wire, by hand from CONTRACTS.md: the benchmarks' baseline, the contract tests' client.

Not the sandbox's code (the package beside) nor the platform's adapter: see `sandbox/hand_wire.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from xml.sax.saxutils import escape

import defusedxml.ElementTree as SafeET
import requests

from sandbox.hand_wire import TRAFIK, Answer, Cancelled, Page, Wire, send
from sandbox.server import SandboxServer

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


class BogaziciWire(Wire):
    code = "bogazici"
    NS = "{urn:bogazici}"

    def _call(self, islem: str, fields: Mapping[str, Any]) -> Answer:
        items = "".join(
            f"<b:{BOGAZICI_ELEMENTS[k]}>{escape(str(v))}</b:{BOGAZICI_ELEMENTS[k]}>" for k, v in fields.items()
        )
        envelope = (
            '<?xml version="1.0" encoding="utf-8"?>'
            '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:b="urn:bogazici">'
            f"<soap:Header><b:Kimlik><b:Kullanici>{escape(self.credentials['username'])}</b:Kullanici>"
            f"<b:Sifre>{escape(self.credentials['password'])}</b:Sifre></b:Kimlik></soap:Header>"
            f"<soap:Body><b:{islem}>{items}</b:{islem}></soap:Body></soap:Envelope>"
        ).encode()
        headers = {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": f'"urn:bogazici:{islem}"'}
        response = send("POST", f"{self.base_url}/ws/AcenteService.asmx", data=envelope, headers=headers)
        if isinstance(response, Answer):
            return response
        if response.status_code != 200:
            return Answer(False, response.status_code, f"HTTP_{response.status_code}")
        try:
            root = SafeET.fromstring(response.content)
        except Exception:
            return Answer(False, 200, "UNREADABLE")
        ok = root.find(f".//{self.NS}Basarili")
        if ok is not None and ok.text == "true":
            return Answer(True, 200)
        code = root.find(f".//{self.NS}HataKodu")
        return Answer(False, 200, code.text if code is not None and code.text else "UNREADABLE")

    def trafik_quote(self, fields: Mapping[str, Any]) -> Answer:
        return self._call("TrafikTeklif", {k: fields[k] for k in ("plate", "owner_id", "registration_serial", "usage")})

    def policy_status(self, policy_no: str) -> Answer:
        return self._call("PoliceSorgu", {"policy_no": policy_no})


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

    # What the shared contract tests need to know of Boğaziçi's words (sandbox/hand_wire.py).
    content_type = "text/xml; charset=utf-8"
    status_words: ClassVar[dict[str, str]] = {"ACTIVE": "YURURLUKTE", "CANCELLED": "IPTAL", "EXPIRED": "SURESI_DOLDU"}

    def succeeded(self, response: requests.Response) -> bool:
        """Boğaziçi answers 200 either way; the envelope says whether it worked."""
        return self.result(response)["Basarili"] == "true"

    def is_throttle_signal(self, response: requests.Response) -> bool:
        return response.status_code == 200 and b"<HataKodu>BS-901</HataKodu>" in response.content

    def parse(self, content: bytes) -> Any:
        return SafeET.fromstring(content)

    def status_word(self, policy_no: str) -> str | None:
        return self.call("PoliceSorgu", {"policy_no": policy_no}).get("Durum")

    def calls_as(self, credentials: Mapping[str, str], count: int) -> list[requests.Response]:
        login = (credentials["username"], credentials["password"])
        return [self.trafik_quote(login=login) for _ in range(count)]


class BogaziciCancel(BogaziciClient):
    invalid_reason, claim_refusal, internal_error = "BS-100", "BS-340", "BS-902"
    reasons = {
        "vehicle_sold": "ARAC_SATIS",
        "customer_request": "SIGORTALI_TALEBI",
        "duplicate": "MUKERRER",
        "other": "DIGER",
    }
    not_found, invalid, not_allowed, already = "BS-404", "BS-100", "BS-340", "BS-330"
    repeat = "BS-330"  # no deduplication: a second PoliceIptal only answers "already cancelled"
    range_invalid = "BS-100"
    statuses = {"YURURLUKTE": "ACTIVE", "IPTAL": "CANCELLED", "SURESI_DOLDU": "EXPIRED"}

    def cancel_response(self, policy_no: str, reason: str, effective_on: str, *, ref: str = "", **kw: Any) -> Any:
        elements = {"PoliceNo": policy_no, "IptalNedeni": reason, "IptalTarihi": effective_on}
        return self.request("PoliceIptal", elements, **kw)

    def cancel(self, policy_no: str, reason: str, effective_on: str, *, ref: str = "", **kw: Any) -> Cancelled:
        result = self.result(self.cancel_response(policy_no, self.reasons.get(reason, reason), effective_on, **kw))
        code = "OK" if result["Basarili"] == "true" else result["HataKodu"]
        carried = None
        if "IadePrim" in result:
            assert result["Durum"] == "IPTAL", result
            carried = {
                "policy_no": result["PoliceNo"],
                "refund": result["IadePrim"],
                "cancelled_on": result["IptalTarihi"],
            }
        return Cancelled(code, carried, result)

    def list_response(self, issued_from: str, issued_to: str, page: Any = 1, **kw: Any) -> Any:
        elements = {"BaslangicTarihi": issued_from, "BitisTarihi": issued_to, "Sayfa": page}
        return self.request("UretimListesi", elements, **kw)

    def list_page(self, issued_from: str, issued_to: str, position: Any = None, **kw: Any) -> Page:
        page = position or 1
        response = self.list_response(issued_from, issued_to, page, **kw)
        assert response.status_code == 200, response.text
        root = SafeET.fromstring(response.content)
        sonuc = root.find(f".//{self.B}IslemSonuc")
        assert sonuc is not None, response.text
        if sonuc.findtext(f"{self.B}Basarili") != "true":
            return Page(sonuc.findtext(f"{self.B}HataKodu", ""))
        policeler = sonuc.find(f"{self.B}Policeler")
        assert policeler is not None, response.text
        items = []
        for police in policeler:
            text = {child.tag.removeprefix(self.B): child.text or "" for child in police}
            items.append(
                {
                    "policy_no": text["PoliceNo"],
                    "quote_no": text["TeklifNo"] or "",
                    "product": text["Brans"].lower(),
                    "status": self.statuses[text["Durum"]],
                    "starts_on": text["BaslangicTarihi"],
                    "ends_on": text["BitisTarihi"],
                    "premium": text["BrutPrim"],
                }
            )
        pages = int(sonuc.findtext(f"{self.B}ToplamSayfa", ""))
        return Page("OK", items, page + 1 if page < pages else None)


BENCH, CLIENT, CANCEL = BogaziciWire, BogaziciClient, BogaziciCancel
