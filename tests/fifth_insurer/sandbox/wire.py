"""Ege Sigorta (test)'s wire, by hand from its contract (the docstring of the sandbox beside):
the benchmarks' baseline and the contract tests' client.

Not the sandbox's code nor the platform's adapter: see `sandbox/hand_wire.py`. Ege is the test-only
fifth insurer, so these clients exist to prove a new insurer's wire is found with its sandbox.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import requests

from sandbox.hand_wire import TRAFIK, Answer, Cancelled, Page, Wire, json_of, send
from sandbox.server import SandboxServer

ACENTE1 = ("EGE-ACENTE1", "ege-secret-1")


def fault_id(body: Any) -> str | None:
    """Ege names every error in `{"fault": {"id", ...}}`; None when the body is not that."""
    fault = body.get("fault") if isinstance(body, dict) else None
    identifier = fault.get("id") if isinstance(fault, dict) else None
    return identifier if isinstance(identifier, str) and identifier else None


class EgeWire(Wire):
    code = "ege"

    def _answer(self, response: requests.Response | Answer) -> Answer:
        if isinstance(response, Answer):
            return response
        if response.status_code == 200:
            return Answer(True, 200)
        return Answer(False, response.status_code, fault_id(json_of(response)) or f"HTTP_{response.status_code}")

    def _headers(self) -> dict[str, str]:
        return {"X-Ege-Agent": self.credentials["agent_id"], "X-Ege-Secret": self.credentials["secret"]}

    def trafik_quote(self, fields: Mapping[str, Any]) -> Answer:
        body = {k: fields[k] for k in ("plate", "owner_id", "registration_serial", "usage")}
        return self._answer(send("POST", f"{self.base_url}/api/quotes/trafik", json=body, headers=self._headers()))

    def policy_status(self, policy_no: str) -> Answer:
        return self._answer(send("GET", f"{self.base_url}/api/policies/{policy_no}", headers=self._headers()))


class EgeClient:
    code = "ege"

    def __init__(self, server: SandboxServer, http: requests.Session) -> None:
        self.server, self.http, self.url = server, http, server.base_url

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        agent: tuple[str, str] | None = ACENTE1,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        timeout: float = 5,
        **kw: Any,
    ) -> requests.Response:
        """`agent=None` sends no credentials at all, for the tests of Ege's 401."""
        all_headers = {"X-Ege-Agent": agent[0], "X-Ege-Secret": agent[1]} if agent else {}
        all_headers.update(headers or {})
        return self.http.request(
            method, self.url + path, json=json, headers=all_headers, params=params, timeout=timeout, **kw
        )

    def trafik_quote(self, fields: dict[str, Any] | None = None, **kw: Any) -> requests.Response:
        return self.request("POST", "/api/quotes/trafik", json=fields or TRAFIK, **kw)

    def quote_no(self, **kw: Any) -> str:
        response = self.trafik_quote(**kw)
        assert response.status_code == 200, response.text
        return response.json()["ref"]

    def issue(self, quote_no: str, *, ref: str = "ref-1", card: str = "tok_ok", **kw: Any) -> requests.Response:
        """Ege takes the issuance under the platform's names, flat in the body; the reference is a header."""
        headers = {"X-Ege-Reference": ref} if ref else {}  # ref="" leaves it out, for Ege's 400
        body = {"quote_no": quote_no, "payment_token": card}
        return self.request("POST", "/api/policies", json=body, headers=headers, **kw)

    def policy_no(self, **kw: Any) -> str:
        """A freshly issued policy's number: a fresh reference, or Ege would replay the first policy."""
        response = self.issue(self.quote_no(**kw), ref=f"ref-{time.monotonic_ns()}", **kw)
        assert response.status_code == 201, response.text
        return response.json()["policy"]["no"]

    def document(self, policy_no: str, **kw: Any) -> requests.Response:
        return self.request("GET", f"/api/policies/{policy_no}/pdf", **kw)

    # What the shared contract tests need to know of Ege's words (sandbox/hand_wire.py).
    content_type = "application/json"
    status_words: ClassVar[dict[str, str]] = {"ACTIVE": "LIVE", "CANCELLED": "CANCELLED", "EXPIRED": "LAPSED"}

    def succeeded(self, response: requests.Response) -> bool:
        """A quote or a status is 200, an issuance 201: Ege's HTTP status is its verdict."""
        return response.status_code in (200, 201)

    def is_throttle_signal(self, response: requests.Response) -> bool:
        """429 alone could be a proxy's: Ege's own throttle names `E_SLOW_DOWN` and says how long to wait."""
        if response.status_code != 429 or not response.headers.get("Retry-After", "").isdigit():
            return False
        return fault_id(json_of(response)) == "E_SLOW_DOWN"

    def parse(self, content: bytes) -> Any:
        return json.loads(content)

    def status_word(self, policy_no: str) -> str | None:
        response = self.request("GET", f"/api/policies/{policy_no}")
        return response.json()["policy"]["state"] if response.status_code == 200 else None

    def calls_as(self, credentials: Mapping[str, str], count: int) -> list[requests.Response]:
        agent = (credentials["agent_id"], credentials["secret"])
        return [self.trafik_quote(agent=agent) for _ in range(count)]


