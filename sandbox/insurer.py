"""What every sandbox insurer does with a call, and the hooks through which each one differs.

The order of a business call is fixed here, once, so the four insurers cannot drift apart:

1. ``route``: which operation, and the input under the platform's field names;
2. count it as received (whatever happens next);
3. ``authenticate`` (a failure is answered in the insurer's words, not throttled, not faulted);
4. the account's token bucket (empty: the insurer's own throttle signal);
5. an issuance call claims its dedup key (Anka ``Idempotency-Key``, Çınar ``request_ref``,
   Deniz ``client_reference``); a call whose key is held by one still running waits for it;
6. configured latency;
7. the first fault rule that fires, if any;
8. the business handler ``op_<operation>``, under the state lock.

Latencies sleep before the business logic, and nothing watches the client meanwhile: a slow
issuance commits after its sleep even when the client gave up long before (a read timeout is
not a "no"), exactly what a slow insurer backend does.

Insurer modules only describe their wire: routes, field names, codes and body shapes.
"""

from __future__ import annotations

import html
import json
import math
import threading
import time
from dataclasses import dataclass, field
from email.message import Message
from typing import Any, ClassVar

from .core import COMMON_FAULT_KINDS, Account, FaultRule, SandboxState
from .domain import FULL_MENU, InvalidField, KaskoMenu, Refusal

JSON = "application/json"
HTML = "text/html; charset=utf-8"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: Message
    body: bytes


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str | None = JSON
    headers: list[tuple[str, str]] = field(default_factory=list)
    # Instead of answering: "reset" (TCP RST) or "hang" (silence for drop_seconds, then close).
    drop: str | None = None
    drop_seconds: float = 0.0

    @classmethod
    def json(cls, status: int, payload: Any, headers: list[tuple[str, str]] | None = None) -> Response:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        return cls(status, body, JSON, list(headers or []))

    @classmethod
    def dropped(cls, how: str, seconds: float = 0.0) -> Response:
        return cls(0, drop=how, drop_seconds=seconds, content_type=None)


