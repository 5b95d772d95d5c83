"""Çınar Sigorta: JSON with application errors inside HTTP 200, expiring bearer tokens,
``request_ref`` deduplication, and a gateway that throttles with 503 + an HTTP-date.

Çınar's error table has no "not found" code, so unknown quotes, policies and UAVT codes are
reported as a validation error of the field that named them (``VAL_TEKLIF_NO``,
``VAL_POLICE_NO``, ``VAL_UAVT_KODU``): the request pointed at something that does not exist.
"""

from __future__ import annotations

import math
import secrets
import time
from email.utils import formatdate
from typing import Any

from .core import BUSINESS_OPERATIONS, Account, FaultRule
from .domain import InvalidField, Refusal, iso_utc, money, validate
from .insurer import Call, Insurer, Request, Response, gateway_page, key_text, parse_json_object

API = "/api/v2/"
ISLEM: dict[str, str] = {
    "token": "token",
    "trafik-teklif": "trafik_quote",
    "kasko-teklif": "kasko_quote",
    "dask-adres": "dask_address",
    "dask-teklif": "dask_quote",
    "police-olustur": "issue_policy",
    "police-durum": "policy_status",
}
FIELDS: dict[str, str] = {
    "plaka": "plate",
    "kimlik_no": "owner_id",
    "belge_seri_no": "registration_serial",
    "kullanim": "usage",
    "model_yili": "model_year",
    "marka_kodu": "brand_code",
    "tip_kodu": "model_code",
    "uavt_kodu": "uavt_code",
    "bina_no": "building_id",
    "yapi_tarzi": "construction_type",
    "insa_yili": "construction_year",
    "kat_sayisi": "floor_count",
    "brut_m2": "gross_m2",
    "hasar_durumu": "damage_status",
    "teklif_no": "quote_no",
    "odeme_token": "payment_token",
    "police_no": "policy_no",
    "request_ref": "request_ref",
}
WIRE_NAMES = {platform: wire for wire, platform in FIELDS.items()}
MESSAGES: dict[str, str] = {
    "AUTH_INVALID_CLIENT": "Geçersiz istemci bilgileri",
    "AUTH_TOKEN_EXPIRED": "Erişim anahtarının süresi dolmuş",
    "BIZ_NOT_ELIGIBLE": "Araç teminata uygun değil",
    "BIZ_RISK_DECLINED": "Risk kabul edilmedi",
    "BIZ_QUOTE_EXPIRED": "Teklifin süresi dolmuş",
    "BIZ_DUPLICATE_REQUEST": "Bu request_ref ile daha önce poliçe oluşturuldu",
    "SYS_BUSY": "Sistem yoğun",
    "SYS_MAINTENANCE": "Sistem bakımda",
}
REFUSAL_CODES = {
    Refusal.QUOTE_EXPIRED: "BIZ_QUOTE_EXPIRED",
    Refusal.NOT_ELIGIBLE: "BIZ_NOT_ELIGIBLE",
    Refusal.RISK_DECLINED: "BIZ_RISK_DECLINED",
    Refusal.PAYMENT_DECLINED: "BIZ_RISK_DECLINED",
}
STATUS_WORDS = {"ACTIVE": "AKTIF", "CANCELLED": "IPTAL", "EXPIRED": "BITTI"}
COVERAGES = ["CARPISMA", "HIRSIZLIK", "YANGIN", "DOGAL_AFET", "CAM"]


def ok(data: dict[str, Any]) -> Response:
    return Response.json(200, {"success": True, "data": data})


def fail(code: str, message: str | None = None, data: dict[str, Any] | None = None) -> Response:
    body: dict[str, Any] = {
        "success": False,
        "errorCode": code,
        "message": message or MESSAGES.get(code, "Tanımlanmamış hata"),
    }
    if data is not None:
        body["data"] = data
    return Response.json(200, body)


def validation_code(platform_field: str) -> str:
    if platform_field == "owner_id":
        return "VAL_KIMLIK"
    return f"VAL_{WIRE_NAMES.get(platform_field, platform_field).upper()}"


