"""Anka Sigorta: REST/JSON, the HTTP status carries the error, ``Idempotency-Key`` honoured.

Policy documents come as ``application/pdf``; one the backend has not produced yet is a 409
``DOCUMENT_NOT_READY`` with ``Retry-After`` in whole seconds (CONTRACTS.md, last section).
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from ... import domain
from ...core import BUSINESS_OPERATIONS, Account, FaultRule
from ...domain import DocumentNotReady, InvalidField, Refusal, iso_utc, money
from ...insurer import JSON, Call, Insurer, Request, Response, ceil_seconds, key_text, parse_json_object, query_value
from ...ledger import Cancellation, Policy, Quote
from ...registry import register

# code -> (HTTP status, message)
ERRORS: dict[str, tuple[int, str]] = {
    "VALIDATION": (400, "Request validation failed"),
    "AUTH_INVALID": (401, "Wrong or missing API key"),
    "PRODUCT_NOT_ALLOWED": (403, "This agency may not sell this product at Anka"),
    "NOT_FOUND": (404, "Not found"),
    "ADDRESS_NOT_FOUND": (404, "UAVT code not found"),
    "QUOTE_EXPIRED": (409, "Quote has expired"),
    "DOCUMENT_NOT_READY": (409, "Policy document is not ready yet"),
    "NOT_ELIGIBLE": (422, "Araç teminata uygun değil"),
    "RISK_DECLINED": (422, "Risk declined"),
    "IDEMPOTENCY_MISMATCH": (422, "Idempotency-Key was already used with a different body"),
    "ALREADY_CANCELLED": (409, "Policy is already cancelled"),
    "CANCEL_NOT_ALLOWED": (422, "Poliçe iptal edilemez"),
    "RATE_LIMITED": (429, "Too many requests"),
    # Server side: the contract says "any"; these are the names the sandbox uses.
    "INTERNAL_ERROR": (500, "Internal error"),
    "BAD_GATEWAY": (502, "Bad gateway"),
    "SERVICE_UNAVAILABLE": (503, "Service unavailable"),
    "GATEWAY_TIMEOUT": (504, "Gateway timeout"),
}
UNKNOWN_CODE_STATUS = 422
REFUSAL_CODES = {
    Refusal.NOT_FOUND: "NOT_FOUND",
    Refusal.ADDRESS_NOT_FOUND: "ADDRESS_NOT_FOUND",
    Refusal.QUOTE_EXPIRED: "QUOTE_EXPIRED",
    Refusal.NOT_ELIGIBLE: "NOT_ELIGIBLE",
    Refusal.RISK_DECLINED: "RISK_DECLINED",
    Refusal.PAYMENT_DECLINED: "RISK_DECLINED",
}
# Anka's coverage codes are the platform's own; the names are Anka's Turkish wording.
COVERAGE_NAMES = {
    "bodily_injury": "Sakatlanma ve ölüm (kişi başı)",
    "medical": "Tedavi masrafları (kişi başı)",
    "property_damage": "Maddi hasar (araç başı)",
    "collision": "Çarpışma",
    "theft": "Hırsızlık",
    "fire": "Yangın",
    "flood": "Sel ve su baskını",
    "glass": "Cam kırılması",
    "earthquake": "Deprem ve deprem kaynaklı yangın",
}
# What the `broken_coverages` fault appends: entries no reader can make a cover of.
BROKEN_COVERAGE_ENTRIES: list[Any] = [
    {"code": "", "name": "Kodsuz teminat", "limit": "1000.00"},
    {"code": "theft", "name": "Hırsızlık", "limit": "sınırsız"},
    {"code": "fire", "name": "Yangın", "limit": 12.5},
    42,
    None,
]
PDF = "application/pdf"

# The platform's reasons are Anka's own words (CONTRACTS.md, "Cancellation").
CANCEL_REASONS = {reason: reason for reason in domain.CANCEL_REASONS}
CANCELLATION_PATH = re.compile(r"/v1/policies/(?P<policy_no>[^/]+)/cancellation")

ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("POST", re.compile(r"/v1/quotes/trafik"), "trafik_quote"),
    ("POST", re.compile(r"/v1/quotes/kasko"), "kasko_quote"),
    ("GET", re.compile(r"/v1/dask/addresses/(?P<uavt_code>[^/]+)"), "dask_address"),
    ("POST", re.compile(r"/v1/quotes/dask"), "dask_quote"),
    ("POST", re.compile(r"/v1/policies"), "issue_policy"),
    ("GET", re.compile(r"/v1/policies/(?P<policy_no>[^/]+)"), "policy_status"),
    ("GET", re.compile(r"/v1/policies/(?P<policy_no>[^/]+)/document"), "policy_document"),
    ("POST", CANCELLATION_PATH, "cancel_policy"),
    ("GET", re.compile(r"/v1/policies"), "policy_list"),
]


def error(code: str, message: str | None = None, *, field: str | None = None) -> Response:
    default_status, default_message = ERRORS.get(code, (UNKNOWN_CODE_STATUS, "Error"))
    body: dict[str, Any] = {"code": code, "message": message or default_message}
    if field is not None:
        body["field"] = field
    return Response.json(default_status, {"error": body})


def coverage_list(quote: Quote) -> list[dict[str, Any]]:
    """The quote's covers as Anka lists them: code, Turkish name, limit (null: unlimited)."""
    return [
        {"code": code, "name": COVERAGE_NAMES.get(code, code), "limit": None if limit is None else money(limit)}
        for code, limit in quote.covers()
    ] + option_coverage_list(quote)