def gateway_page(status: int) -> Response:
    """The HTML page a reverse proxy in front of an insurer answers with."""
    titles = {
        404: "Not Found",
        500: "Internal Server Error",
        502: "Bad Gateway",
        503: "Service Temporarily Unavailable",
        504: "Gateway Time-out",
    }
    title = f"{status} {titles.get(status, 'Error')}"
    body = (
        f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n"
        f"<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    )
    return Response(status, body.encode(), HTML)


def echo_page(request: Request, status: int) -> Response:
    """The error page of a misconfigured gateway or a debug build: it echoes the request it got,
    headers and body, credentials included (HTML-escaped, as such pages print them)."""
    headers = "".join(f"{html.escape(name)}: {html.escape(str(value))}\r\n" for name, value in request.headers.items())
    body = html.escape(request.body.decode("utf-8", errors="replace"))
    page = (
        f"<html><head><title>{status} Error</title></head><body><h1>{status} Error</h1>"
        f"<h2>Request</h2><pre>{html.escape(request.method)} {html.escape(request.path)}\r\n{headers}</pre>"
        f"<h2>Body</h2><pre>{body}</pre></body></html>"
    )
    return Response(status, page.encode("utf-8"), HTML)


def ceil_seconds(seconds: float) -> int:
    return max(0, math.ceil(seconds))


@dataclass
class Call:
    """One business call, as the pipeline sees it."""

    operation: str  # an operation name, or "unknown" for a path/action the insurer does not serve
    request: Request
    fields: dict[str, Any] = field(default_factory=dict)  # the input under the platform's names
    wire_names: dict[str, str] = field(default_factory=dict)  # platform name -> the insurer's name
    problem: InvalidField | None = None  # the body could not be read at all
    context: dict[str, Any] = field(default_factory=dict)  # insurer-specific bits (SOAP action, ...)
    account: Account | None = None
    reject_reason: str | None = None  # Deniz: a "reject" fault turns the issuance REJECTED
    issued_policy_no: str | None = None  # set by issuance handlers when a policy was created
    key_claim: KeyClaim | None = None  # the dedup key this issuance holds while it runs
    request_id: str | None = None  # Deniz: the policy request created by this call
    note: str = ""  # for the request log

    def wire_name(self, platform_name: str) -> str:
        return self.wire_names.get(platform_name, platform_name)


# How long a call waits past the key holder's announced finish before giving up on it.
KEY_WAIT_GRACE_SECONDS = 1.0


@dataclass
class KeyClaim:
    """An issuance dedup key, held by the request being served with it from receipt to answer.

    A real insurer that honours the key knows it from the moment the request arrives: a second
    request with the same key while the first is still running must not become a second
    policy. It waits for the first, then is answered as a repeat (or afresh, if the first
    ended in a refusal: only a success binds the key for good).
    """

    record: tuple[str, str]  # (agency, key)
    finish_by: float  # monotonic; moved later as the holder learns its own sleeps
    done: threading.Event = field(default_factory=threading.Event)


class Insurer:
    """Base class of the sandbox insurers; each subclass is decorated with ``registry.register``."""

    code: ClassVar[str]
    prefix: ClassVar[str]  # of quote and policy numbers ("AK-T-000001")
    # Where it listens when the sandbox runs on fixed ports: ``base_port + port_offset``
    # (``python -m sandbox``, the demo). Unique per insurer; the registry checks.
    port_offset: ClassVar[int]
    # The credential that identifies an account (first), then the ones that prove it.
    credential_keys: ClassVar[tuple[str, ...]]
    # The sample agencies' accounts every server starts (and resets) with; the demo seeds the
    # platform with the same ones (``python -m sandbox --demo-manifest``).
    default_accounts: ClassVar[tuple[dict[str, Any], ...]]
    # The demo's latencies (``--realistic``): tens of milliseconds unless the insurer is slower.
    realistic_latency_ms: ClassVar[Any] = [50, 400]
    # The insurer's name as printed on its policy PDFs (`Ledger.document`).
    document_name: ClassVar[str]
    # The kasko options it sells (CONTRACTS.md, "Kasko options"); an unsold one is a validation refusal.
    kasko_menu: ClassVar[KaskoMenu] = FULL_MENU
    content_type: ClassVar[str] = JSON
    operations: ClassVar[tuple[str, ...]]
    extra_fault_kinds: ClassVar[frozenset[str]] = frozenset()
    # Three one-off transient faults in the insurer's own words (fault rules without the
    # operation), each worth exactly one retry: a gateway error, a dropped connection, and the
    # insurer's own "busy / unavailable" answer. The cross-insurer tests inject them.
    transient_faults: ClassVar[tuple[dict[str, Any], ...]]
    # Error codes whose answer is the throttle signal (counted as throttled).
    throttle_codes: ClassVar[frozenset[str]] = frozenset()
    # Error codes that, on issue_policy, only tell the truth if the issuance happened.
    committing_codes: ClassVar[frozenset[str]] = frozenset()
    # The same for cancel_policy: a duplicate or "already cancelled" names a cancellation that exists.
    cancel_committing_codes: ClassVar[frozenset[str]] = frozenset()
    # A plausible body; the "garbage" fault sends its first part only.
    garbage_body: ClassVar[bytes] = b'{"success": true, "data": {"id": "0000001", "amount": "1234.56"}}'

    def __init__(self, state: SandboxState) -> None:
        self.state = state
        self.ledger = state.ledger
        self.ledger.kasko_menu = self.kasko_menu
        self.stopping = threading.Event()  # set by SandboxServer.stop(): ends hangs and latencies early
        self._key_claims: dict[tuple[str, str], KeyClaim] = {}  # guarded by state.lock

    @classmethod
    def fault_kinds(cls) -> frozenset[str]:
        return COMMON_FAULT_KINDS | cls.extra_fault_kinds

    # --- the pipeline ------------------------------------------------------------------------------

    def serve(self, request: Request) -> tuple[Response, Call]:
        call = self.route(request)
        state = self.state
        state.record_received(call.operation)
        authenticated = self.authenticate(call)
        if isinstance(authenticated, Response):
            call.note = "auth-failed"
            return authenticated, call
        call.account = authenticated
        state.record_account(authenticated.agency_code)
        wait = state.take_token(authenticated)
        if wait > 0:
            state.record_throttled(call.operation)
            call.note = "throttled"
            return self.render_throttle(call, wait, from_bucket=True), call
        call.key_claim = self.claim_issuance_key(call)
        try:
            self.sleep(call, state.latency_seconds(call.operation))
            rule = state.pick_fault(call.operation, call.fields) if call.operation != "unknown" else None
            if rule is not None:
                call.note = f"fault={rule.fault}" + (f":{rule.code}" if rule.code else "")
                return self.apply_fault(rule, call), call
            return self.handle(call), call
        finally:
            # Released once the business is done, before any hang/reset of the answer.
            self.release_issuance_key(call.key_claim)

    def sleep(self, call: Call, seconds: float) -> None:
        """Latency at the insurer; a held dedup key announces when its holder expects to be done."""
        if seconds <= 0:
            return
        if call.key_claim is not None:
            call.key_claim.finish_by = time.monotonic() + seconds
        self.stopping.wait(seconds)

    def claim_issuance_key(self, call: Call) -> KeyClaim | None:
        """Hold the call's dedup key; if another running call holds it, wait for that one first."""
        key = self.issuance_key(call) if call.operation == "issue_policy" else None
        if key is None:
            return None
        record = (self.agency(call), key)
        while True:
            with self.state.lock:
                holder = self._key_claims.get(record)
                if holder is None:
                    claim = KeyClaim(record, finish_by=time.monotonic())
                    self._key_claims[record] = claim
                    return claim
            if not self._wait_for(holder):
                return None  # the holder overran its own time: served unguarded, as a stuck backend would

    def _wait_for(self, holder: KeyClaim) -> bool:
        """Wait until the holder is done, bounded by the time it announced (plus a grace)."""
        while not holder.done.is_set():
            remaining = holder.finish_by - time.monotonic()
            if remaining < -KEY_WAIT_GRACE_SECONDS:
                return False
            holder.done.wait(max(remaining, 0.0) + KEY_WAIT_GRACE_SECONDS)
        return True

    def release_issuance_key(self, claim: KeyClaim | None) -> None:
        if claim is None:
            return
        with self.state.lock:
            if self._key_claims.get(claim.record) is claim:
                del self._key_claims[claim.record]
        claim.done.set()

    def handle(self, call: Call) -> Response:
        """Run the business handler; validation problems and refusals become the insurer's errors."""
        with self.state.lock:
            try:
                if call.problem is not None:
                    raise call.problem
                return getattr(self, f"op_{call.operation}")(call)
            except InvalidField as problem:
                return self.render_invalid(call, problem)
            except Refusal as refusal:
                return self.render_refusal(call, refusal)

    def apply_fault(self, rule: FaultRule, call: Call) -> Response:
        kind = rule.fault
        if kind == "latency":
            # On issue_policy this is "commit after N seconds": the issuance happens after the
            # sleep whether or not the client is still waiting for the answer.
            self.sleep(call, rule.seconds if rule.seconds is not None else 1.0)
            return self.handle(call)
        if kind == "throttle":
            self.state.record_throttled(call.operation)
            return self.render_throttle(call, rule.wait(1.0), from_bucket=False)
        if kind == "error":
            code = rule.code or ""
            if call.operation == "issue_policy" and (rule.commit or code in self.committing_codes):
                self.handle(call)
            if call.operation == "cancel_policy" and (rule.commit or code in self.cancel_committing_codes):
                self.handle(call)
            if code in self.throttle_codes:
                self.state.record_throttled(call.operation)
            response = self.render_cancel_error(call, code, rule) if call.operation == "cancel_policy" else None
            response = response or self.render_error(call, code, rule)
            if rule.http_status is not None:
                response.status = rule.http_status
            return response
        if kind == "hang":
            return Response.dropped("hang", rule.seconds if rule.seconds is not None else 30.0)
        if kind == "reset":
            return Response.dropped("reset")
        if kind == "html":
            return gateway_page(rule.http_status or 502)
        if kind == "echo":
            return echo_page(call.request, rule.http_status or 500)
        if kind == "empty":
            return Response(rule.http_status or 200, b"", self.content_type)
        if kind == "garbage":
            return Response(200, self.garbage_body[: len(self.garbage_body) * 3 // 5], self.content_type)
        if kind == "wrong_content_type":
            # A real answer, mislabelled (the call is served, issuance included).
            response = self.handle(call)
            response.content_type = HTML
            return response
        if kind == "commit_then_drop":
            self.handle(call)
            return Response.dropped(rule.drop, rule.seconds if rule.seconds is not None else 30.0)
        if kind == "reject":
            call.reject_reason = rule.reason or "UNDERWRITING_DECLINED"
            return self.handle(call)
        return self.apply_extra_fault(rule, call)

    # --- hooks each insurer implements --------------------------------------------------------------

    def route(self, request: Request) -> Call:
        raise NotImplementedError

    def authenticate(self, call: Call) -> Account | Response:
        raise NotImplementedError

    def render_invalid(self, call: Call, problem: InvalidField) -> Response:
        raise NotImplementedError

    def render_refusal(self, call: Call, refusal: Refusal) -> Response:
        raise NotImplementedError

    def render_error(self, call: Call, code: str, rule: FaultRule) -> Response:
        """An ``error`` fault: ``code`` from the insurer's table (or unknown), rendered as it would be."""
        raise NotImplementedError

    def render_throttle(self, call: Call, wait_seconds: float | None, *, from_bucket: bool) -> Response:
        raise NotImplementedError

    def apply_extra_fault(self, rule: FaultRule, call: Call) -> Response:
        raise NotImplementedError(rule.fault)

    def render_cancel_error(self, call: Call, code: str, rule: FaultRule) -> Response | None:
        """An ``error`` fault on cancel_policy whose code carries a cancellation (one of
        ``cancel_committing_codes``, served first): rendered with it. None: ``render_error``."""
        return None

    def issuance_key(self, call: Call) -> str | None:
        """The issuance's dedup key as sent, or None when the insurer has none (Boğaziçi)."""
        return None

    # --- shared helpers -----------------------------------------------------------------------------

    def agency(self, call: Call) -> str:
        assert call.account is not None
        return call.account.agency_code


def key_text(value: Any) -> str | None:
    """A dedup key worth holding: a non-empty string (anything else is the handler's to refuse)."""
    return value if isinstance(value, str) and value != "" else None


def parse_json_object(body: bytes) -> tuple[dict[str, Any], InvalidField | None]:
    """The JSON object in a request body, or the problem to report (field ``body``)."""
    try:
        payload = json.loads(body.decode("utf-8")) if body.strip() else {}
    except (UnicodeDecodeError, ValueError):
        return {}, InvalidField("body", "invalid", "body is not valid JSON")
    if not isinstance(payload, dict):
        return {}, InvalidField("body", "invalid", "body must be a JSON object")
    return payload, None


def query_value(request: Request, name: str) -> str | None:
    """The first value of a query parameter, or None."""
    values = request.query.get(name)
    return values[0] if values else None