class Cinar(Insurer):
    code = "cinar"
    prefix = "CN"
    operations = (*BUSINESS_OPERATIONS, "token")
    committing_codes = frozenset({"BIZ_DUPLICATE_REQUEST"})
    garbage_body = b'{"success": true, "data": {"teklif_no": "CN-T-000001", "prim": "4312.50", "para_birimi": "TRY"}}'

    def route(self, request: Request) -> Call:
        islem = request.path.removeprefix(API) if request.path.startswith(API) else None
        if request.method != "POST" or islem not in ISLEM:
            return Call("unknown", request)
        payload, problem = parse_json_object(request.body)
        fields = {FIELDS[key]: value for key, value in payload.items() if key in FIELDS}
        return Call(
            ISLEM[islem], request, fields=fields, wire_names=WIRE_NAMES, problem=problem, context={"payload": payload}
        )

    def authenticate(self, call: Call) -> Account | Response:
        if call.operation == "unknown":
            return gateway_page(404)
        if call.operation == "token":
            payload = call.context["payload"]
            account = self.state.authenticate(
                {"client_id": payload.get("client_id"), "client_secret": payload.get("client_secret")}
            )
            return account if account is not None else fail("AUTH_INVALID_CLIENT")
        scheme, _, token = (call.request.headers.get("Authorization") or "").partition(" ")
        with self.state.lock:
            identity, expires_at = self.ledger.tokens.get(token.strip(), (None, 0.0))
            if scheme.lower() != "bearer" or identity is None or time.time() >= expires_at:
                self.ledger.tokens.pop(token.strip(), None)
                return fail("AUTH_TOKEN_EXPIRED")
            account = self.state.account_for_identity(identity)
        return account if account is not None else fail("AUTH_TOKEN_EXPIRED")

    # --- operations ---------------------------------------------------------------------------------

    def op_token(self, call: Call) -> Response:
        """``success`` rides along so a client may check it uniformly; the contract's fields are top level."""
        ttl = self.state.config["token_ttl_seconds"]
        token = secrets.token_urlsafe(24)
        self.ledger.tokens[token] = (call.context["payload"]["client_id"], time.time() + ttl)
        expires_in = int(ttl) if float(ttl).is_integer() else ttl
        return Response.json(
            200, {"success": True, "access_token": token, "token_type": "Bearer", "expires_in": expires_in}
        )

    def _quote(self, call: Call) -> tuple[dict[str, Any], Any]:
        quote = self.ledger.create_quote(
            call.operation, call.fields, agency=self.agency(call), ttl_seconds=self.state.config["quote_ttl_seconds"]
        )
        data = {
            "teklif_no": quote.quote_no,
            "prim": money(quote.premium),
            "para_birimi": "TRY",
            "gecerlilik": iso_utc(quote.valid_until),
        }
        return data, quote

    def op_trafik_quote(self, call: Call) -> Response:
        return ok(self._quote(call)[0])

    def op_kasko_quote(self, call: Call) -> Response:
        return ok({**self._quote(call)[0], "teminatlar": COVERAGES})

    def op_dask_address(self, call: Call) -> Response:
        address = self.ledger.address(call.fields)
        return ok({"uavt_kodu": address.uavt_code, "adres": address.line, "bina_no": address.building_id})

    def op_dask_quote(self, call: Call) -> Response:
        data, quote = self._quote(call)
        return ok({**data, "sigorta_bedeli": money(quote.sum_insured)})

    def issuance_key(self, call: Call) -> str | None:
        return key_text(call.fields.get("request_ref"))

    def op_issue_policy(self, call: Call) -> Response:
        """A used ``request_ref`` answers BIZ_DUPLICATE_REQUEST with the policy it created.

        A repeat sent while the first is still running waited for it, so it lands here after
        the first bound the reference (or, if the first was refused, is served afresh).
        """
        validate(call.fields, ("quote_no", "payment_token", "request_ref"))
        record_key = (self.agency(call), call.fields["request_ref"])
        if record_key in self.ledger.dedup:
            return fail("BIZ_DUPLICATE_REQUEST", data={"police_no": self.ledger.dedup[record_key]})
        policy = self.ledger.issue(call.fields, agency=self.agency(call))
        call.issued_policy_no = policy.policy_no
        # Only a success binds the reference: a refused request may be sent again with it.
        self.ledger.dedup[record_key] = policy.policy_no
        return ok({"police_no": policy.policy_no, "durum": STATUS_WORDS[policy.status]})

    def op_policy_status(self, call: Call) -> Response:
        policy = self.ledger.policy(
            call.fields, agency=self.agency(call), known_only=self.state.config["known_policies_only"]
        )
        return ok({"police_no": policy.policy_no, "durum": STATUS_WORDS[policy.status]})

    # --- rendering ----------------------------------------------------------------------------------

    def render_invalid(self, call: Call, problem: InvalidField) -> Response:
        name = call.wire_name(problem.field)
        what = "zorunludur" if problem.reason == "missing" else "geçersiz"
        return fail(
            validation_code(problem.field), f"{name} {what}" + (f": {problem.detail}" if problem.detail else "")
        )

    def render_refusal(self, call: Call, refusal: Refusal) -> Response:
        if refusal.kind in (Refusal.NOT_FOUND, Refusal.ADDRESS_NOT_FOUND):
            field = refusal.field or "body"
            return fail(validation_code(field), f"{call.wire_name(field)}: kayıt bulunamadı")
        code = REFUSAL_CODES[refusal.kind]
        return fail(code, MESSAGES[code] + (f": {refusal.detail}" if refusal.detail else ""))

    def render_throttle(self, call: Call, wait_seconds: float | None, *, from_bucket: bool) -> Response:
        """The gateway's 503: ``Retry-After`` as an IMF-fixdate, rounded up, at least 1 s ahead."""
        retry_at = math.ceil(time.time() + max(wait_seconds or 0.0, 1.0))
        response = gateway_page(503)
        response.headers.append(("Retry-After", formatdate(retry_at, usegmt=True)))
        return response

    def render_error(self, call: Call, code: str, rule: FaultRule) -> Response:
        data: dict[str, Any] | None = None
        if code == "SYS_MAINTENANCE":
            wait = rule.wait(1.0)
            data = None if wait is None else {"retry_after_seconds": wait}
        elif code == "BIZ_DUPLICATE_REQUEST":
            # The issuance ran first (a committing code), so the policy it names really exists:
            # the one just created, or the one an earlier call with this request_ref created.
            earlier = self.ledger.dedup.get((self.agency(call), call.fields.get("request_ref")))
            data = {"police_no": call.issued_policy_no or earlier}
        return fail(code, rule.reason, data)