# The kasko options Anka sells: every deductible and replacement car of the contract's table, its
# own İMM limits (unlimited among them), both kinds of repair shop.
KASKO_MENU = domain.KaskoMenu(liability_limits=(1_000_000, 2_500_000, 5_000_000, None))
OPTION_COVERAGE_NAMES = {
    "liability": "İhtiyari mali mesuliyet",
    "replacement_car": "İkame araç",
    "deductible": "Muafiyet",
}


def option_coverage_list(quote: Quote) -> list[dict[str, Any]]:
    """The kasko options the quote priced, as covers: İMM with its limit (null: unlimited), the
    replacement car with its ``days``, the deductible with its amount as the limit."""
    entries = []
    for code, amount, days in domain.option_covers(quote.terms.options):
        entry: dict[str, Any] = {"code": code, "name": OPTION_COVERAGE_NAMES[code], "limit": None}
        if amount is not None:
            entry["limit"] = money(amount)
        if days is not None:
            entry["name"], entry["days"] = f"{entry['name']} ({days} gün)", days
        entries.append(entry)
    return entries


def installment_list(quote: Quote) -> list[dict[str, Any]]:
    return [{"count": count, "total": money(total)} for count, total in domain.installments(quote.premium)]


def policy_body(policy: Policy) -> dict[str, Any]:
    """A policy as issuance and status answer it: number, status and the period it runs."""
    return {
        "policy_no": policy.policy_no,
        "status": policy.status,
        "starts_on": policy.starts_on.isoformat() if policy.starts_on else None,
        "ends_on": policy.ends_on.isoformat() if policy.ends_on else None,
    }


def cancellation_body(cancellation: Cancellation) -> dict[str, Any]:
    """A cancellation as its success answers it, and as a 409 ALREADY_CANCELLED repeats it."""
    return {
        "policy_no": cancellation.policy_no,
        "status": "CANCELLED",
        "refund": money(cancellation.refund),
        "cancelled_on": cancellation.cancelled_on.isoformat(),
    }


def already_cancelled(cancellation: Cancellation, message: str | None = None) -> Response:
    """409 ALREADY_CANCELLED, carrying the first cancellation's result under ``cancellation``."""
    response = error("ALREADY_CANCELLED", message)
    body = json.loads(response.body)
    return Response.json(409, {**body, "cancellation": cancellation_body(cancellation)})


def listed_item(policy: Policy) -> dict[str, Any]:
    """One production-list item; a policy issued without a quote here has an empty quote_no."""
    return {
        "policy_no": policy.policy_no,
        "quote_no": policy.quote_no or "",
        "product": policy.product,
        "status": policy.status,
        "starts_on": policy.starts_on.isoformat() if policy.starts_on else None,
        "ends_on": policy.ends_on.isoformat() if policy.ends_on else None,
        "premium": money(policy.premium) if policy.premium is not None else None,
    }


def not_ready(seconds: float | None, message: str | None = None) -> Response:
    """409 DOCUMENT_NOT_READY; ``Retry-After`` in whole seconds, never 0 (a 0 invites a busy loop)."""
    response = error("DOCUMENT_NOT_READY", message)
    if seconds is not None:
        response.headers.append(("Retry-After", str(max(1, ceil_seconds(seconds)))))
    return response


