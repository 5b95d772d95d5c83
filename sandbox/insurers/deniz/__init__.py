"""Deniz Sigorta: REST/JSON behind HTTP Basic, slow, with asynchronous, polled issuance.

``POST /policy-requests`` answers 202 PROCESSING. The outcome is decided at once (so a policy
is created, and counted, exactly once) but only revealed ``issuance_processing_seconds``
later, when a poll turns ISSUED or REJECTED. A ``client_reference`` binds to the first
accepted request, whatever its outcome: "the earlier request stands". Polls and lookups are
another cluster's: for ``poll_lag_seconds`` after the 202 they do not know the request yet.

Policy documents come in two steps (CONTRACTS.md, last section): ``GET /policies/{no}/document``
answers 303 to ``/documents/{token}``, a link valid for 60 s that needs no credentials (the
token is the credential), or 202 GENERATING with ``Retry-After`` while the PDF is being made.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import secrets
import time
from collections import deque
from dataclasses import dataclass
from datetime import date
from typing import Any, ClassVar

from ... import domain
from ...core import BUSINESS_OPERATIONS, Account, FaultRule, SandboxState
from ...domain import (
    DECLINED_PAYMENT_TOKEN,
    OPERATION_FIELDS,
    DocumentNotReady,
    InvalidField,
    Refusal,
    iso_utc,
    money,
    validate,
)
from ...insurer import Call, Insurer, Request, Response, ceil_seconds, key_text, parse_json_object, query_value
from ...ledger import Cancellation, Policy, PolicyRequest, Quote
from ...registry import register

# code -> (HTTP status, detail)
ERRORS: dict[str, tuple[int, str]] = {
    "INVALID_REQUEST": (400, "Malformed request"),
    "UNAUTHORIZED": (401, "Bad credentials"),
    "AGENCY_NOT_AUTHORIZED": (403, "Agency may not sell this product"),
    "NOT_FOUND": (404, "Not found"),
    "DUPLICATE_REFERENCE": (409, "client_reference already used; the earlier request stands"),
    "UNDERWRITING_DECLINED": (422, "Underwriting declined"),
    "QUOTE_EXPIRED": (422, "Quote has expired"),
    "ALREADY_CANCELLED": (409, "Policy is already cancelled; poll its cancellation"),
    "CANCEL_NOT_ALLOWED": (422, "Policy cannot be cancelled"),
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
    ("GET", re.compile(r"/policies/(?P<policy_no>[^/]+)/document"), "policy_document"),
    ("GET", re.compile(r"/documents/(?P<token>[^/]+)"), "document_download"),
    ("POST", re.compile(r"/policies/(?P<policy_no>[^/]+)/cancellations"), "cancel_policy"),
    ("GET", re.compile(r"/cancellations/(?P<cancellation_id>[^/]+)"), "cancel_poll"),
    ("GET", re.compile(r"/policies"), "policy_list"),
]
# Cancellation and the production list (CONTRACTS.md, the last two sections).
CANCEL_REASONS = {
    "VEHICLE_SOLD": "vehicle_sold",
    "CUSTOMER_REQUEST": "customer_request",
    "DUPLICATE": "duplicate",
    "OTHER": "other",
}
# Refusals Deniz decides in the background: the cancellation is accepted (202) and its poll ends
# REJECTED with this as the reason. An expired policy is refused at once (422 CANCEL_NOT_ALLOWED).
DEFERRED_CANCEL_REFUSALS = frozenset({"OPEN_CLAIM"})
# Deniz's coverage codes are the platform's own; the labels are Deniz's Turkish wording.
COVERAGE_LABELS = {
    "bodily_injury": "Ölüm ve sürekli sakatlık (kişi başı)",
    "medical": "Sağlık giderleri (kişi başı)",
    "property_damage": "Maddi zararlar (araç başı)",
    "collision": "Çarpma ve çarpışma",
    "theft": "Hırsızlık",
    "fire": "Yangın",
    "flood": "Sel ve su baskını",
    "glass": "Cam kırılması",
    "earthquake": "Deprem",
}
# What the `broken_coverages` fault appends: entries no reader can make a cover or a plan of.
BROKEN_COVERAGE_ENTRIES: list[Any] = [
    {"code": "", "label": "Kodsuz teminat", "sum_insured": {"amount": "1000.00", "currency": "TRY"}},
    {"code": "theft", "label": "Hırsızlık", "sum_insured": {"amount": "sınırsız", "currency": "TRY"}},
    {"code": "fire", "label": "Yangın", "sum_insured": {"amount": "5000.00", "currency": "EUR"}},
    42,
    None,
]
BROKEN_INSTALLMENT_ENTRIES: list[Any] = [
    {"count": 0, "total": {"amount": "100.00", "currency": "TRY"}},
    {"count": 3, "total": {"amount": "üç bin", "currency": "TRY"}},
    {"total": {"amount": "100.00", "currency": "TRY"}},
    "12",
]
# Kasko options under ``risk.options`` (CONTRACTS.md, "Kasko options"): money as amount objects,
# the repair shop in Deniz's words. What Deniz sells: always a deductible (none at 0), no unlimited
# İMM, and only its contracted repair shops.
KASKO_MENU = domain.KaskoMenu(
    deductibles=(2500, 5000, 10000),
    liability_limits=(1_000_000, 5_000_000, 10_000_000),
    repair_shops=("contracted",),
)
REPAIR_SHOP_WORDS = {"AUTHORIZED": "authorized", "CONTRACTED": "contracted"}
OPTION_COVERAGE_LABELS = {
    "liability": "İhtiyari mali sorumluluk",
    "replacement_car": "İkame araç",
    "deductible": "Muafiyet",
}
PDF = "application/pdf"
# How long a document link stays valid (CONTRACTS.md: 60 s).
DOCUMENT_LINK_SECONDS = 60.0


@dataclass(frozen=True)
class DocumentLink:
    """What a ``/documents/{token}`` link stands for: one agency's policy, until ``expires_at``."""

    policy_no: str
    agency: str
    identity: str  # the account that asked for the link (its rate limit pays for the download)
    expires_at: float  # epoch seconds


