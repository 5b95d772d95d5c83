"""Deniz Sigorta: REST/JSON behind HTTP Basic, slow, with asynchronous, polled issuance.

``POST /policy-requests`` answers 202 PROCESSING. The outcome is decided at once (so a policy
is created, and counted, exactly once) but only revealed ``issuance_processing_seconds``
later, when a poll turns ISSUED or REJECTED. A ``client_reference`` binds to the first
accepted request, whatever its outcome: "the earlier request stands". Polls and lookups are
another cluster's: for ``poll_lag_seconds`` after the 202 they do not know the request yet.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import time
from typing import Any

from .core import BUSINESS_OPERATIONS, Account, FaultRule
from .domain import DECLINED_PAYMENT_TOKEN, OPERATION_FIELDS, InvalidField, Refusal, iso_utc, money, validate
from .insurer import Call, Insurer, Request, Response, key_text, parse_json_object
from .ledger import PolicyRequest

# code -> (HTTP status, detail)
ERRORS: dict[str, tuple[int, str]] = {
    "INVALID_REQUEST": (400, "Malformed request"),
    "UNAUTHORIZED": (401, "Bad credentials"),
    "AGENCY_NOT_AUTHORIZED": (403, "Agency may not sell this product"),
    "NOT_FOUND": (404, "Not found"),
    "DUPLICATE_REFERENCE": (409, "client_reference already used; the earlier request stands"),
    "UNDERWRITING_DECLINED": (422, "Underwriting declined"),
    "QUOTE_EXPIRED": (422, "Quote has expired"),
    "TOO_MANY_REQUESTS": (429, "Too many requests"),
    "INTERNAL_ERROR": (500, "Internal error"),
    "SERVICE_UNAVAILABLE": (503, "Service unavailable"),
}
UNKNOWN_CODE_STATUS = 422
REFUSAL_CODES = {
    Refusal.NOT_FOUND: "NOT_FOUND",
    Refusal.ADDRESS_NOT_FOUND: "NOT_FOUND",
    Refusal.QUOTE_EXPIRED: "QUOTE_EXPIRED",
    Refusal.NOT_ELIGIBLE: "UNDERWRITING_DECLINED",
    Refusal.RISK_DECLINED: "UNDERWRITING_DECLINED",
    Refusal.PAYMENT_DECLINED: "UNDERWRITING_DECLINED",
}
PRODUCTS = {"TRAFIK": "trafik_quote", "KASKO": "kasko_quote", "DASK": "dask_quote"}
STATE_WORDS = {"ACTIVE": "IN_FORCE", "CANCELLED": "CANCELLED", "EXPIRED": "LAPSED"}
ISSUE_WIRE_NAMES = {"quote_no": "quote_id"}
ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("POST", re.compile(r"/quotes"), "quote"),
    ("GET", re.compile(r"/addresses/(?P<uavt_code>[^/]+)"), "dask_address"),
    ("POST", re.compile(r"/policy-requests"), "issue_policy"),
    ("GET", re.compile(r"/policy-requests"), "issue_lookup"),
    ("GET", re.compile(r"/policy-requests/(?P<request_id>[^/]+)"), "issue_poll"),
    ("GET", re.compile(r"/policies/(?P<policy_no>[^/]+)"), "policy_status"),
]


def error(code: str, detail: str | None = None, **extra: Any) -> Response:
    status, default_detail = ERRORS.get(code, (UNKNOWN_CODE_STATUS, "Error"))
    response = Response.json(status, {"code": code, "detail": detail or default_detail, **extra})
    if status == 401:
        response.headers.append(("WWW-Authenticate", 'Basic realm="Deniz Sigorta"'))
    return response


def basic_credentials(header: str | None) -> dict[str, str | None]:
    scheme, _, encoded = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return {"username": None, "password": None}
    try:
        username, _, password = base64.b64decode(encoded.strip(), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return {"username": None, "password": None}
    return {"username": username, "password": password}


class Deniz(Insurer):
    code = "deniz"
    prefix = "DZ"
    operations = (*BUSINESS_OPERATIONS, "issue_lookup", "issue_poll")
    extra_fault_kinds = frozenset({"reject"})
    throttle_codes = frozenset({"TOO_MANY_REQUESTS"})
    committing_codes = frozenset({"DUPLICATE_REFERENCE"})
    garbage_body = (
        b'{"quote_id": "DZ-T-000001", "gross_premium": {"amount": "4312.50", "currency": "TRY"}, '
        b'"expires_at": "2030-01-01T00:00:00Z"}'
    )

    def route(self, request: Request) -> Call:
        for method, pattern, operation in ROUTES:
            match = pattern.fullmatch(request.path)
            if not match or request.method != method:
                continue
            if operation == "quote":
                return self._quote_call(request)
            call = Call(operation, request, fields=dict(match.groupdict()))
            if operation == "issue_policy":
                payload, call.problem = parse_json_object(request.body)
                call.fields = {
                    "quote_no": payload.get("quote_id"),
                    **{k: payload.get(k) for k in ("payment_token", "client_reference")},
                }
                call.wire_names = ISSUE_WIRE_NAMES
            elif operation == "issue_lookup":
                call.fields = {"client_reference": (request.query.get("client_reference") or [None])[0]}
            return call
        return Call("unknown", request)

    def _quote_call(self, request: Request) -> Call:
        """``{"product", "insured": {owner_id}, "risk": {...}}``: one URL, three operations."""
        payload, problem = parse_json_object(request.body)
        operation = PRODUCTS.get(payload.get("product"))  # type: ignore[arg-type]
        if problem is None and operation is None:
            problem = InvalidField("product", "missing" if payload.get("product") is None else "invalid")
        insured, risk = payload.get("insured"), payload.get("risk")
        if problem is None and not isinstance(insured, dict):
            problem = InvalidField("insured", "missing" if insured is None else "invalid")
        if problem is None and not isinstance(risk, dict):
            problem = InvalidField("risk", "missing" if risk is None else "invalid")
        if problem is not None:
            return Call(operation or "unknown", request, problem=problem)
        names = OPERATION_FIELDS[operation]
        fields = {name: risk.get(name) for name in names if name != "owner_id"}
        fields["owner_id"] = insured.get("owner_id")
        wire_names = {name: f"risk.{name}" for name in names} | {"owner_id": "insured.owner_id"}
        return Call(operation, request, fields=fields, wire_names=wire_names)

    def authenticate(self, call: Call) -> Account | Response:
        account = self.state.authenticate(basic_credentials(call.request.headers.get("Authorization")))
        return account if account is not None else error("UNAUTHORIZED")

    # --- operations ---------------------------------------------------------------------------------

    def _quote(self, call: Call) -> Response:
        quote = self.ledger.create_quote(
            call.operation, call.fields, agency=self.agency(call), ttl_seconds=self.state.config["quote_ttl_seconds"]
        )
        return Response.json(
            200,
            {
                "quote_id": quote.quote_no,
                "gross_premium": {"amount": money(quote.premium), "currency": "TRY"},
                "expires_at": iso_utc(quote.valid_until),
            },
        )

    op_trafik_quote = op_kasko_quote = op_dask_quote = _quote

    def op_dask_address(self, call: Call) -> Response:
        address = self.ledger.address(call.fields)
        return Response.json(
            200, {"uavt_code": address.uavt_code, "line": address.line, "building_ref": address.building_id}
        )

    def issuance_key(self, call: Call) -> str | None:
        return key_text(call.fields.get("client_reference"))

    def op_issue_policy(self, call: Call) -> Response:
        validate(call.fields, ("quote_no", "payment_token", "client_reference"))
        agency = self.agency(call)
        record_key = (agency, call.fields["client_reference"])
        if record_key in self.ledger.dedup:
            return error("DUPLICATE_REFERENCE", request_id=self.ledger.dedup[record_key])
        quote = self.ledger.issuable_quote(call.fields["quote_no"], agency=agency)
        now = time.time()
        reason = call.reject_reason
        if reason is None and call.fields["payment_token"] == DECLINED_PAYMENT_TOKEN:
            reason = "PAYMENT_DECLINED"
        policy_no = None if reason else self.ledger.create_policy(quote).policy_no
        request = PolicyRequest(
            request_id=self.ledger.next_number("R"),
            agency=agency,
            client_reference=call.fields["client_reference"],
            quote_no=quote.quote_no,
            ready_at=now + self.state.config["issuance_processing_seconds"],
            visible_at=now + self.state.config["poll_lag_seconds"],
            policy_no=policy_no,
            reason=reason,
        )
        self.ledger.requests[request.request_id] = request
        self.ledger.dedup[record_key] = request.request_id
        call.request_id, call.issued_policy_no = request.request_id, policy_no
        location = [("Location", f"/policy-requests/{request.request_id}")]
        return Response.json(202, {"request_id": request.request_id, "status": "PROCESSING"}, location)

    def op_issue_poll(self, call: Call) -> Response:
        """Polls are served by another cluster: until ``visible_at`` it does not know the request."""
        request = self.ledger.requests.get(call.fields["request_id"])
        if request is None or request.agency != self.agency(call) or time.time() < request.visible_at:
            raise Refusal(Refusal.NOT_FOUND, f"policy request {call.fields['request_id']}")
        return Response.json(200, self._request_view(request))

    def op_issue_lookup(self, call: Call) -> Response:
        """The poll cluster's search: a request it does not know yet is not in ``items``."""
        validate(call.fields, ("client_reference",))
        agency, reference, now = self.agency(call), call.fields["client_reference"], time.time()
        items = [
            self._request_view(r)
            for r in self.ledger.requests.values()
            if r.agency == agency and r.client_reference == reference and now >= r.visible_at
        ]
        return Response.json(200, {"items": items})

    def _request_view(self, request: PolicyRequest) -> dict[str, Any]:
        status = request.status(time.time())
        view: dict[str, Any] = {"request_id": request.request_id, "status": status}
        if status == "ISSUED":
            view["policy_no"] = request.policy_no
        elif status == "REJECTED":
            view["reason"] = request.reason
        return view

    def op_policy_status(self, call: Call) -> Response:
        policy = self.ledger.policy(
            call.fields, agency=self.agency(call), known_only=self.state.config["known_policies_only"]
        )
        return Response.json(200, {"policy_no": policy.policy_no, "state": STATE_WORDS[policy.status]})

    def op_unknown(self, call: Call) -> Response:
        return error("NOT_FOUND", f"No route for {call.request.method} {call.request.path}")

    # --- rendering ----------------------------------------------------------------------------------

    def render_invalid(self, call: Call, problem: InvalidField) -> Response:
        what = "is required" if problem.reason == "missing" else "is invalid"
        detail = f"{call.wire_name(problem.field)} {what}" + (f": {problem.detail}" if problem.detail else "")
        return error("INVALID_REQUEST", detail)

    def render_refusal(self, call: Call, refusal: Refusal) -> Response:
        code = REFUSAL_CODES[refusal.kind]
        return error(code, ERRORS[code][1] + (f": {refusal.detail}" if refusal.detail else ""))

    def render_throttle(self, call: Call, wait_seconds: float | None, *, from_bucket: bool) -> Response:
        """429 with ``X-RateLimit-Reset`` (unix seconds, rounded up) and deliberately no Retry-After."""
        response = error("TOO_MANY_REQUESTS")
        response.headers.append(("X-RateLimit-Reset", str(math.ceil(time.time() + (wait_seconds or 0.0)))))
        return response

    def render_error(self, call: Call, code: str, rule: FaultRule) -> Response:
        if code in self.throttle_codes:
            return self.render_throttle(call, rule.wait(1.0), from_bucket=False)
        if code == "DUPLICATE_REFERENCE":
            # The issuance ran first (a committing code), so the request it names really exists.
            reference = call.fields.get("client_reference")
            request_id = call.request_id or self.ledger.dedup.get((self.agency(call), reference))
            return error(code, rule.reason, request_id=request_id)
        return error(code, rule.reason)
