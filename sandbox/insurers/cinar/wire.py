"""Çınar Sigorta's wire, by hand from CONTRACTS.md: the benchmarks' baseline, the contract tests' client.

Not the sandbox's code (the package beside) nor the platform's adapter: see `sandbox/hand_wire.py`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

import requests

from sandbox.hand_wire import TRAFIK, Answer, Cancelled, Page, Wire, json_of, send
from sandbox.server import SandboxServer

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


def _dotted(value: str) -> str:
    """An ISO date as Çınar writes it (a malformed one rearranged as it is, for Çınar to refuse)."""
    parts = value.split("-")
    return ".".join(reversed(parts)) if len(parts) == 3 else value


def _iso(value: str | None) -> str | None:
    return None if value is None else datetime.strptime(value, "%d.%m.%Y").date().isoformat()


class CinarWire(Wire):
    """A bearer token fetched once up front (setup, not a business call) and kept."""

    code = "cinar"

    def __init__(self, base_url: str, credentials: Mapping[str, str]) -> None:
        super().__init__(base_url, credentials)
        self._token = ""
        self._lock = threading.Lock()

    def prepare(self) -> None:
        self.token()

    def token(self) -> str:
        with self._lock:
            if not self._token:
                response = send("POST", f"{self.base_url}/api/v2/token", json=self.credentials)
                body = json_of(response) if not isinstance(response, Answer) else None
                if isinstance(body, dict) and body.get("access_token"):
                    self._token = str(body["access_token"])
            return self._token

    def _call(self, islem: str, body: Mapping[str, Any]) -> Answer:
        response = send(
            "POST",
            f"{self.base_url}/api/v2/{islem}",
            json=dict(body),
            headers={"Authorization": f"Bearer {self.token()}"},
        )
        if isinstance(response, Answer):
            return response
        payload = json_of(response)
        if response.status_code == 200 and isinstance(payload, dict) and payload.get("success") is True:
            return Answer(True, 200)
        code = payload.get("errorCode") if isinstance(payload, dict) else None
        return Answer(False, response.status_code, str(code or f"HTTP_{response.status_code}"))

    def trafik_quote(self, fields: Mapping[str, Any]) -> Answer:
        return self._call(
            "trafik-teklif", {CINAR_FIELDS[k]: fields[k] for k in ("plate", "owner_id", "registration_serial", "usage")}
        )

    def policy_status(self, policy_no: str) -> Answer:
        return self._call("police-durum", {"police_no": policy_no})


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

    # What the shared contract tests need to know of Çınar's words (sandbox/hand_wire.py).
    content_type = "application/json"
    status_words: ClassVar[dict[str, str]] = {"ACTIVE": "AKTIF", "CANCELLED": "IPTAL", "EXPIRED": "BITTI"}

    def succeeded(self, response: requests.Response) -> bool:
        return response.status_code == 200 and response.json()["success"] is True

    def is_throttle_signal(self, response: requests.Response) -> bool:
        return response.status_code == 503 and response.headers["Retry-After"].endswith("GMT")

    def parse(self, content: bytes) -> Any:
        return json.loads(content)

    def status_word(self, policy_no: str) -> str | None:
        body = self.call("police-durum", {"policy_no": policy_no})
        return body["data"]["durum"] if body["success"] else None

    def calls_as(self, credentials: Mapping[str, str], count: int) -> list[requests.Response]:
        """The token is one of the `count` calls: Çınar counts it against the account too."""
        token = self.token((credentials["client_id"], credentials["client_secret"]))
        return [self.trafik_quote(token=token) for _ in range(count - 1)]


class CinarCancel(CinarClient):
    invalid_reason, claim_refusal, internal_error = "VAL_IPTAL_NEDENI", "BIZ_CANCEL_NOT_ALLOWED", "SYS_BUSY"
    reasons = {
        "vehicle_sold": "arac_satisi",
        "customer_request": "musteri_talebi",
        "duplicate": "mukerrer",
        "other": "diger",
    }
    not_found, invalid, not_allowed = "BIZ_POLICY_NOT_FOUND", "VAL_IPTAL_TARIHI", "BIZ_CANCEL_NOT_ALLOWED"
    already = "BIZ_ALREADY_CANCELLED"
    repeat = "BIZ_DUPLICATE_REQUEST"
    range_invalid = "VAL_TARIH"
    statuses = {"AKTIF": "ACTIVE", "IPTAL": "CANCELLED", "BITTI": "EXPIRED"}

    def cancel_response(
        self, policy_no: str, reason: str, effective_on: str, *, ref: str, dotted: bool = True, **kw: Any
    ) -> requests.Response:
        body = {
            "police_no": policy_no,
            "iptal_nedeni": reason,
            "iptal_tarihi": _dotted(effective_on) if dotted else effective_on,
            "request_ref": ref,
        }
        return self.request("police-iptal", body, **kw)

    def cancel(self, policy_no: str, reason: str, effective_on: str, *, ref: str, **kw: Any) -> Cancelled:
        response = self.cancel_response(policy_no, self.reasons.get(reason, reason), effective_on, ref=ref, **kw)
        assert response.status_code == 200, response.text
        body = response.json()
        data = body.get("data")
        carried = None
        if isinstance(data, dict) and "iade_prim" in data:
            assert data["durum"] == "IPTAL", body
            carried = {
                "policy_no": data["police_no"],
                "refund": data["iade_prim"],
                "cancelled_on": _iso(data["iptal_tarihi"]),
            }
        return Cancelled("OK" if body["success"] else body["errorCode"], carried, body)

    def list_response(self, issued_from: str, issued_to: str, page: Any = 1, **kw: Any) -> requests.Response:
        body = {"baslangic": _dotted(issued_from), "bitis": _dotted(issued_to), "sayfa": page}
        return self.request("uretim-listesi", body, **kw)

    def list_page(self, issued_from: str, issued_to: str, position: Any = None, **kw: Any) -> Page:
        page = position or 1
        response = self.list_response(issued_from, issued_to, page, **kw)
        assert response.status_code == 200, response.text
        body = response.json()
        if not body["success"]:
            return Page(body["errorCode"])
        data = body["data"]
        items = [
            {
                "policy_no": item["police_no"],
                "quote_no": item["teklif_no"],
                "product": item["brans"],
                "status": self.statuses[item["durum"]],
                "starts_on": _iso(item["baslangic"]),
                "ends_on": _iso(item["bitis"]),
                "premium": item["prim"],
            }
            for item in data["policeler"]
        ]
        return Page("OK", items, page + 1 if page < data["toplam_sayfa"] else None)


BENCH, CLIENT, CANCEL = CinarWire, CinarClient, CinarCancel