@register
class Anka(Insurer):
    code = "anka"
    document_name = "Anka Sigorta"  # printed on the policy PDFs
    prefix = "AK"
    port_offset = 0
    credential_keys = ("api_key",)
    # Declared as the base class has it, so a subclass (a test's insurer) may state other accounts.
    default_accounts: ClassVar[tuple[dict[str, Any], ...]] = (
        {"agency_code": "ACENTE1", "credentials": {"api_key": "anka-key-acente1"}},
        {"agency_code": "ACENTE2", "credentials": {"api_key": "anka-key-acente2"}},
    )
    operations = BUSINESS_OPERATIONS
    throttle_codes = frozenset({"RATE_LIMITED"})
    transient_faults: ClassVar[tuple[dict[str, Any], ...]] = (
        {"fault": "error", "code": "BAD_GATEWAY"},
        {"fault": "reset"},
        {"fault": "error", "code": "SERVICE_UNAVAILABLE", "wait_seconds": 1},
    )
    cancel_committing_codes = frozenset({"ALREADY_CANCELLED"})
    kasko_menu = KASKO_MENU
    # An older Anka release lists coverages as bare codes; a rough one sends entries no reader
    # can use. Both serve the call and rewrite only the quote's `coverages`.
    extra_fault_kinds = frozenset({"legacy_coverages", "broken_coverages"})
    garbage_body = (
        b'{"quote_no": "AK-T-000001", "premium": "4312.50", "currency": "TRY", "valid_until": "2030-01-01T00:00:00Z"}'
    )

    def route(self, request: Request) -> Call:
        for method, pattern, operation in ROUTES:
            match = pattern.fullmatch(request.path)
            if match and request.method == method:
                call = Call(operation, request, fields=dict(match.groupdict()))
                if method == "POST":
                    payload, call.problem = parse_json_object(request.body)
                    call.fields.update(payload)
                    call.context["payload"] = payload
                return call
        return Call("unknown", request)

    def authenticate(self, call: Call) -> Account | Response:
        account = self.state.authenticate({"api_key": call.request.headers.get("X-Api-Key")})
        return account if account is not None else error("AUTH_INVALID")

    # --- operations ---------------------------------------------------------------------------------

    def _quote(self, call: Call) -> dict[str, Any]:
        quote = self.ledger.create_quote(
            call.operation, call.fields, agency=self.agency(call), ttl_seconds=self.state.config["quote_ttl_seconds"]
        )
        body: dict[str, Any] = {
            "quote_no": quote.quote_no,
            "premium": money(quote.premium),
            "currency": "TRY",
            "valid_until": iso_utc(quote.valid_until),
        }
        if quote.sum_insured is not None:
            body["sum_insured"] = money(quote.sum_insured)
        return {**body, "coverages": coverage_list(quote), "installments": installment_list(quote)}

    def op_trafik_quote(self, call: Call) -> Response:
        return Response.json(200, self._quote(call))

    def op_kasko_quote(self, call: Call) -> Response:
        return Response.json(200, self._quote(call))

    def op_dask_address(self, call: Call) -> Response:
        address = self.ledger.address(call.fields)
        return Response.json(
            200, {"uavt_code": address.uavt_code, "address": address.line, "building_id": address.building_id}
        )

    def op_dask_quote(self, call: Call) -> Response:
        return Response.json(200, self._quote(call))

    def issuance_key(self, call: Call) -> str | None:
        return key_text(call.request.headers.get("Idempotency-Key"))

    def op_issue_policy(self, call: Call) -> Response:
        """Same key + same body: the original 201; same key + another body: 422.

        A repeat sent while the first is still running waited for it (``Insurer.claim_issuance_key``),
        so it lands here after the first bound the key.
        """
        key = call.request.headers.get("Idempotency-Key")
        if not key:
            raise InvalidField("Idempotency-Key", "missing")
        fingerprint = json.dumps(call.context["payload"], sort_keys=True)
        record_key = (self.agency(call), key)
        if record_key in self.ledger.dedup:
            original_fingerprint, original = self.ledger.dedup[record_key]
            if original_fingerprint != fingerprint:
                return error("IDEMPOTENCY_MISMATCH")
            return Response(original.status, original.body, original.content_type, [("Idempotent-Replayed", "true")])
        policy = self.ledger.issue(call.fields, agency=self.agency(call))
        call.issued_policy_no = policy.policy_no
        response = Response.json(201, {**policy_body(policy), "installments": policy.installments})
        # Only a success binds the key: a retry after a refusal or an error is served afresh.
        self.ledger.dedup[record_key] = (fingerprint, response)
        return response

    def op_policy_status(self, call: Call) -> Response:
        policy = self.ledger.policy(
            call.fields, agency=self.agency(call), known_only=self.state.config["known_policies_only"]
        )
        return Response.json(200, policy_body(policy))

    def op_policy_document(self, call: Call) -> Response:
        try:
            pdf = self.ledger.document(
                call.fields,
                agency=self.agency(call),
                known_only=self.state.config["known_policies_only"],
                insurer_name=self.document_name,
            )
        except DocumentNotReady as waiting:
            return not_ready(waiting.seconds)
        return Response(200, pdf, PDF)

    def op_unknown(self, call: Call) -> Response:
        return error("NOT_FOUND", f"No route for {call.request.method} {call.request.path}")

    # --- cancellation and the production list (CONTRACTS.md, the last two sections) ---------------

    def op_cancel_policy(self, call: Call) -> Response:
        """The Idempotency-Key first: a repeat is answered as one before any other check (same key
        and body: the first 200 again; another body: 422). Only a success binds the key."""
        key = call.request.headers.get("Idempotency-Key")
        if not key:
            raise InvalidField("Idempotency-Key", "missing")
        payload = call.context["payload"]
        fingerprint = json.dumps({"path": call.request.path, "body": payload}, sort_keys=True)
        record_key = (self.agency(call), key)
        if record_key in self.ledger.cancel_dedup:
            original_fingerprint, original = self.ledger.cancel_dedup[record_key]
            if original_fingerprint != fingerprint:
                return error("IDEMPOTENCY_MISMATCH")
            return Response(original.status, original.body, original.content_type, [("Idempotent-Replayed", "true")])
        match = CANCELLATION_PATH.fullmatch(call.request.path)
        assert match is not None  # routed here by it
        reason = domain.read_choice(payload.get("reason"), "reason", CANCEL_REASONS)
        effective_on = domain.read_date(payload.get("effective_on"), "effective_on")
        try:
            cancellation = self.ledger.cancel(
                agency=self.agency(call),
                policy_no=match["policy_no"],
                reason=reason,
                effective_on=effective_on,
                reference=key,
            )
        except domain.AlreadyCancelled as already:
            return already_cancelled(already.cancellation)
        except domain.CancelNotAllowed as refused:
            return error("CANCEL_NOT_ALLOWED", f"{ERRORS['CANCEL_NOT_ALLOWED'][1]}: {refused.detail}")
        response = Response.json(200, cancellation_body(cancellation))
        self.ledger.cancel_dedup[record_key] = (fingerprint, response)
        return response

    def op_policy_list(self, call: Call) -> Response:
        """``GET /v1/policies?issued_from&issued_to&page``: the agency's policies, newest first."""
        issued_from = domain.read_date(query_value(call.request, "issued_from"), "issued_from")
        issued_to = domain.read_date(query_value(call.request, "issued_to"), "issued_to")
        domain.check_list_range(issued_from, issued_to)
        page = domain.read_page(query_value(call.request, "page"))
        policies = self.ledger.production_list(agency=self.agency(call), issued_from=issued_from, issued_to=issued_to)
        items, pages = domain.page_of(policies, page)
        return Response.json(200, {"items": [listed_item(policy) for policy in items], "page": page, "pages": pages})

    def render_cancel_error(self, call: Call, code: str, rule: FaultRule) -> Response | None:
        """ALREADY_CANCELLED (served first, a committing code) carries the cancellation it names."""
        policy = self.ledger.policies.get(call.fields.get("policy_no") or "")
        if code != "ALREADY_CANCELLED" or policy is None or policy.status != "CANCELLED":
            return None
        return already_cancelled(self.ledger.cancellation_of(policy), rule.reason)

    # --- rendering ----------------------------------------------------------------------------------

    def render_invalid(self, call: Call, problem: InvalidField) -> Response:
        what = "is required" if problem.reason == "missing" else "is invalid"
        message = f"{problem.field} {what}" + (f": {problem.detail}" if problem.detail else "")
        return error("VALIDATION", message, field=problem.field)

    def render_refusal(self, call: Call, refusal: Refusal) -> Response:
        code = REFUSAL_CODES[refusal.kind]
        message = ERRORS[code][1] + (f": {refusal.detail}" if refusal.detail else "")
        return error(code, message)

    def render_throttle(self, call: Call, wait_seconds: float | None, *, from_bucket: bool) -> Response:
        seconds = ceil_seconds(wait_seconds or 0)
        response = error("RATE_LIMITED")
        response.headers.append(("Retry-After", str(max(1, seconds) if from_bucket else seconds)))
        return response

    def render_error(self, call: Call, code: str, rule: FaultRule) -> Response:
        if code in self.throttle_codes:
            return self.render_throttle(call, rule.wait(1.0), from_bucket=False)
        if code == "DOCUMENT_NOT_READY":
            return not_ready(rule.wait(1.0), rule.reason)
        response = error(code, rule.reason)
        wait = rule.wait(None)
        if (rule.http_status or response.status) == 503 and wait is not None:
            response.headers.append(("Retry-After", str(ceil_seconds(wait))))
        return response

    def apply_extra_fault(self, rule: FaultRule, call: Call) -> Response:
        response = self.handle(call)
        if response.status != 200 or response.content_type != JSON:
            return response
        body = json.loads(response.body)
        if not isinstance(body.get("coverages"), list):
            return response
        if rule.fault == "legacy_coverages":
            body["coverages"] = [entry["code"] for entry in body["coverages"]]
        else:
            body["coverages"] = [*body["coverages"], *BROKEN_COVERAGE_ENTRIES]
        return Response.json(200, body, response.headers)