def amount(value: Any) -> dict[str, str] | None:
    """Deniz writes every sum of money as an amount object (like ``gross_premium``); None stays null."""
    return None if value is None else {"amount": money(value), "currency": "TRY"}


def coverage_list(quote: Quote) -> list[dict[str, Any]]:
    """The quote's covers: code, Deniz's label, ``sum_insured`` (null: unlimited / not applicable)."""
    return [
        {"code": code, "label": COVERAGE_LABELS.get(code, code), "sum_insured": amount(limit)}
        for code, limit in quote.covers()
    ] + option_coverage_list(quote)


def option_coverage_list(quote: Quote) -> list[dict[str, Any]]:
    """The kasko options the quote priced, as covers: İMM with its limit (null: unlimited), the
    replacement car with its ``days``, the deductible's amount as its ``sum_insured``."""
    entries = []
    for code, sum_insured, days in domain.option_covers(quote.terms.options):
        label = OPTION_COVERAGE_LABELS[code]
        entry: dict[str, Any] = {"code": code, "label": label, "sum_insured": amount(sum_insured)}
        if days is not None:
            entry["label"], entry["days"] = f"{entry['label']} ({days} gün)", days
        entries.append(entry)
    return entries


def _money_term(value: Any) -> Any:
    """``{"amount", "currency": "TRY"}`` as the amount; anything else is unreadable (a bare number too)."""
    if isinstance(value, dict) and value.get("currency") == "TRY" and set(value) == {"amount", "currency"}:
        return value["amount"]
    return domain.Unreadable(value)


def risk_terms(risk: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str], InvalidField | None]:
    """``risk.starts_on`` and ``risk.options`` under the platform's names and values, their wire
    names, and the problem if ``risk.options`` is not an object."""
    fields: dict[str, Any] = {}
    names = {"starts_on": "risk.starts_on"} | {name: f"risk.options.{name}" for name in domain.KASKO_OPTION_FIELDS}
    if "starts_on" in risk:
        fields["starts_on"] = risk["starts_on"]
    options = risk.get("options")
    if options is None:
        return fields, names, None
    if not isinstance(options, dict):
        return fields, {**names, "options": "risk.options"}, InvalidField("options", "invalid")
    for name in domain.KASKO_OPTION_FIELDS:
        if not domain.is_given(options, name):
            continue
        value = options[name]
        if name == "deductible" or (name == "liability_limit" and value is not None):
            value = _money_term(value)
        elif name == "repair_shop":
            value = REPAIR_SHOP_WORDS.get(value) if isinstance(value, str) else None
            value = value or domain.Unreadable(options[name])
        fields[name] = value
    return fields, names, None


