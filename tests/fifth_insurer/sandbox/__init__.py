"""Ege Sigorta (test)'s sandbox: the fifth insurer's "test environment", served only in the tests.

Built like the four in `sandbox/`: the serving order, faults, accounts, throttle and dedup-key
holding come from `sandbox.insurer.Insurer`; quotes, policies, prices and PDFs from the shared
ledger and domain. This module only describes Ege's wire (adapter: `adapter.py`):

- auth: headers `X-Ege-Agent` + `X-Ege-Secret`, else 401 `E_KEY`;
- `POST /api/quotes/{trafik|kasko|dask}` -> `{"ref", "premium", "currency", "expires",
  "sum_insured"?, "covers": [{"code", "title", "limit"}], "plans": [{"n", "total"}]}`;
- `GET /api/addresses/{uavt}` -> `{"uavt", "text", "building"}`;
- `POST /api/policies` + `X-Ege-Reference` (required) -> 201 `{"policy": {"no", "state", "from",
  "to"}}`; the same reference again -> the first answer (+ `X-Ege-Replayed: true`), with another
  body -> 409 `E_REF_REUSED`; only a success binds a reference;
- `GET /api/policies/{no}` -> `{"policy": {...}}`; `GET /api/policies/{no}/pdf` -> the PDF, or
  425 `E_NOT_READY` + `Retry-After` while it is being produced;
- errors: the HTTP status + `{"fault": {"id", "text", "field"?}}`; throttle 429 `E_SLOW_DOWN` +
  `Retry-After`;
- `POST /api/policies/{no}/cancel` + `X-Ege-Reference` (required), `{"reason": "SATIS" | "TALEP" |
  "MUKERRER" | "DIGER", "date"}` -> 200 `{"cancellation": {"no", "state": "CANCELLED", "refund",
  "date"}}`; the reference again: as for issuance; already cancelled -> 409 `E_CANCELLED` with the
  first `cancellation`; a policy Ege will not cancel -> 422 `E_NOT_CANCELLABLE`;
- `GET /api/policies?from=&to=&page=` (page 1-based) -> `{"policies": [{"no", "quote", "product":
  "TRAFIK" | "KASKO" | "DASK", "state", "from", "to", "premium"}], "page", "more": true | false}`.
- quote and issuance terms under the platform's names, flat in the body: `starts_on` (ISO) on
  quotes and issuance, `installments` on issuance (one of the quote's `plans`), the kasko options
  `deductible`, `replacement_car_days`, `liability_limit` (null: unlimited), `repair_shop`; an
  unsold one is 400 `E_INPUT` with its `field`. Priced options come back among the `covers` as
  `IMM` (limit), `IKAME` (`days`) and `MUAF` (the deductible as the limit).
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from sandbox import domain
from sandbox.core import BUSINESS_OPERATIONS, Account, FaultRule
from sandbox.domain import DocumentNotReady, InvalidField, Refusal, iso_utc, money
from sandbox.insurer import Call, Insurer, Request, Response, ceil_seconds, key_text, parse_json_object, query_value
from sandbox.ledger import Cancellation, Policy, Quote
from sandbox.registry import register

# code -> (HTTP status, message)
ERRORS: dict[str, tuple[int, str]] = {
    "E_INPUT": (400, "Girdi hatalı"),
    "E_KEY": (401, "Acente kimliği doğrulanamadı"),
    "E_PRODUCT": (403, "Ürün yetkisi yok"),
    "E_UNKNOWN": (404, "Kayıt bulunamadı"),
    "E_REF_REUSED": (409, "Referans başka bir istekle kullanılmış"),
    "E_CANCELLED": (409, "Poliçe zaten iptal"),
    "E_NOT_CANCELLABLE": (422, "Poliçe iptal edilemez"),
    "E_STALE": (410, "Teklifin süresi dolmuş"),
    "E_VEHICLE": (422, "Araç teminata uygun değil"),
    "E_RISK": (422, "Risk kabul edilmedi"),
    "E_NOT_READY": (425, "Poliçe belgesi hazırlanıyor"),
    "E_SLOW_DOWN": (429, "Çok fazla istek"),
    "E_INTERNAL": (500, "İç hata"),
    "E_DOWN": (503, "Servis geçici olarak kapalı"),
}
UNKNOWN_CODE_STATUS = 422
REFUSAL_CODES = {
    Refusal.NOT_FOUND: "E_UNKNOWN",
    Refusal.ADDRESS_NOT_FOUND: "E_UNKNOWN",
    Refusal.QUOTE_EXPIRED: "E_STALE",
    Refusal.NOT_ELIGIBLE: "E_VEHICLE",
    Refusal.RISK_DECLINED: "E_RISK",
    Refusal.PAYMENT_DECLINED: "E_RISK",
}
# Ege's own cover codes (the adapter's COVERAGE_ALIASES maps them back).
COVER_CODES = {
    "bodily_injury": "KISI_BEDENI",
    "medical": "KISI_TEDAVI",
    "property_damage": "ARAC_MADDI",
    "collision": "CARPISMA",
    "theft": "HIRSIZLIK",
    "fire": "YANGIN",
    "flood": "SEL",
    "glass": "CAM",
    "earthquake": "DEPREM",
}
POLICY_STATES = {"ACTIVE": "LIVE", "CANCELLED": "CANCELLED", "EXPIRED": "LAPSED"}
# What Ege sells: two deductibles, two İMM limits (unlimited one of them), every replacement car.
KASKO_MENU = domain.KaskoMenu(deductibles=(0, 5000), liability_limits=(1_000_000, None))
OPTION_COVERS = {
    "liability": ("IMM", "İMM"),
    "replacement_car": ("IKAME", "İkame Araç"),
    "deductible": ("MUAF", "Muafiyet"),
}
PDF = "application/pdf"

ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("POST", re.compile(r"/api/quotes/trafik"), "trafik_quote"),
    ("POST", re.compile(r"/api/quotes/kasko"), "kasko_quote"),
    ("GET", re.compile(r"/api/addresses/(?P<uavt_code>[^/]+)"), "dask_address"),
    ("POST", re.compile(r"/api/quotes/dask"), "dask_quote"),
    ("POST", re.compile(r"/api/policies"), "issue_policy"),
    ("GET", re.compile(r"/api/policies/(?P<policy_no>[^/]+)"), "policy_status"),
    ("GET", re.compile(r"/api/policies/(?P<policy_no>[^/]+)/pdf"), "policy_document"),
    ("POST", re.compile(r"/api/policies/(?P<policy_no>[^/]+)/cancel"), "cancel_policy"),
    ("GET", re.compile(r"/api/policies"), "policy_list"),
]
CANCEL_REASONS = {"SATIS": "vehicle_sold", "TALEP": "customer_request", "MUKERRER": "duplicate", "DIGER": "other"}


def fault(code: str, message: str | None = None, *, field: str | None = None) -> Response:
    status, default_message = ERRORS.get(code, (UNKNOWN_CODE_STATUS, "Hata"))
    body: dict[str, Any] = {"id": code, "text": message or default_message}
    if field is not None:
        body["field"] = field
    return Response.json(status, {"fault": body})


def with_wait(response: Response, seconds: float | None) -> Response:
    """`Retry-After` in whole seconds, never 0 (a 0 invites a busy loop); none when not given."""
    if seconds is not None:
        response.headers.append(("Retry-After", str(max(1, ceil_seconds(seconds)))))
    return response


def policy_body(policy: Policy) -> dict[str, Any]:
    return {
        "policy": {
            "no": policy.policy_no,
            "state": POLICY_STATES[policy.status],
            "from": policy.starts_on.isoformat() if policy.starts_on else None,
            "to": policy.ends_on.isoformat() if policy.ends_on else None,
        }
    }


def cancellation_body(cancellation: Cancellation) -> dict[str, Any]:
    return {
        "cancellation": {
            "no": cancellation.policy_no,
            "state": POLICY_STATES["CANCELLED"],
            "refund": money(cancellation.refund),
            "date": cancellation.cancelled_on.isoformat(),
        }
    }


def listed_item(policy: Policy) -> dict[str, Any]:
    return {
        "no": policy.policy_no,
        "quote": policy.quote_no or "",
        "product": policy.product.upper(),
        "state": POLICY_STATES[policy.status],
        "from": policy.starts_on.isoformat() if policy.starts_on else None,
        "to": policy.ends_on.isoformat() if policy.ends_on else None,
        "premium": money(policy.premium) if policy.premium is not None else None,
    }


def quote_body(quote: Quote) -> dict[str, Any]:
    body: dict[str, Any] = {
        "ref": quote.quote_no,
        "premium": money(quote.premium),
        "currency": "TRY",
        "expires": iso_utc(quote.valid_until),
    }
    if quote.sum_insured is not None:
        body["sum_insured"] = money(quote.sum_insured)
    body["covers"] = [
        {
            "code": COVER_CODES.get(code, code),
            "title": COVER_CODES.get(code, code).replace("_", " ").title(),
            "limit": None if limit is None else money(limit),
        }
        for code, limit in quote.covers()
    ]
    for code, amount, days in domain.option_covers(quote.terms.options):
        cover: dict[str, Any] = {"code": OPTION_COVERS[code][0], "title": OPTION_COVERS[code][1]}
        cover["limit"] = None if amount is None else money(amount)
        if days is not None:
            cover["days"] = days
        body["covers"].append(cover)
    body["plans"] = [{"n": count, "total": money(total)} for count, total in domain.installments(quote.premium)]
    return body


@register
class Ege(Insurer):
    code = "ege"
    document_name = "Ege Sigorta"  # printed on the policy PDFs
    prefix = "EG"
    port_offset = 4
    credential_keys = ("agent_id", "secret")
    default_accounts = (
        {"agency_code": "ACENTE1", "credentials": {"agent_id": "EGE-ACENTE1", "secret": "ege-secret-1"}},
        {"agency_code": "ACENTE2", "credentials": {"agent_id": "EGE-ACENTE2", "secret": "ege-secret-2"}},
    )
    operations = BUSINESS_OPERATIONS
    throttle_codes = frozenset({"E_SLOW_DOWN"})
    transient_faults: ClassVar[tuple[dict[str, Any], ...]] = (
        {"fault": "html", "http_status": 502},
        {"fault": "reset"},
        {"fault": "error", "code": "E_DOWN", "wait_seconds": 1},
    )
    kasko_menu = KASKO_MENU
    garbage_body = b'{"ref": "EG-T-000001", "premium": "4312.50", "currency": "TRY", "expires": "2030-01-01T00:00:00Z"}'

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
        headers = call.request.headers
        presented = {"agent_id": headers.get("X-Ege-Agent"), "secret": headers.get("X-Ege-Secret")}
        account = self.state.authenticate(presented)
        return account if account is not None else fault("E_KEY")

    # --- operations ---------------------------------------------------------------------------------

    def _quote(self, call: Call) -> Response:
        quote = self.ledger.create_quote(
            call.operation, call.fields, agency=self.agency(call), ttl_seconds=self.state.config["quote_ttl_seconds"]
        )
        return Response.json(200, quote_body(quote))

    op_trafik_quote = op_kasko_quote = op_dask_quote = _quote

    def op_dask_address(self, call: Call) -> Response:
        address = self.ledger.address(call.fields)
        return Response.json(200, {"uavt": address.uavt_code, "text": address.line, "building": address.building_id})

    def issuance_key(self, call: Call) -> str | None:
        return key_text(call.request.headers.get("X-Ege-Reference"))

    def op_issue_policy(self, call: Call) -> Response:
        """The reference again: the first answer (same body) or 409 (another body)."""
        reference = call.request.headers.get("X-Ege-Reference")
        if not reference:
            raise InvalidField("X-Ege-Reference", "missing")
        fingerprint = json.dumps(call.context["payload"], sort_keys=True)
        record_key = (self.agency(call), reference)
        if record_key in self.ledger.dedup:
            original_fingerprint, original = self.ledger.dedup[record_key]
            if original_fingerprint != fingerprint:
                return fault("E_REF_REUSED")
            return Response(200, original.body, original.content_type, [("X-Ege-Replayed", "true")])
        policy = self.ledger.issue(call.fields, agency=self.agency(call))
        call.issued_policy_no = policy.policy_no
        body = policy_body(policy)
        body["policy"]["installments"] = policy.installments  # the count chosen, answered back
        response = Response.json(201, body)

        self.ledger.dedup[record_key] = (fingerprint, response)  # only a success binds the reference
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
            return with_wait(fault("E_NOT_READY"), waiting.seconds)
        return Response(200, pdf, PDF)

    def op_cancel_policy(self, call: Call) -> Response:
        """The reference first, as for issuance: the first answer again, or 409 for another body."""
        reference = call.request.headers.get("X-Ege-Reference")
        if not reference:
            raise InvalidField("X-Ege-Reference", "missing")
        payload = call.context["payload"]
        fingerprint = json.dumps({"path": call.request.path, "body": payload}, sort_keys=True)
        record_key = (self.agency(call), reference)
        if record_key in self.ledger.cancel_dedup:
            original_fingerprint, original = self.ledger.cancel_dedup[record_key]
            if original_fingerprint != fingerprint:
                return fault("E_REF_REUSED")
            return Response(200, original.body, original.content_type, [("X-Ege-Replayed", "true")])
        reason = domain.read_choice(payload.get("reason"), "reason", CANCEL_REASONS)
        effective_on = domain.read_date(payload.get("date"), "date")
        policy_no = call.request.path.removeprefix("/api/policies/").removesuffix("/cancel")
        try:
            cancellation = self.ledger.cancel(
                agency=self.agency(call), policy_no=policy_no, reason=reason, effective_on=effective_on
            )
        except domain.AlreadyCancelled as already:
            body = json.loads(fault("E_CANCELLED").body)
            return Response.json(409, {**body, **cancellation_body(already.cancellation)})
        except domain.CancelNotAllowed as refused:
            return fault("E_NOT_CANCELLABLE", f"{ERRORS['E_NOT_CANCELLABLE'][1]}: {refused.detail}")
        response = Response.json(200, cancellation_body(cancellation))
        self.ledger.cancel_dedup[record_key] = (fingerprint, response)  # only a success binds the reference
        return response

    def op_policy_list(self, call: Call) -> Response:
        issued_from = domain.read_date(query_value(call.request, "from"), "from")
        issued_to = domain.read_date(query_value(call.request, "to"), "to")
        domain.check_list_range(issued_from, issued_to, field="to")
        page = domain.read_page(query_value(call.request, "page"))
        policies = self.ledger.production_list(agency=self.agency(call), issued_from=issued_from, issued_to=issued_to)
        items, pages = domain.page_of(policies, page)
        return Response.json(
            200, {"policies": [listed_item(policy) for policy in items], "page": page, "more": page < pages}
        )

    def op_unknown(self, call: Call) -> Response:
        return fault("E_UNKNOWN", f"{call.request.method} {call.request.path} yok")

    # --- rendering ----------------------------------------------------------------------------------

    def render_invalid(self, call: Call, problem: InvalidField) -> Response:
        what = "zorunlu" if problem.reason == "missing" else "geçersiz"
        message = f"{problem.field} {what}" + (f": {problem.detail}" if problem.detail else "")
        return fault("E_INPUT", message, field=problem.field)

    def render_refusal(self, call: Call, refusal: Refusal) -> Response:
        code = REFUSAL_CODES[refusal.kind]
        return fault(code, ERRORS[code][1] + (f": {refusal.detail}" if refusal.detail else ""))

    def render_throttle(self, call: Call, wait_seconds: float | None, *, from_bucket: bool) -> Response:
        return with_wait(fault("E_SLOW_DOWN"), wait_seconds or (1.0 if from_bucket else None))

    def render_error(self, call: Call, code: str, rule: FaultRule) -> Response:
        if code in self.throttle_codes:
            return self.render_throttle(call, rule.wait(1.0), from_bucket=False)
        if code == "E_NOT_READY":
            return with_wait(fault(code, rule.reason), rule.wait(1.0))
        response = fault(code, rule.reason)
        if (rule.http_status or response.status) == 503:
            with_wait(response, rule.wait(None))
        return response
