"""Çınar Sigorta: JSON with application errors inside HTTP 200, expiring bearer tokens,
``request_ref`` deduplication, and a gateway that throttles with 503 + an HTTP-date.

Çınar's error table has no "not found" code, so unknown quotes, policies and UAVT codes are
reported as a validation error of the field that named them (``VAL_TEKLIF_NO``,
``VAL_POLICE_NO``, ``VAL_UAVT_KODU``): the request pointed at something that does not exist.
The one exception is the newer ``police-pdf`` islem, which answers ``BIZ_POLICY_NOT_FOUND``
(CONTRACTS.md, "Policy documents"); ``police-durum`` keeps its older ``VAL_POLICE_NO``.
"""

from __future__ import annotations

import base64
import json
import math
import secrets
import time
from datetime import date, datetime
from email.utils import formatdate
from typing import Any, ClassVar

from ... import domain
from ...core import BUSINESS_OPERATIONS, Account, FaultRule
from ...domain import DocumentNotReady, InvalidField, Refusal, iso_utc, money, validate
from ...insurer import Call, Insurer, Request, Response, gateway_page, key_text, parse_json_object
from ...ledger import Policy as LedgerPolicy
from ...ledger import Quote as LedgerQuote
from ...registry import register

API = "/api/v2/"
ISLEM: dict[str, str] = {
    "token": "token",
    "trafik-teklif": "trafik_quote",
    "kasko-teklif": "kasko_quote",
    "dask-adres": "dask_address",
    "dask-teklif": "dask_quote",
    "police-olustur": "issue_policy",
    "police-durum": "policy_status",
    "police-pdf": "policy_document",
    "police-iptal": "cancel_policy",
    "uretim-listesi": "policy_list",
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
# Quote and issuance terms (CONTRACTS.md, "Policy start", "Installments", "Kasko options"), read
# per islem (``baslangic`` names other dates in other islems). Dates are day.month.year.
START_FIELDS = {"baslangic": "starts_on"}
KASKO_OPTION_FIELDS = {
    "muafiyet": "deductible",
    "ikame_gun": "replacement_car_days",
    "imm_limit": "liability_limit",  # null: unlimited
    "servis_turu": "repair_shop",
}
TERM_FIELDS: dict[str, dict[str, str]] = {
    "trafik_quote": START_FIELDS,
    "kasko_quote": {**START_FIELDS, **KASKO_OPTION_FIELDS},
    "dask_quote": START_FIELDS,
    "issue_policy": {**START_FIELDS, "taksit_sayisi": "installments"},
}
REPAIR_SHOP_WORDS = {"yetkili": "authorized", "anlasmali": "contracted"}
# VAL_<wire name> as for every field, but the contract's VAL_TAKSIT for the installment count.
TERM_VALIDATION_CODES = {
    **{platform: f"VAL_{wire.upper()}" for names in TERM_FIELDS.values() for wire, platform in names.items()},
    "installments": "VAL_TAKSIT",
}
# What Çınar sells: no 15-day replacement car; its own İMM limits, unlimited among them.
KASKO_MENU = domain.KaskoMenu(replacement_car_days=(0, 7), liability_limits=(1_000_000, 3_000_000, None))
OPTION_COVERAGES: dict[str, tuple[str, str]] = {
    "liability": ("IMM", "İhtiyari mali mesuliyet"),
    "replacement_car": ("IKAME_ARAC", "İkame araç"),
    "deductible": ("MUAFIYET", "Muafiyet"),
}
MESSAGES: dict[str, str] = {
    "AUTH_INVALID_CLIENT": "Geçersiz istemci bilgileri",
    "AUTH_TOKEN_EXPIRED": "Erişim anahtarının süresi dolmuş",
    "BIZ_NOT_ELIGIBLE": "Araç teminata uygun değil",
    "BIZ_RISK_DECLINED": "Risk kabul edilmedi",
    "BIZ_QUOTE_EXPIRED": "Teklifin süresi dolmuş",
    "BIZ_DUPLICATE_REQUEST": "Bu request_ref ile daha önce poliçe oluşturuldu",
    "SYS_BUSY": "Sistem yoğun",
    "SYS_MAINTENANCE": "Sistem bakımda",
    "BIZ_POLICY_NOT_FOUND": "Poliçe bulunamadı",
    "DOC_NOT_READY": "Poliçe basımı henüz hazır değil",
    "BIZ_ALREADY_CANCELLED": "Poliçe zaten iptal edilmiş",
    "BIZ_CANCEL_NOT_ALLOWED": "Poliçe iptal edilemez",
}
REFUSAL_CODES = {
    Refusal.QUOTE_EXPIRED: "BIZ_QUOTE_EXPIRED",
    Refusal.NOT_ELIGIBLE: "BIZ_NOT_ELIGIBLE",
    Refusal.RISK_DECLINED: "BIZ_RISK_DECLINED",
    Refusal.PAYMENT_DECLINED: "BIZ_RISK_DECLINED",
}
STATUS_WORDS = {"ACTIVE": "AKTIF", "CANCELLED": "IPTAL", "EXPIRED": "BITTI"}
# Çınar's own codes and names for the covers the sandbox's domain offers (platform code -> wire).
# Çınar has no separate flood cover: its DOGAL_AFET ("natural disasters") is where flood sits.
COVERAGES: dict[str, tuple[str, str]] = {
    "bodily_injury": ("SAKATLANMA_OLUM", "Sakatlanma ve ölüm (kişi başı)"),
    "medical": ("TEDAVI", "Tedavi masrafları (kişi başı)"),
    "property_damage": ("MADDI_HASAR", "Maddi hasar (araç başı)"),
    "collision": ("CARPISMA", "Çarpışma"),
    "theft": ("HIRSIZLIK", "Hırsızlık"),
    "fire": ("YANGIN", "Yangın"),
    "flood": ("DOGAL_AFET", "Doğal afetler (sel ve su baskını dahil)"),
    "glass": ("CAM", "Cam kırılması"),
    "earthquake": ("DEPREM", "Deprem ve deprem kaynaklı yangın"),
}
# Fault kinds that change how a served answer is written (the call is served in full):
# - coverages_bare: the older coverage form, ``"teminatlar": ["CARPISMA", ...]``;
# - coverage_malformed / installment_malformed: unreadable entries added to the good ones;
# - document_not_base64 / document_not_pdf: police-pdf succeeds with a ``pdf_base64`` that is
#   not base64 (the PDF's, with ``*`` between lines), or is base64 of something that is not a PDF.
ANSWER_VARIANTS = frozenset(
    {"coverages_bare", "coverage_malformed", "installment_malformed", "document_not_base64", "document_not_pdf"}
)
MALFORMED_COVERAGES = [
    {"ad": "Kodu olmayan teminat", "limit": "1000.00"},
    {"kod": "ASISTANS", "ad": "Asistans", "limit": "sınırsız"},
    "",
    42,
]
MALFORMED_INSTALLMENTS = [
    {"taksit_sayisi": "üç", "toplam": "100.00"},
    {"taksit_sayisi": 2, "toplam": "-5.00"},
    {"taksit_sayisi": 99, "toplam": "100.00"},
    None,
]


def term_fields(operation: str, payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The operation's quote or issuance terms under the platform's names and values, and their
    wire names. ``01.12.2026`` becomes a date; what is no value of its kind stays as sent, for the
    ledger to refuse."""
    names = TERM_FIELDS.get(operation, {})
    fields: dict[str, Any] = {}
    for wire, platform in names.items():
        if wire not in payload:
            continue
        value = payload[wire]
        if wire == "baslangic" and value not in (None, ""):
            try:
                value = datetime.strptime(value.strip(), "%d.%m.%Y").date()
            except (AttributeError, ValueError):
                value = domain.Unreadable(value)  # an ISO date too: Çınar writes 01.12.2026
        elif wire == "servis_turu" and value not in (None, ""):
            value = REPAIR_SHOP_WORDS.get(value) if isinstance(value, str) else None
            value = value or domain.Unreadable(payload[wire])
        fields[platform] = value
    return fields, {platform: wire for wire, platform in names.items()}


def option_coverages(quote: LedgerQuote) -> list[dict[str, Any]]:
    """The kasko options the quote priced, as ``teminatlar`` entries: İMM with its limit (null:
    unlimited), the replacement car with its days in ``gun``, the deductible's amount as the limit."""
    entries = []
    for code, amount, days in domain.option_covers(quote.terms.options):
        kod, ad = OPTION_COVERAGES[code]
        entry: dict[str, Any] = {"kod": kod, "ad": ad, "limit": None if amount is None else money(amount)}
        if days is not None:
            entry["ad"], entry["gun"] = f"{ad} ({days} gün)", days
        entries.append(entry)
    return entries


def turkish_date(value: date) -> str:
    """Çınar writes calendar dates day.month.year (``01.12.2026``)."""
    return f"{value:%d.%m.%Y}"


def period(policy: LedgerPolicy | None) -> dict[str, str]:
    """``baslangic``/``bitis`` of a policy, when the ledger knows its period."""
    if policy is None or policy.starts_on is None or policy.ends_on is None:
        return {}
    return {"baslangic": turkish_date(policy.starts_on), "bitis": turkish_date(policy.ends_on)}


def quote_extras(operation: str, quote: LedgerQuote) -> dict[str, Any]:
    """Covers and payment plans every quote answer lists.

    ``teminatlar``: ``{"kod", "ad", "limit"}``, limit a decimal string or null (unlimited / not
    applicable). ``taksitler``: the contract only says "a count and the total"; Çınar's words for
    them here are ``taksit_sayisi`` (how many parts) and ``toplam`` (the whole premium paid so).
    """
    covers = []
    for code, limit in quote.covers():
        kod, ad = COVERAGES.get(code, (code.upper(), code))
        covers.append({"kod": kod, "ad": ad, "limit": None if limit is None else money(limit)})
    covers += option_coverages(quote)
    plans = [{"taksit_sayisi": count, "toplam": money(total)} for count, total in domain.installments(quote.premium)]
    return {"teminatlar": covers, "taksitler": plans}


# Cancellation and the production list (CONTRACTS.md, the last two sections). Their handlers read
# the body themselves: uretim-listesi's baslangic/bitis are the range of issue dates, not a
# policy's period, and its validation codes are its own.
CANCEL_REASONS = {
    "arac_satisi": "vehicle_sold",
    "musteri_talebi": "customer_request",
    "mukerrer": "duplicate",
    "diger": "other",
}
CANCEL_VALIDATION_CODES = {
    "policy_no": "VAL_POLICE_NO",
    "reason": "VAL_IPTAL_NEDENI",
    "effective_on": "VAL_IPTAL_TARIHI",
    "request_ref": "VAL_REQUEST_REF",
}
CANCEL_WIRE_NAMES = {"policy_no": "police_no", "reason": "iptal_nedeni", "effective_on": "iptal_tarihi"}
LIST_WIRE_NAMES = {"issued_from": "baslangic", "issued_to": "bitis", "page": "sayfa"}
DUPLICATE_CANCELLATION = "Bu request_ref ile daha önce iptal yapıldı"


def cancellation_data(cancellation: Any) -> dict[str, Any]:
    """police-iptal's ``data``: as on success, for BIZ_ALREADY_CANCELLED and BIZ_DUPLICATE_REQUEST too."""
    return {
        "police_no": cancellation.policy_no,
        "durum": STATUS_WORDS["CANCELLED"],
        "iade_prim": money(cancellation.refund),
        "iptal_tarihi": turkish_date(cancellation.cancelled_on),
    }


def listed_item(policy: LedgerPolicy) -> dict[str, Any]:
    """One ``data.policeler`` entry; ``teklif_no`` empty for a policy issued without a quote here."""
    # The production list holds issued or seeded policies: both record a premium with the issue time.
    assert policy.premium is not None
    return {
        "police_no": policy.policy_no,
        "teklif_no": policy.quote_no or "",
        "brans": policy.product,
        "durum": STATUS_WORDS[policy.status],
        **period(policy),
        "prim": money(policy.premium),
    }


def invalid(problem: InvalidField, codes: dict[str, str], names: dict[str, str]) -> Response:
    """A validation refusal of police-iptal or uretim-listesi in Çınar's words."""
    what = "zorunludur" if problem.reason == "missing" else "geçersiz"
    name = names.get(problem.field, problem.field)
    message = f"{name} {what}" + (f": {problem.detail}" if problem.detail else "")
    return fail(codes.get(problem.field) or validation_code(problem.field), message)


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
    if platform_field in TERM_VALIDATION_CODES:
        return TERM_VALIDATION_CODES[platform_field]
    if platform_field == "owner_id":
        return "VAL_KIMLIK"
    return f"VAL_{WIRE_NAMES.get(platform_field, platform_field).upper()}"


@register
class Cinar(Insurer):
    code = "cinar"
    prefix = "CN"
    port_offset = 2
    credential_keys = ("client_id", "client_secret")
    default_accounts = (
        {"agency_code": "ACENTE1", "credentials": {"client_id": "acente1", "client_secret": "cinar-secret-1"}},
        {"agency_code": "ACENTE2", "credentials": {"client_id": "acente2", "client_secret": "cinar-secret-2"}},
    )
    document_name = "Çınar Sigorta"  # printed on the policy PDFs
    operations = (*BUSINESS_OPERATIONS, "token")
    committing_codes = frozenset({"BIZ_DUPLICATE_REQUEST"})
    transient_faults: ClassVar[tuple[dict[str, Any], ...]] = (
        {"fault": "html", "http_status": 502},
        {"fault": "reset"},
        {"fault": "error", "code": "SYS_BUSY"},
    )
    cancel_committing_codes = frozenset({"BIZ_DUPLICATE_REQUEST", "BIZ_ALREADY_CANCELLED"})
    kasko_menu = KASKO_MENU
    extra_fault_kinds = ANSWER_VARIANTS
    garbage_body = b'{"success": true, "data": {"teklif_no": "CN-T-000001", "prim": "4312.50", "para_birimi": "TRY"}}'

    def route(self, request: Request) -> Call:
        islem = request.path.removeprefix(API) if request.path.startswith(API) else None
        if request.method != "POST" or islem not in ISLEM:
            return Call("unknown", request)
        payload, problem = parse_json_object(request.body)
        fields = {FIELDS[key]: value for key, value in payload.items() if key in FIELDS}
        terms, term_names = term_fields(ISLEM[islem], payload)
        fields.update(terms)
        return Call(
            ISLEM[islem],
            request,
            fields=fields,
            wire_names={**WIRE_NAMES, **term_names},
            problem=problem,
            context={"payload": payload},
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
            **quote_extras(call.operation, quote),
        }
        return data, quote

    def op_trafik_quote(self, call: Call) -> Response:
        return ok(self._quote(call)[0])

    def op_kasko_quote(self, call: Call) -> Response:
        return ok(self._quote(call)[0])

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
            return fail("BIZ_DUPLICATE_REQUEST", data=self._duplicate_data(self.ledger.dedup[record_key]))
        policy = self.ledger.issue(call.fields, agency=self.agency(call))
        call.issued_policy_no = policy.policy_no
        # Only a success binds the reference: a refused request may be sent again with it.
        self.ledger.dedup[record_key] = policy.policy_no
        data = {"police_no": policy.policy_no, "durum": STATUS_WORDS[policy.status], **period(policy)}
        return ok({**data, "taksit_sayisi": policy.installments})

    def _duplicate_data(self, policy_no: str | None) -> dict[str, Any]:
        """BIZ_DUPLICATE_REQUEST's data: the policy the reference created, with its period."""
        return {"police_no": policy_no, **period(None if policy_no is None else self.ledger.policies.get(policy_no))}

    def op_policy_status(self, call: Call) -> Response:
        policy = self.ledger.policy(
            call.fields, agency=self.agency(call), known_only=self.state.config["known_policies_only"]
        )
        return ok({"police_no": policy.policy_no, "durum": STATUS_WORDS[policy.status], **period(policy)})

    def op_policy_document(self, call: Call) -> Response:
        """The PDF, base64; while it is still being produced, DOC_NOT_READY with whole seconds to wait."""
        try:
            pdf = self.ledger.document(
                call.fields,
                agency=self.agency(call),
                known_only=self.state.config["known_policies_only"],
                insurer_name=self.document_name,
            )
        except DocumentNotReady as not_ready:
            return fail("DOC_NOT_READY", data={"retry_after_seconds": max(1, math.ceil(not_ready.seconds))})
        return ok({"pdf_base64": base64.b64encode(pdf).decode("ascii"), "sayfa_sayisi": 1})

    # --- cancellation and the production list ------------------------------------------------------

    def op_cancel_policy(self, call: Call) -> Response:
        """A used ``request_ref`` is answered BIZ_DUPLICATE_REQUEST with ``data`` as on success,
        before any other check; only a success binds it."""
        payload = call.context["payload"]
        try:
            reference = payload.get("request_ref")
            validate({"request_ref": reference}, ("request_ref",))
            record_key = (self.agency(call), reference)
            if record_key in self.ledger.cancel_dedup:
                first = self.ledger.cancellations[self.ledger.cancel_dedup[record_key]]
                return fail("BIZ_DUPLICATE_REQUEST", DUPLICATE_CANCELLATION, cancellation_data(first))
            reason = domain.read_choice(payload.get("iptal_nedeni"), "reason", CANCEL_REASONS)
            effective_on = domain.read_date(payload.get("iptal_tarihi"), "effective_on", dotted=True)
            cancellation = self.ledger.cancel(
                agency=self.agency(call),
                policy_no=payload.get("police_no"),
                reason=reason,
                effective_on=effective_on,
                reference=reference,
            )
        except InvalidField as problem:
            return invalid(problem, CANCEL_VALIDATION_CODES, CANCEL_WIRE_NAMES)
        except Refusal:  # the policy: police-iptal is of the newer islems, with a not-found code
            return fail("BIZ_POLICY_NOT_FOUND")
        except domain.AlreadyCancelled as already:
            return fail("BIZ_ALREADY_CANCELLED", data=cancellation_data(already.cancellation))
        except domain.CancelNotAllowed as refused:
            return fail("BIZ_CANCEL_NOT_ALLOWED", f"{MESSAGES['BIZ_CANCEL_NOT_ALLOWED']}: {refused.detail}")
        self.ledger.cancel_dedup[record_key] = cancellation.cancellation_id
        return ok(cancellation_data(cancellation))

    def op_policy_list(self, call: Call) -> Response:
        """uretim-listesi ``{baslangic, bitis, sayfa}`` (dates as ``01.11.2026``); VAL_TARIH for a bad range."""
        payload = call.context["payload"]
        try:
            issued_from = domain.read_date(payload.get("baslangic"), "issued_from", dotted=True)
            issued_to = domain.read_date(payload.get("bitis"), "issued_to", dotted=True)
            domain.check_list_range(issued_from, issued_to)
            page = domain.read_page(payload.get("sayfa"))
        except InvalidField as problem:
            codes = {"issued_from": "VAL_TARIH", "issued_to": "VAL_TARIH", "page": "VAL_SAYFA"}
            return invalid(problem, codes, LIST_WIRE_NAMES)
        policies = self.ledger.production_list(agency=self.agency(call), issued_from=issued_from, issued_to=issued_to)
        items, pages = domain.page_of(policies, page)
        return ok({"policeler": [listed_item(policy) for policy in items], "sayfa": page, "toplam_sayfa": pages})

    def render_cancel_error(self, call: Call, code: str, rule: FaultRule) -> Response | None:
        """BIZ_ALREADY_CANCELLED / BIZ_DUPLICATE_REQUEST (served first) carry the cancellation they name."""
        policy = self.ledger.policies.get(call.fields.get("policy_no") or "")
        if code not in self.cancel_committing_codes or policy is None or policy.status != "CANCELLED":
            return None
        message = rule.reason or (DUPLICATE_CANCELLATION if code == "BIZ_DUPLICATE_REQUEST" else None)
        return fail(code, message, cancellation_data(self.ledger.cancellation_of(policy)))

    # --- rendering ----------------------------------------------------------------------------------

    def render_invalid(self, call: Call, problem: InvalidField) -> Response:
        name = call.wire_name(problem.field)
        what = "zorunludur" if problem.reason == "missing" else "geçersiz"
        return fail(
            validation_code(problem.field), f"{name} {what}" + (f": {problem.detail}" if problem.detail else "")
        )

    def render_refusal(self, call: Call, refusal: Refusal) -> Response:
        if refusal.kind == Refusal.NOT_FOUND and call.operation == "policy_document":
            return fail("BIZ_POLICY_NOT_FOUND")
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
        if code in ("SYS_MAINTENANCE", "DOC_NOT_READY"):
            wait = rule.wait(1.0)
            data = None if wait is None else {"retry_after_seconds": wait}
        elif code == "BIZ_DUPLICATE_REQUEST":
            # The issuance ran first (a committing code), so the policy it names really exists:
            # the one just created, or the one an earlier call with this request_ref created.
            reference = key_text(call.fields.get("request_ref"))
            earlier = None if reference is None else self.ledger.dedup.get((self.agency(call), reference))
            data = self._duplicate_data(call.issued_policy_no or earlier)
        return fail(code, rule.reason, data)

    def apply_extra_fault(self, rule: FaultRule, call: Call) -> Response:
        """An answer variant: the call is served, then its ``data`` rewritten (successes only)."""
        response = self.handle(call)
        body = json.loads(response.body)
        data = body.get("data") if body.get("success") is True else None
        if not isinstance(data, dict):
            return response
        if rule.fault == "coverages_bare" and isinstance(data.get("teminatlar"), list):
            data["teminatlar"] = [entry["kod"] for entry in data["teminatlar"]]
        elif rule.fault == "coverage_malformed" and isinstance(data.get("teminatlar"), list):
            data["teminatlar"] = [*data["teminatlar"], *MALFORMED_COVERAGES]
        elif rule.fault == "installment_malformed" and isinstance(data.get("taksitler"), list):
            data["taksitler"] = [*data["taksitler"], *MALFORMED_INSTALLMENTS]
        elif rule.fault == "document_not_base64" and "pdf_base64" in data:
            # Characters outside the alphabet amid the real PDF's base64: a lenient decoder drops
            # them and gets the PDF back; a strict one says this is not base64.
            encoded = data["pdf_base64"]
            data["pdf_base64"] = "*".join(encoded[i : i + 64] for i in range(0, len(encoded), 64))
        elif rule.fault == "document_not_pdf" and "pdf_base64" in data:
            data["pdf_base64"] = base64.b64encode(b"<html><body>Basim hatasi</body></html>").decode("ascii")
        return Response.json(response.status, body, response.headers)