class EgeCancel(EgeClient):
    reasons: ClassVar[dict[str, str]] = {
        "vehicle_sold": "SATIS",
        "customer_request": "TALEP",
        "duplicate": "MUKERRER",
        "other": "DIGER",
    }
    # Ege has one word for every refusal to cancel, an open DASK claim included, and one for bad input.
    not_found, invalid, invalid_reason = "E_UNKNOWN", "E_INPUT", "E_INPUT"
    not_allowed, claim_refusal, already = "E_NOT_CANCELLABLE", "E_NOT_CANCELLABLE", "E_CANCELLED"
    repeat = "OK"  # the same reference and body: the first answer again, 200
    range_invalid, internal_error = "E_INPUT", "E_INTERNAL"
    statuses: ClassVar[dict[str, str]] = {"LIVE": "ACTIVE", "CANCELLED": "CANCELLED", "LAPSED": "EXPIRED"}

    def cancel_response(
        self, policy_no: str, reason: str, effective_on: str, *, ref: str, **kw: Any
    ) -> requests.Response:
        body = {"reason": reason, "date": effective_on}
        headers = {"X-Ege-Reference": ref} if ref else {}
        return self.request("POST", f"/api/policies/{policy_no}/cancel", json=body, headers=headers, **kw)

    def cancel(self, policy_no: str, reason: str, effective_on: str, *, ref: str, **kw: Any) -> Cancelled:
        """A 409 `E_CANCELLED` still carries the first cancellation: it is read like a success's."""
        response = self.cancel_response(policy_no, self.reasons.get(reason, reason), effective_on, ref=ref, **kw)
        body = response.json()
        code = "OK" if response.status_code == 200 else fault_id(body) or f"HTTP_{response.status_code}"
        carried = body.get("cancellation") if isinstance(body, dict) else None
        return Cancelled(code, self._result(carried) if carried is not None else None, body)

    @staticmethod
    def _result(cancellation: dict[str, Any]) -> dict[str, str]:
        assert cancellation["state"] == "CANCELLED", cancellation
        return {"policy_no": cancellation["no"], "refund": cancellation["refund"], "cancelled_on": cancellation["date"]}

    def list_response(self, issued_from: str, issued_to: str, page: Any = 1, **kw: Any) -> requests.Response:
        params = {"from": issued_from, "to": issued_to, "page": page}
        return self.request("GET", "/api/policies", params=params, **kw)

    def list_page(self, issued_from: str, issued_to: str, position: Any = None, **kw: Any) -> Page:
        """Pages are numbered from 1 and `more` is the only word that another one follows."""
        page = position or 1
        response = self.list_response(issued_from, issued_to, page, **kw)
        body = response.json()
        if response.status_code != 200:
            return Page(fault_id(body) or f"HTTP_{response.status_code}")
        assert body["page"] == page, body
        items = [
            {
                "policy_no": item["no"],
                "quote_no": item["quote"],
                "product": item["product"].lower(),
                "status": self.statuses[item["state"]],
                "starts_on": item["from"],
                "ends_on": item["to"],
                "premium": item["premium"],
            }
            for item in body["policies"]
        ]
        return Page("OK", items, page + 1 if body["more"] else None)


BENCH, CLIENT, CANCEL = EgeWire, EgeClient, EgeCancel
