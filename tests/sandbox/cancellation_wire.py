"""Wire clients for cancellation and the production list, written from the contract's last two
sections (CONTRACTS.md, "Cancellation" and "Production list"), on top of `sandbox_wire`'s.

Each client speaks its insurer's wire (`cancel_response`, `list_response`) and reads the answer
back into one shape, so that the behaviour every insurer shares is tested once:

- `cancel(...)` -> `Answer(code, result)`: `code` is "OK" for a success, else the insurer's own
  code (`ALREADY_CANCELLED`, `BS-330`, `BIZ_DUPLICATE_REQUEST`, ...); `result` is the
  cancellation an answer carries, as `{"policy_no", "refund", "cancelled_on"}` (ISO date);
- `list_page(...)` -> `Page(code, items, following)`: the items in the platform's words and
  what the next page is asked by (None after the last);
- `status_word(policy_no)`: the policy's status as `policy_status` says it on the wire.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import defusedxml.ElementTree as SafeET
import requests

from .sandbox_wire import AnkaClient, BogaziciClient, CinarClient, DenizClient

# The contract's example: 1629.27 TRY over 2026-06-01 .. 2027-06-01 (365 days), cancelled from
# 2026-12-01 (182 days left): 1629.27 x 182 / 365 = 812.3997, half-up 812.40.
PREMIUM = "1629.27"
STARTS_ON, ENDS_ON = "2026-06-01", "2027-06-01"
EFFECTIVE_ON = "2026-12-01"
REFUND = "812.40"
ISSUED_ON = "2026-05-31"
LIST_FROM, LIST_TO = "2026-05-01", "2026-05-31"

CANCELLED_WORDS = {"anka": "CANCELLED", "bogazici": "IPTAL", "cinar": "IPTAL", "deniz": "CANCELLED"}


def seeded(policy_no: str, **changes: Any) -> dict[str, Any]:
    """A policy of ACENTE1's issued on the insurer's portal (no quote of ours), as the control API takes it."""
    return {
        "policy_no": policy_no,
        "status": "ACTIVE",
        "agency": "ACENTE1",
        "product": "trafik",
        "premium": PREMIUM,
        "starts_on": STARTS_ON,
        "ends_on": ENDS_ON,
        "issued_on": ISSUED_ON,
        **changes,
    }


@dataclass
class Answer:
    code: str
    result: dict[str, str] | None = None
    raw: Any = None


@dataclass
class Page:
    code: str
    items: list[dict[str, Any]] = field(default_factory=list)
    following: Any = None


def _dotted(value: str) -> str:
    """An ISO date as Çınar writes it (a malformed one rearranged as it is, for Çınar to refuse)."""
    parts = value.split("-")
    return ".".join(reversed(parts)) if len(parts) == 3 else value


def _iso(value: str | None) -> str | None:
    return None if value is None else datetime.strptime(value, "%d.%m.%Y").date().isoformat()


class AnkaCancel(AnkaClient):
    reasons = {reason: reason for reason in ("vehicle_sold", "customer_request", "duplicate", "other")}
    not_found, invalid, not_allowed, already = "NOT_FOUND", "VALIDATION", "CANCEL_NOT_ALLOWED", "ALREADY_CANCELLED"
    repeat = "OK"  # a replay is the first answer again
    range_invalid = "VALIDATION"

    def cancel_response(
        self, policy_no: str, reason: str, effective_on: str, *, ref: str, **kw: Any
    ) -> requests.Response:
        body = {"reason": reason, "effective_on": effective_on}
        headers = {"Idempotency-Key": ref} if ref else {}
        return self.request("POST", f"/v1/policies/{policy_no}/cancellation", json=body, headers=headers, **kw)

    def cancel(self, policy_no: str, reason: str, effective_on: str, *, ref: str, **kw: Any) -> Answer:
        response = self.cancel_response(policy_no, self.reasons.get(reason, reason), effective_on, ref=ref, **kw)
        body = response.json()
        if response.status_code == 200:
            return Answer("OK", self._result(body), body)
        return Answer(
            body["error"]["code"], self._result(body["cancellation"]) if "cancellation" in body else None, body
        )

    @staticmethod
    def _result(body: dict[str, Any]) -> dict[str, str]:
        assert body["status"] == "CANCELLED", body
        return {"policy_no": body["policy_no"], "refund": body["refund"], "cancelled_on": body["cancelled_on"]}

    def list_response(self, issued_from: str, issued_to: str, page: Any = 1, **kw: Any) -> requests.Response:
        params = {"issued_from": issued_from, "issued_to": issued_to, "page": page}
        return self.request("GET", "/v1/policies", params=params, **kw)

    def list_page(self, issued_from: str, issued_to: str, position: Any = None, **kw: Any) -> Page:
        page = position or 1
        response = self.list_response(issued_from, issued_to, page, **kw)
        body = response.json()
        if response.status_code != 200:
            return Page(body["error"]["code"])
        assert body["page"] == page
        return Page("OK", body["items"], page + 1 if page < body["pages"] else None)

    def status_word(self, policy_no: str) -> str:
        return self.request("GET", f"/v1/policies/{policy_no}").json()["status"]


class BogaziciCancel(BogaziciClient):
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

    def cancel(self, policy_no: str, reason: str, effective_on: str, *, ref: str = "", **kw: Any) -> Answer:
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
        return Answer(code, carried, result)

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

    def status_word(self, policy_no: str) -> str:
        return self.call("PoliceSorgu", {"policy_no": policy_no})["Durum"]


class CinarCancel(CinarClient):
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

    def cancel(self, policy_no: str, reason: str, effective_on: str, *, ref: str, **kw: Any) -> Answer:
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
        return Answer("OK" if body["success"] else body["errorCode"], carried, body)

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

    def status_word(self, policy_no: str) -> str:
        return self.call("police-durum", {"policy_no": policy_no})["data"]["durum"]


class DenizCancel(DenizClient):
    reasons = {
        "vehicle_sold": "VEHICLE_SOLD",
        "customer_request": "CUSTOMER_REQUEST",
        "duplicate": "DUPLICATE",
        "other": "OTHER",
    }
    not_found, invalid, not_allowed, already = "NOT_FOUND", "INVALID_REQUEST", "CANCEL_NOT_ALLOWED", "ALREADY_CANCELLED"
    repeat = "DUPLICATE_REFERENCE"
    range_invalid = "INVALID_REQUEST"
    statuses = {"IN_FORCE": "ACTIVE", "CANCELLED": "CANCELLED", "LAPSED": "EXPIRED"}

    def cancel_response(
        self, policy_no: str, reason: str, effective_on: str, *, ref: str, **kw: Any
    ) -> requests.Response:
        body = {"reason": reason, "effective_on": effective_on, "client_reference": ref}
        return self.request("POST", f"/policies/{policy_no}/cancellations", json=body, **kw)

    def poll_cancellation(self, cancellation_id: str, timeout: float = 3.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            body = self.request("GET", f"/cancellations/{cancellation_id}").json()
            if body.get("status") != "PROCESSING" or time.monotonic() > deadline:
                return body
            time.sleep(0.02)

    def cancel(self, policy_no: str, reason: str, effective_on: str, *, ref: str, **kw: Any) -> Answer:
        """The POST's code (202 is "OK"), and the cancellation it leads to, polled to its end."""
        response = self.cancel_response(policy_no, self.reasons.get(reason, reason), effective_on, ref=ref, **kw)
        body = response.json()
        code = "OK" if response.status_code == 202 else body["code"]
        if "cancellation_id" not in body:
            return Answer(code, None, body)
        polled = self.poll_cancellation(body["cancellation_id"])
        if polled["status"] == "REJECTED":
            return Answer("REJECTED", None, polled)
        assert polled["status"] == "DONE", polled
        assert polled["refund"]["currency"] == "TRY"
        carried = {"policy_no": policy_no, "refund": polled["refund"]["amount"], "cancelled_on": polled["effective_on"]}
        return Answer(code, carried, polled)

    def list_response(self, issued_from: str, issued_to: str, cursor: str | None = None, **kw: Any) -> Any:
        params = {"issued_from": issued_from, "issued_to": issued_to}
        if cursor is not None:
            params["cursor"] = cursor
        return self.request("GET", "/policies", params=params, **kw)

    def list_page(self, issued_from: str, issued_to: str, position: Any = None, **kw: Any) -> Page:
        response = self.list_response(issued_from, issued_to, position, **kw)
        body = response.json()
        if response.status_code != 200:
            return Page(body["code"])
        items = []
        for item in body["items"]:
            assert item["gross_premium"]["currency"] == "TRY"
            items.append(
                {
                    "policy_no": item["policy_no"],
                    "quote_no": item["quote_id"],
                    "product": item["product"].lower(),
                    "status": self.statuses[item["state"]],
                    "starts_on": item["period"]["from"],
                    "ends_on": item["period"]["to"],
                    "premium": item["gross_premium"]["amount"],
                }
            )
        return Page("OK", items, body["next_cursor"])

    def status_word(self, policy_no: str) -> str:
        return self.request("GET", f"/policies/{policy_no}").json()["state"]


CANCEL_CLIENTS = {"anka": AnkaCancel, "bogazici": BogaziciCancel, "cinar": CinarCancel, "deniz": DenizCancel}


def read_list(client: Any, issued_from: str, issued_to: str) -> tuple[list[dict[str, Any]], int]:
    """Every page of a production list, in order, and how many pages were read."""
    items: list[dict[str, Any]] = []
    position, pages = None, 0
    while True:
        page = client.list_page(issued_from, issued_to, position)
        assert page.code == "OK", page
        pages += 1
        items += page.items
        if page.following is None:
            return items, pages
        position = page.following


def today_in_turkiye() -> str:
    """Issue dates are Türkiye's calendar days (UTC+3): a test near midnight UTC must say so."""
    return datetime.now(ZoneInfo("Europe/Istanbul")).date().isoformat()
