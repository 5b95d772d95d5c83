"""Deniz Sigorta's wire, by hand from CONTRACTS.md: the benchmarks' baseline, the contract tests' client.

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


class DenizWire(Wire):
    code = "deniz"

    def _answer(self, response: requests.Response | Answer) -> Answer:
        if isinstance(response, Answer):
            return response
        if response.status_code == 200:
            return Answer(True, 200)
        body = json_of(response)
        code = body.get("code") if isinstance(body, dict) else None
        return Answer(False, response.status_code, str(code or f"HTTP_{response.status_code}"))

    def _auth(self) -> tuple[str, str]:
        return (self.credentials["username"], self.credentials["password"])

    def trafik_quote(self, fields: Mapping[str, Any]) -> Answer:
        risk = {k: fields[k] for k in ("plate", "registration_serial", "usage")}
        body = {"product": "TRAFIK", "insured": {"owner_id": fields["owner_id"]}, "risk": risk}
        return self._answer(send("POST", f"{self.base_url}/quotes", json=body, auth=self._auth()))

    def policy_status(self, policy_no: str) -> Answer:
        return self._answer(send("GET", f"{self.base_url}/policies/{policy_no}", auth=self._auth()))


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

    # What the shared contract tests need to know of Deniz's words (sandbox/hand_wire.py).
    content_type = "application/json"
    status_words: ClassVar[dict[str, str]] = {"ACTIVE": "IN_FORCE", "CANCELLED": "CANCELLED", "EXPIRED": "LAPSED"}

    def succeeded(self, response: requests.Response) -> bool:
        return 200 <= response.status_code < 300

    def is_throttle_signal(self, response: requests.Response) -> bool:
        """Deniz's wait is `X-RateLimit-Reset`, never `Retry-After`."""
        headers = response.headers
        return response.status_code == 429 and "X-RateLimit-Reset" in headers and "Retry-After" not in headers

    def parse(self, content: bytes) -> Any:
        return json.loads(content)

    def status_word(self, policy_no: str) -> str | None:
        response = self.request("GET", f"/policies/{policy_no}")
        return response.json()["state"] if response.status_code == 200 else None

    def calls_as(self, credentials: Mapping[str, str], count: int) -> list[requests.Response]:
        auth = (credentials["username"], credentials["password"])
        return [self.trafik_quote(auth=auth) for _ in range(count)]


class DenizCancel(DenizClient):
    # Deniz checks claims in the background: the cancellation is accepted, its poll REJECTED.
    invalid_reason, claim_refusal, internal_error = "INVALID_REQUEST", "REJECTED", "INTERNAL_ERROR"
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

    def cancel(self, policy_no: str, reason: str, effective_on: str, *, ref: str, **kw: Any) -> Cancelled:
        """The POST's code (202 is "OK"), and the cancellation it leads to, polled to its end."""
        response = self.cancel_response(policy_no, self.reasons.get(reason, reason), effective_on, ref=ref, **kw)
        body = response.json()
        code = "OK" if response.status_code == 202 else body["code"]
        if "cancellation_id" not in body:
            return Cancelled(code, None, body)
        polled = self.poll_cancellation(body["cancellation_id"])
        if polled["status"] == "REJECTED":
            return Cancelled("REJECTED", None, polled)
        assert polled["status"] == "DONE", polled
        assert polled["refund"]["currency"] == "TRY"
        carried = {"policy_no": policy_no, "refund": polled["refund"]["amount"], "cancelled_on": polled["effective_on"]}
        return Cancelled(code, carried, polled)

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


BENCH, CLIENT, CANCEL = DenizWire, DenizClient, DenizCancel