def installment_list(quote: Quote) -> list[dict[str, Any]]:
    """Payment plans. The contract only says "a count and the total"; Deniz writes the total as
    it writes every sum, an amount object, and lists the single payment (count 1) too."""
    return [{"count": count, "total": amount(total)} for count, total in domain.installments(quote.premium)]


def period(policy: Policy | None) -> dict[str, str] | None:
    """``{"from", "to"}`` in Türkiye's calendar, or None when the policy has no known period."""
    if policy is None or policy.starts_on is None or policy.ends_on is None:
        return None
    return {"from": policy.starts_on.isoformat(), "to": policy.ends_on.isoformat()}


def error(code: str, detail: str | None = None, **extra: Any) -> Response:
    status, default_detail = ERRORS.get(code, (UNKNOWN_CODE_STATUS, "Error"))
    response = Response.json(status, {"code": code, "detail": detail or default_detail, **extra})
    if status == 401:
        response.headers.append(("WWW-Authenticate", 'Basic realm="Deniz Sigorta"'))
    return response


def list_cursor(issued_from: date, issued_to: date, offset: int) -> str:
    """An opaque ``next_cursor``: which list it belongs to, and where its page starts."""
    raw = f"{issued_from.isoformat()}|{issued_to.isoformat()}|{offset}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def cursor_offset(cursor: str, issued_from: date, issued_to: date) -> int:
    """Where the cursor's page starts; INVALID_REQUEST for a cursor that is none, or another range's."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        cursor_from, cursor_to, offset = raw.split("|")
        if int(offset) < 0:
            raise ValueError(offset)
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise InvalidField("cursor", "invalid", "not a cursor of this list") from None
    if (cursor_from, cursor_to) != (issued_from.isoformat(), issued_to.isoformat()):
        raise InvalidField("cursor", "invalid", "a cursor from another range")
    return int(offset)


def listed_item(policy: Policy) -> dict[str, Any]:
    """One production-list item; ``quote_id`` empty for a policy issued without a quote here."""
    return {
        "policy_no": policy.policy_no,
        "quote_id": policy.quote_no or "",
        "product": policy.product.upper(),
        "state": STATE_WORDS[policy.status],
        "period": period(policy),
        "gross_premium": amount(policy.premium),
    }


def cancellation_view(cancellation: Cancellation, now: float) -> dict[str, Any]:
    """``GET /cancellations/{id}``: PROCESSING, then DONE with the refund, or REJECTED with why."""
    status = cancellation.status(now)
    view: dict[str, Any] = {"cancellation_id": cancellation.cancellation_id, "status": status}
    if status == "DONE":
        view["refund"] = amount(cancellation.refund)
        view["effective_on"] = cancellation.cancelled_on.isoformat()
    elif status == "REJECTED":
        view["reason"] = cancellation.rejected
    return view


def basic_credentials(header: str | None) -> dict[str, str | None]:
    scheme, _, encoded = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return {"username": None, "password": None}
    try:
        username, _, password = base64.b64decode(encoded.strip(), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return {"username": None, "password": None}
    return {"username": username, "password": password}


@register
class Deniz(Insurer):
    code = "deniz"
    document_name = "Deniz Sigorta"  # printed on the policy PDFs
    prefix = "DZ"
    port_offset = 3
    credential_keys = ("username", "password")
    default_accounts = (
        {"agency_code": "ACENTE1", "credentials": {"username": "acente1", "password": "deniz-pass-1"}},
        {"agency_code": "ACENTE2", "credentials": {"username": "acente2", "password": "deniz-pass-2"}},
    )
    # Deniz is slow on quotes (1-4 s in the demo), quick enough on everything else.
    realistic_latency_ms = {**{operation: [1000, 4000] for operation in domain.QUOTE_OPERATIONS}, "*": [200, 800]}
    operations = (*BUSINESS_OPERATIONS, "issue_lookup", "issue_poll", "document_download", "cancel_poll")
    # "broken_coverages": a rough release's quote, with entries no reader can use appended to its
    # coverages and installments. "absolute_location": the document's 303 names its link as an
    # absolute URL, on the origin in the rule's ``reason`` (default: the Host it was asked on),
    # to test a client that must follow only its insurer's own base URL.
    extra_fault_kinds = frozenset({"reject", "broken_coverages", "absolute_location"})
    throttle_codes = frozenset({"TOO_MANY_REQUESTS"})
    transient_faults: ClassVar[tuple[dict[str, Any], ...]] = (
        {"fault": "error", "code": "SERVICE_UNAVAILABLE"},
        {"fault": "reset"},
        {"fault": "error", "code": "INTERNAL_ERROR"},
    )
    kasko_menu = KASKO_MENU
    committing_codes = frozenset({"DUPLICATE_REFERENCE"})
    cancel_committing_codes = frozenset({"DUPLICATE_REFERENCE", "ALREADY_CANCELLED"})
    garbage_body = (
        b'{"quote_id": "DZ-T-000001", "gross_premium": {"amount": "4312.50", "currency": "TRY"}, '
        b'"expires_at": "2030-01-01T00:00:00Z"}'
    )

    def __init__(self, state: SandboxState) -> None:
        super().__init__(state)
        # Document links handed out, by token (guarded by state.lock). Not cleared by a state
        # reset: a link outlives nothing but its policy, which the download looks up afresh.
        self._document_links: dict[str, DocumentLink] = {}
        self.document_link_seconds = DOCUMENT_LINK_SECONDS  # tests shorten it to see a link expire
        # (policy_no, carried an Authorization header?) per served download, for tests to check
        # that a client does not send its credentials to a link that needs none. Bounded: a demo
        # sandbox runs for days.
        self.document_downloads: deque[tuple[str, bool]] = deque(maxlen=1000)

    def route(self, request: Request) -> Call:
        for method, pattern, operation in ROUTES:
            match = pattern.fullmatch(request.path)
            if not match or request.method != method:
                continue
            if operation == "quote":
                return self._quote_call(request)
            if operation == "document_download":
                return self._download_call(request, match["token"])
            call = Call(operation, request, fields=dict(match.groupdict()))
            if operation == "issue_policy":
                payload, call.problem = parse_json_object(request.body)
                call.fields = {
                    "quote_no": payload.get("quote_id"),
                    **{k: payload.get(k) for k in ("payment_token", "client_reference")},
                }
                # Policy start and installments, top level beside the quote (Deniz's request has no risk).
                call.fields.update({k: payload[k] for k in ("starts_on", "installments") if k in payload})
                call.wire_names = ISSUE_WIRE_NAMES
            elif operation == "issue_lookup":
                call.fields = {"client_reference": query_value(request, "client_reference")}
            return call
        return Call("unknown", request)

    def _quote_call(self, request: Request) -> Call:
        """``{"product", "insured": {owner_id}, "risk": {...}}``: one URL, three operations."""
        payload, problem = parse_json_object(request.body)
        # The body's product as sent (any JSON value): one that is not a product name is not found.
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
        # No problem means each check above passed.
        assert operation is not None and isinstance(insured, dict) and isinstance(risk, dict)
        names = OPERATION_FIELDS[operation]
        fields = {name: risk.get(name) for name in names if name != "owner_id"}
        fields["owner_id"] = insured.get("owner_id")
        wire_names = {name: f"risk.{name}" for name in names} | {"owner_id": "insured.owner_id"}
        terms, term_names, problem = risk_terms(risk)
        fields.update(terms)
        wire_names |= term_names
        return Call(operation, request, fields=fields, wire_names=wire_names, problem=problem)

    def _download_call(self, request: Request, token: str) -> Call:
        """A document link: the policy it stands for (so fault rules can match ``policy_no``)."""
        call = Call("document_download", request)
        with self.state.lock:
            link = self._live_link(token)
        if link is not None:
            call.fields = {"policy_no": link.policy_no}
            call.context["link"] = link
            call.context["token"] = token
        return call

    def _live_link(self, token: str) -> DocumentLink | None:
        """The link behind a token, or None when unknown or expired (state.lock held)."""
        link = self._document_links.get(token)
        if link is not None and time.time() >= link.expires_at:
            del self._document_links[token]
            return None
        return link

    def authenticate(self, call: Call) -> Account | Response:
        if call.operation == "document_download":
            # No credentials on a document link: the token is the credential. The download is
            # still the account's call, so it is rate limited (and counted) as that account's:
            # a real gateway counts every request, and a link must not be a way past the rate.
            link: DocumentLink | None = call.context.get("link")
            account = self.state.account_for_identity(link.identity) if link is not None else None
            return account if account is not None else error("NOT_FOUND", "Unknown or expired document link")
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
                "gross_premium": amount(quote.premium),
                "expires_at": iso_utc(quote.valid_until),
                "coverages": coverage_list(quote),
                "installments": installment_list(quote),
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
        starts_on, installments = self.ledger.issuance_terms(quote, call.fields)
        now = time.time()
        reason = call.reject_reason
        if reason is None and call.fields["payment_token"] == DECLINED_PAYMENT_TOKEN:
            reason = "PAYMENT_DECLINED"
        policy_no = None
        if not reason:
            policy_no = self.ledger.create_policy(quote, starts_on=starts_on, installments=installments).policy_no
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
            policy = self.ledger.policies.get(request.policy_no or "")
            policy_period = period(policy)
            if policy_period is not None:
                view["period"] = policy_period
            if policy is not None:
                view["installments"] = policy.installments
        elif status == "REJECTED":
            view["reason"] = request.reason
        return view

    def op_policy_status(self, call: Call) -> Response:
        policy = self.ledger.policy(
            call.fields, agency=self.agency(call), known_only=self.state.config["known_policies_only"]
        )
        body: dict[str, Any] = {"policy_no": policy.policy_no, "state": STATE_WORDS[policy.status]}
        policy_period = period(policy)
        if policy_period is not None:
            body["period"] = policy_period
        return Response.json(200, body)

    def op_policy_document(self, call: Call) -> Response:
        """303 to a fresh 60 s link when the PDF is ready; 202 GENERATING + Retry-After before."""
        agency = self.agency(call)
        try:
            self._document(call.fields, agency)
        except DocumentNotReady as not_ready:
            # Whole seconds, never 0: a 0 invites a busy loop.
            retry_after = str(max(1, ceil_seconds(not_ready.seconds)))
            return Response.json(202, {"status": "GENERATING"}, [("Retry-After", retry_after)])
        now = time.time()
        for token in [t for t, link in self._document_links.items() if now >= link.expires_at]:
            del self._document_links[token]
        token = secrets.token_urlsafe(24)
        assert call.account is not None
        identity = call.account.credentials[self.credential_keys[0]]
        self._document_links[token] = DocumentLink(
            call.fields["policy_no"], agency, identity, expires_at=now + self.document_link_seconds
        )
        return Response(303, b"", None, [("Location", f"/documents/{token}")])

    def op_document_download(self, call: Call) -> Response:
        """The PDF behind a live link (it may have expired while the call sat in latency)."""
        link = self._live_link(call.context.get("token", ""))
        if link is None:
            raise Refusal(Refusal.NOT_FOUND, "document link expired")
        pdf = self._document({"policy_no": link.policy_no}, link.agency)
        self.document_downloads.append((link.policy_no, "Authorization" in call.request.headers))
        disposition = ("Content-Disposition", f'inline; filename="{link.policy_no}.pdf"')
        return Response(200, pdf, PDF, [disposition])

    def _document(self, fields: dict[str, Any], agency: str) -> bytes:
        known_only = self.state.config["known_policies_only"]
        return self.ledger.document(fields, agency=agency, known_only=known_only, insurer_name=self.document_name)

    def op_unknown(self, call: Call) -> Response:
        return error("NOT_FOUND", f"No route for {call.request.method} {call.request.path}")

    # --- cancellation and the production list ------------------------------------------------------

    def op_cancel_policy(self, call: Call) -> Response:
        """202 and a cancellation to poll, decided at once (revealed after
        ``issuance_processing_seconds``, seen by polls after ``poll_lag_seconds``). A used
        ``client_reference`` is answered 409 DUPLICATE_REFERENCE with the cancellation it made,
        before any other check, whatever that cancellation's outcome."""
        payload, problem = parse_json_object(call.request.body)
        if problem is not None:
            raise problem
        reference = payload.get("client_reference")
        validate({"client_reference": reference}, ("client_reference",))
        assert isinstance(reference, str)  # validate refused anything but a well-formed reference
        agency = self.agency(call)
        record_key = (agency, reference)
        if record_key in self.ledger.cancel_dedup:
            cancellation_id = self.ledger.cancel_dedup[record_key]
            return error(
                "DUPLICATE_REFERENCE",
                "client_reference already used; the earlier cancellation stands",
                cancellation_id=cancellation_id,
            )
        reason = domain.read_choice(payload.get("reason"), "reason", CANCEL_REASONS)
        effective_on = domain.read_date(payload.get("effective_on"), "effective_on")
        config = self.state.config
        try:
            cancellation = self.ledger.cancel(
                agency=agency,
                policy_no=call.fields["policy_no"],
                reason=reason,
                effective_on=effective_on,
                reference=reference,
                processing_seconds=config["issuance_processing_seconds"],
                visible_after=config["poll_lag_seconds"],
                deferred=DEFERRED_CANCEL_REFUSALS,
                reject=call.reject_reason,
            )
        except domain.AlreadyCancelled as already:
            return error("ALREADY_CANCELLED", cancellation_id=already.cancellation.cancellation_id)
        except domain.CancelNotAllowed as refused:
            return error("CANCEL_NOT_ALLOWED", f"{ERRORS['CANCEL_NOT_ALLOWED'][1]}: {refused.detail}")
        self.ledger.cancel_dedup[record_key] = cancellation.cancellation_id
        location = [("Location", f"/cancellations/{cancellation.cancellation_id}")]
        return Response.json(202, {"cancellation_id": cancellation.cancellation_id, "status": "PROCESSING"}, location)

    def op_cancel_poll(self, call: Call) -> Response:
        """Served by the poll cluster, like the policy requests': until ``visible_at`` it does not
        know the cancellation."""
        cancellation = self.ledger.cancellations.get(call.fields["cancellation_id"])
        now = time.time()
        if (
            cancellation is None
            or cancellation.agency not in (None, self.agency(call))
            or now < cancellation.visible_at
        ):
            raise Refusal(Refusal.NOT_FOUND, f"cancellation {call.fields['cancellation_id']}")
        return Response.json(200, cancellation_view(cancellation, now))

    def op_policy_list(self, call: Call) -> Response:
        """``GET /policies?issued_from&issued_to[&cursor]``: a page, and ``next_cursor`` (null on the last)."""
        issued_from = domain.read_date(query_value(call.request, "issued_from"), "issued_from")
        issued_to = domain.read_date(query_value(call.request, "issued_to"), "issued_to")
        domain.check_list_range(issued_from, issued_to)
        cursor = query_value(call.request, "cursor")
        offset = 0 if cursor is None else cursor_offset(cursor, issued_from, issued_to)
        policies = self.ledger.production_list(agency=self.agency(call), issued_from=issued_from, issued_to=issued_to)
        following = offset + domain.LIST_PAGE_SIZE
        next_cursor = list_cursor(issued_from, issued_to, following) if following < len(policies) else None
        items = [listed_item(policy) for policy in policies[offset:following]]
        return Response.json(200, {"items": items, "next_cursor": next_cursor})

    def render_cancel_error(self, call: Call, code: str, rule: FaultRule) -> Response | None:
        """DUPLICATE_REFERENCE / ALREADY_CANCELLED (served first) name the cancellation to poll."""
        cancellation_id = None
        if code == "DUPLICATE_REFERENCE":
            payload, _ = parse_json_object(call.request.body)
            reference = key_text(payload.get("client_reference"))
            if reference is not None:
                cancellation_id = self.ledger.cancel_dedup.get((self.agency(call), reference))
        elif code == "ALREADY_CANCELLED":
            policy = self.ledger.policies.get(call.fields.get("policy_no") or "")
            if policy is not None and policy.status == "CANCELLED":
                cancellation_id = self.ledger.cancellation_of(policy).cancellation_id
        return None if cancellation_id is None else error(code, rule.reason, cancellation_id=cancellation_id)

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

    def apply_extra_fault(self, rule: FaultRule, call: Call) -> Response:
        """Both serve the call as usual and rewrite only part of a successful answer."""
        response = self.handle(call)
        if rule.fault == "absolute_location" and response.status == 303:
            origin = rule.reason if rule.reason is not None else f"http://{call.request.headers.get('Host', '')}"
            response.headers = [
                (name, origin + value if name == "Location" else value) for name, value in response.headers
            ]
        elif rule.fault == "broken_coverages" and response.status == 200 and call.operation in domain.QUOTE_OPERATIONS:
            body = json.loads(response.body)
            body["coverages"] = [*body["coverages"], *BROKEN_COVERAGE_ENTRIES]
            body["installments"] = [*body["installments"], *BROKEN_INSTALLMENT_ENTRIES]
            response = Response.json(200, body, response.headers)
        return response

    def render_error(self, call: Call, code: str, rule: FaultRule) -> Response:
        if code in self.throttle_codes:
            return self.render_throttle(call, rule.wait(1.0), from_bucket=False)
        if code == "DUPLICATE_REFERENCE":
            # The issuance ran first (a committing code), so the request it names really exists.
            reference = key_text(call.fields.get("client_reference"))
            earlier = None if reference is None else self.ledger.dedup.get((self.agency(call), reference))
            request_id = call.request_id or earlier
            return error(code, rule.reason, request_id=request_id)
        return error(code, rule.reason)
