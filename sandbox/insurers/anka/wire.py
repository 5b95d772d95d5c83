"""Anka Sigorta's wire, by hand from CONTRACTS.md: the benchmarks' baseline, the contract tests' client.

Not the sandbox's code (the package beside) nor the platform's adapter: see `sandbox/hand_wire.py`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import requests

from sandbox.hand_wire import TRAFIK, Answer, Cancelled, Page, Wire, json_of, send
from sandbox.server import SandboxServer


class AnkaWire(Wire):
    code = "anka"

    def _answer(self, response: requests.Response | Answer) -> Answer:
        if isinstance(response, Answer):
            return response
        if response.status_code == 200:
            return Answer(True, 200)
        body = json_of(response)
        error = body.get("error") if isinstance(body, dict) else None
        code = error.get("code") if isinstance(error, dict) else f"HTTP_{response.status_code}"
        return Answer(False, response.status_code, str(code))

    def _headers(self) -> dict[str, str]:
        return {"X-Api-Key": self.credentials["api_key"]}

    def trafik_quote(self, fields: Mapping[str, Any]) -> Answer:
        body = {k: fields[k] for k in ("plate", "owner_id", "registration_serial", "usage")}
        return self._answer(send("POST", f"{self.base_url}/v1/quotes/trafik", json=body, headers=self._headers()))

    def policy_status(self, policy_no: str) -> Answer:
        return self._answer(send("GET", f"{self.base_url}/v1/policies/{policy_no}", headers=self._headers()))


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

    # What the shared contract tests need to know of Anka's words (sandbox/hand_wire.py).
    content_type = "application/json"
    status_words: ClassVar[dict[str, str]] = {"ACTIVE": "ACTIVE", "CANCELLED": "CANCELLED", "EXPIRED": "EXPIRED"}

    def succeeded(self, response: requests.Response) -> bool:
        return 200 <= response.status_code < 300

    def is_throttle_signal(self, response: requests.Response) -> bool:
        return response.status_code == 429 and response.headers["Retry-After"].isdigit()

    def parse(self, content: bytes) -> Any:
        return json.loads(content)

    def status_word(self, policy_no: str) -> str | None:
        response = self.request("GET", f"/v1/policies/{policy_no}")
        return response.json()["status"] if response.status_code == 200 else None

    def calls_as(self, credentials: Mapping[str, str], count: int) -> list[requests.Response]:
        return [self.trafik_quote(api_key=credentials["api_key"]) for _ in range(count)]


class AnkaCancel(AnkaClient):
    invalid_reason, claim_refusal, internal_error = "VALIDATION", "CANCEL_NOT_ALLOWED", "GATEWAY_TIMEOUT"
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

    def cancel(self, policy_no: str, reason: str, effective_on: str, *, ref: str, **kw: Any) -> Cancelled:
        response = self.cancel_response(policy_no, self.reasons.get(reason, reason), effective_on, ref=ref, **kw)
        body = response.json()
        if response.status_code == 200:
            return Cancelled("OK", self._result(body), body)
        return Cancelled(
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


BENCH, CLIENT, CANCEL = AnkaWire, AnkaClient, AnkaCancel
