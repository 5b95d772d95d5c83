"""The baselines' own tiny request builders: plain `requests`, one per insurer, from the contract.

The naive and the plain-tenacity clients do not use the platform's adapters, channel or
taxonomy: they know how to ask each insurer for a trafik quote or a policy's status, and how to
tell success from anything else. That is all most hand-written insurer clients know. An
`Answer` is `ok` or not; `code` is kept only for the benchmark's own tally and plots, never for
a decision (the naive client does not retry anything, tenacity retries every non-success).

No Django here: the fan-out scenario runs these clients in a process of their own.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

import defusedxml.ElementTree as SafeET
import requests
from requests.adapters import HTTPAdapter

TIMEOUT = (3.05, 20.0)


@dataclass(frozen=True)
class Answer:
    ok: bool
    status: int | None
    code: str = ""


_local = threading.local()

# Every wire below, by insurer code (filled as each class is defined: `Wire.__init_subclass__`).
WIRES: dict[str, type[Wire]] = {}


def session() -> requests.Session:
    """One keep-alive session per thread, library retries off: the same footing as the platform."""
    current = getattr(_local, "session", None)
    if current is None:
        current = requests.Session()
        adapter = HTTPAdapter(max_retries=0, pool_connections=8, pool_maxsize=8)
        current.mount("http://", adapter)
        current.trust_env = False
        _local.session = current
    return current


def _send(method: str, url: str, **kwargs: Any) -> requests.Response | Answer:
    try:
        return session().request(method, url, timeout=TIMEOUT, allow_redirects=False, **kwargs)
    except requests.RequestException as exc:
        return Answer(False, None, type(exc).__name__)


def _json(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


class Wire:
    """One insurer's wire by hand. A subclass names its insurer (`code`) and is in `WIRES` by
    that alone, the way adapters and sandbox insurers register."""

    code = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.code:
            if cls.code in WIRES:
                raise ValueError(f"two bench wires claim insurer {cls.code!r}")
            WIRES[cls.code] = cls

    def __init__(self, base_url: str, credentials: Mapping[str, str]) -> None:
        self.base_url = base_url.rstrip("/")
        self.credentials = dict(credentials)

    def prepare(self) -> None:
        """Set-up that is not a business call (a token), done before the clock starts."""

    def trafik_quote(self, fields: Mapping[str, Any]) -> Answer:
        raise NotImplementedError

    def policy_status(self, policy_no: str) -> Answer:
        raise NotImplementedError


class AnkaWire(Wire):
    code = "anka"

    def _answer(self, response: requests.Response | Answer) -> Answer:
        if isinstance(response, Answer):
            return response
        if response.status_code == 200:
            return Answer(True, 200)
        body = _json(response)
        error = body.get("error") if isinstance(body, dict) else None
        code = error.get("code") if isinstance(error, dict) else f"HTTP_{response.status_code}"
        return Answer(False, response.status_code, str(code))

    def _headers(self) -> dict[str, str]:
        return {"X-Api-Key": self.credentials["api_key"]}

    def trafik_quote(self, fields: Mapping[str, Any]) -> Answer:
        body = {k: fields[k] for k in ("plate", "owner_id", "registration_serial", "usage")}
        return self._answer(_send("POST", f"{self.base_url}/v1/quotes/trafik", json=body, headers=self._headers()))

    def policy_status(self, policy_no: str) -> Answer:
        return self._answer(_send("GET", f"{self.base_url}/v1/policies/{policy_no}", headers=self._headers()))


BOGAZICI_ELEMENTS = {
    "plate": "Plaka",
    "owner_id": "KimlikNo",
    "registration_serial": "BelgeSeriNo",
    "usage": "KullanimTarzi",
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
        response = _send("POST", f"{self.base_url}/ws/AcenteService.asmx", data=envelope, headers=headers)
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


CINAR_FIELDS = {
    "plate": "plaka",
    "owner_id": "kimlik_no",
    "registration_serial": "belge_seri_no",
    "usage": "kullanim",
}


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
                response = _send("POST", f"{self.base_url}/api/v2/token", json=self.credentials)
                body = _json(response) if not isinstance(response, Answer) else None
                if isinstance(body, dict) and body.get("access_token"):
                    self._token = str(body["access_token"])
            return self._token

    def _call(self, islem: str, body: Mapping[str, Any]) -> Answer:
        response = _send(
            "POST",
            f"{self.base_url}/api/v2/{islem}",
            json=dict(body),
            headers={"Authorization": f"Bearer {self.token()}"},
        )
        if isinstance(response, Answer):
            return response
        payload = _json(response)
        if response.status_code == 200 and isinstance(payload, dict) and payload.get("success") is True:
            return Answer(True, 200)
        code = payload.get("errorCode") if isinstance(payload, dict) else None
        return Answer(False, response.status_code, str(code or f"HTTP_{response.status_code}"))

    def trafik_quote(self, fields: Mapping[str, Any]) -> Answer:
        return self._call("trafik-teklif", {CINAR_FIELDS[k]: fields[k] for k in CINAR_FIELDS})

    def policy_status(self, policy_no: str) -> Answer:
        return self._call("police-durum", {"police_no": policy_no})


class DenizWire(Wire):
    code = "deniz"

    def _answer(self, response: requests.Response | Answer) -> Answer:
        if isinstance(response, Answer):
            return response
        if response.status_code == 200:
            return Answer(True, 200)
        body = _json(response)
        code = body.get("code") if isinstance(body, dict) else None
        return Answer(False, response.status_code, str(code or f"HTTP_{response.status_code}"))

    def _auth(self) -> tuple[str, str]:
        return (self.credentials["username"], self.credentials["password"])

    def trafik_quote(self, fields: Mapping[str, Any]) -> Answer:
        risk = {k: fields[k] for k in ("plate", "registration_serial", "usage")}
        body = {"product": "TRAFIK", "insured": {"owner_id": fields["owner_id"]}, "risk": risk}
        return self._answer(_send("POST", f"{self.base_url}/quotes", json=body, auth=self._auth()))

    def policy_status(self, policy_no: str) -> Answer:
        return self._answer(_send("GET", f"{self.base_url}/policies/{policy_no}", auth=self._auth()))


def wire_for(code: str, base_url: str, credentials: Mapping[str, str]) -> Wire:
    return WIRES[code](base_url, credentials)
