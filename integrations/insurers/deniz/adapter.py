"""Deniz Sigorta: REST/JSON behind HTTP Basic, slow, with asynchronous issuance.

Issuance is a request that Deniz works on in the background: `POST /policy-requests` answers
202 with a `request_id`, and the policy appears when polling says `ISSUED`. Deniz deduplicates
by our `client_reference` (a repeat answers 409 with the earlier `request_id`), and can be asked
by that reference what became of an earlier, unanswered send. Polling belongs to the attempt
that sent the request: the engine only sees one attempt, which ends in a policy, a refusal, or
(when the deadline comes first) an ambiguous "still processing" that makes the next attempt
look the request up instead of sending it again.

Deniz has no `Retry-After` on a throttle: a 429 carries `X-RateLimit-Reset`, the unix time its
window reopens.

A policy's PDF takes two calls: `GET /policies/{no}/document` answers 303 with a link valid for
60 s, and the link is fetched without credentials (the token in it is the credential, and our
Basic credentials must never follow a redirect). The channel never follows redirects; this
adapter follows that one itself, and only to Deniz's own base URL. Before the PDF is made,
Deniz answers 202 GENERATING with `Retry-After`: a wait it asks for (NOT_READY), not a failure.
"""

from __future__ import annotations

import base64
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from functools import partial
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

from insurehub.masking import mask_and_cut
from integrations.adapters.base import (
    ISSUE_TERM_FIELDS,
    QUOTE_TERM_FIELDS,
    InsurerAdapter,
    json_body,
    parse_answer_date,
    parse_listed_date,
    parse_money,
    parse_policy_date,
    parse_utc,
    path_part,
    pick,
    status_refusal,
    text,
    wire_date,
    wire_terms,
    wire_word,
)
from integrations.adapters.registry import register
from integrations.answers.coverages import coverage_entry, installment_entry, read_entries
from integrations.answers.results import (
    Address,
    Cancellation,
    Document,
    ListedPolicy,
    Policy,
    PolicyListing,
    PolicyStatus,
    Quote,
)
from integrations.answers.taxonomy import ErrorKind, InsurerError, Reason, Refusal, WaitHint
from integrations.calling.channel import MAX_DOCUMENT_RESPONSE_BYTES, Call, Channel, Reply
from integrations.operations import DASK_QUOTE_FIELDS, KASKO_FIELDS, KASKO_OPTION_FIELDS, VEHICLE_FIELDS
from integrations.pacing.waits import hint_from_retry_after, parse_reset_epoch

logger = logging.getLogger(__name__)

ERROR_TABLE: dict[str, ErrorKind] = {
    "INVALID_REQUEST": ErrorKind.VALIDATION,
    "AGENCY_NOT_AUTHORIZED": ErrorKind.NOT_ALLOWED,
    "NOT_FOUND": ErrorKind.NOT_FOUND,
    "UNDERWRITING_DECLINED": ErrorKind.BUSINESS_REJECT,
    "QUOTE_EXPIRED": ErrorKind.EXPIRED,
    "TOO_MANY_REQUESTS": ErrorKind.THROTTLED,
    # Not an error code of Deniz's: a policy request that Deniz itself turned down.
    "REJECTED": ErrorKind.BUSINESS_REJECT,
    # The 202 status of a document still being made: a wait Deniz asks for.
    "GENERATING": ErrorKind.NOT_READY,
    # Ours: a document link that answered 404 had expired (or was lost) before we fetched it;
    # the policy exists (its document call just redirected), so a new attempt gets a new link.
    "DOCUMENT_LINK_EXPIRED": ErrorKind.UNAVAILABLE,
    # Ours: a redirect away from Deniz's base URL is not followed (our client would go wherever
    # the answer says). Left unknown, so it is logged loudly until somebody looks at it.
    "FOREIGN_REDIRECT": ErrorKind.UNCLASSIFIED,
    "CANCEL_NOT_ALLOWED": ErrorKind.BUSINESS_REJECT,
    # ALREADY_CANCELLED (409) is no error: it names the first cancellation, polled for our result.
}

# What an agent reads (in one set of Turkish words, `Reason`) for Deniz's business refusals.
AGENT_MESSAGES = {
    "AGENCY_NOT_AUTHORIZED": Reason.PRODUCT_NOT_ALLOWED,
    "UNDERWRITING_DECLINED": Reason.RISK_DECLINED,
    "QUOTE_EXPIRED": Reason.QUOTE_EXPIRED,
    "CANCEL_NOT_ALLOWED": Reason.CANCEL_NOT_ALLOWED,
}

POLICY_STATES = {"IN_FORCE": PolicyStatus.ACTIVE, "CANCELLED": PolicyStatus.CANCELLED, "LAPSED": PolicyStatus.EXPIRED}

PRODUCTS = {"trafik": "TRAFIK", "kasko": "KASKO", "dask": "DASK"}
# Deniz groups the owner under "insured" and the rest under "risk".
VEHICLE_RISK_FIELDS = tuple(f for f in VEHICLE_FIELDS if f != "owner_id")
KASKO_RISK_FIELDS = tuple(f for f in KASKO_FIELDS if f != "owner_id")
DASK_RISK_FIELDS = tuple(f for f in DASK_QUOTE_FIELDS if f != "owner_id")
# A DASK quote's sum insured is its earthquake cover's.
DASK_COVER = "earthquake"
CURRENCY = "TRY"
REDIRECTS = frozenset({301, 302, 303, 307, 308})

# Kasko options go under `risk.options` (CONTRACTS.md, "Kasko options"): money as amount
# objects, the repair shop in Deniz's words; the policy start is `risk.starts_on` on quotes and
# beside the quote id on issuance, with the installment count.
REPAIR_SHOP_WORDS = {"authorized": "AUTHORIZED", "contracted": "CONTRACTED"}
MONEY_OPTIONS = frozenset({"deductible", "liability_limit"})
# The platform fields Deniz's requests carry: an INVALID_REQUEST detail names one by its path
# (`risk.options.deductible is invalid`), read back to the platform field it refused.
REQUEST_FIELDS = frozenset(
    {*KASKO_FIELDS, *DASK_QUOTE_FIELDS, *KASKO_OPTION_FIELDS, *ISSUE_TERM_FIELDS, "payment_token", "quote_no"}
)
WIRE_FIELDS = {"quote_id": "quote_no"}

PROCESSING, ISSUED, REJECTED = "PROCESSING", "ISSUED", "REJECTED"
REQUEST_STATES = (PROCESSING, ISSUED, REJECTED)

# Polling: start quickly (issuance usually completes within seconds), back off to a gentle cap.
POLL_FIRST_INTERVAL = 0.2
POLL_MAX_INTERVAL = 2.0
# Time a poll needs for itself; no poll is started with less of the deadline left.
POLL_MIN_WINDOW = 0.5
# How long to keep polling when the operation has no deadline (a bare adapter, outside the engine).
POLL_WITHOUT_DEADLINE = 60.0


# Cancellation (CONTRACTS.md, "Cancellation"): polled like a policy request, DONE instead of ISSUED.
DONE = "DONE"
CANCELLATION_STATES = (PROCESSING, DONE, REJECTED)
CANCEL_REASONS = {
    "vehicle_sold": "VEHICLE_SOLD",
    "customer_request": "CUSTOMER_REQUEST",
    "duplicate": "DUPLICATE",
    "other": "OTHER",
}
# The 409 codes of a cancellation that name the cancellation to poll.
CANCELLATION_NAMED = ("DUPLICATE_REFERENCE", "ALREADY_CANCELLED")
PRODUCT_WORDS = {deniz: ours for ours, deniz in PRODUCTS.items()}
S = TypeVar("S")


@dataclass(frozen=True)
class _CancellationState:
    cancellation_id: str
    status: str
    result: Cancellation | None = None  # once DONE


@dataclass(frozen=True)
class _RequestState:
    request_id: str
    status: str
    policy_no: str = ""
    reason: str = ""
    starts_on: date | None = None
    ends_on: date | None = None


@register
class DenizAdapter(InsurerAdapter):
    code = "deniz"
    name = "Deniz Sigorta"
    credential_fields = ("username", "password")
    error_table = ERROR_TABLE
    issuance_deduplicated = True

    def __init__(self, *, channel: Channel, credentials: Mapping[str, str]) -> None:
        super().__init__(channel=channel, credentials=credentials)
        pair = f"{self.credentials['username']}:{self.credentials['password']}".encode()
        self._authorization = "Basic " + base64.b64encode(pair).decode("ascii")
        self._poll_stop_at: float | None = None

    def _call(
        self, method: str, path: str, *, json: Any = None, params: dict[str, str] | None = None, name: str = "main"
    ) -> Call:
        return Call(method, path, json=json, params=params, headers={"Authorization": self._authorization}, name=name)

    # -- reading answers ---------------------------------------------------------------------

    def _read(self, reply: Reply) -> dict[str, Any]:
        """Success body, or a `Refusal` carrying Deniz's code and its wait signal."""
        if 200 <= reply.status < 300:
            return _json_object(reply)
        if reply.status == 401:
            # Deniz's 401 has no code of its own (the contract's table says so), whatever the body holds.
            raise status_refusal(reply, "bad credentials")
        # X-RateLimit-Reset may ride on every answer as information; only a throttle asks us to wait.
        wait = _reset_hint(reply) if reply.status == 429 else None
        try:
            body = json_body(reply)
        except Refusal as refusal:
            refusal.wait = wait
            raise
        code = body.get("code") if isinstance(body, dict) else None
        detail = str(body.get("detail") or "") if isinstance(body, dict) else ""
        if not isinstance(code, str) or not code:
            # 401 carries no code at all; a 5xx may carry any body.
            refused = status_refusal(reply, detail or "error body without a code")
            refused.wait = wait
            raise refused
        if code == "TOO_MANY_REQUESTS" and wait is None:
            wait = _reset_hint(reply)
        message = AGENT_MESSAGES.get(code) or detail
        kind = ErrorKind.UNAVAILABLE if reply.status >= 500 else None
        field = _field_in_detail(detail) if code == "INVALID_REQUEST" else None
        raise Refusal(code, message, field=field, wait=wait, kind=kind)

    def _read_quote(self, reply: Reply) -> Quote:
        body = self._read(reply)
        premium = body["gross_premium"]
        details: dict[str, Any] = {}
        if "coverages" in body:
            details["coverages"] = read_entries(body["coverages"], _coverage, log=logger, what="coverages")
            sum_insured = next((c["limit"] for c in details["coverages"] if c["code"] == DASK_COVER), None)
            if sum_insured is not None:
                details["sum_insured"] = sum_insured
        if "installments" in body:
            details["installments"] = read_entries(body["installments"], _installment, log=logger, what="installments")
        return Quote(
            quote_no=text(body["quote_id"]),
            premium=parse_money(premium["amount"]),
            currency=text(premium["currency"]),
            valid_until=parse_utc(body["expires_at"]),
            details=details,
        )

    def _read_request(self, reply: Reply) -> _RequestState:
        """A policy request's state; REJECTED is Deniz's final "no", raised here so it is logged as one."""
        state = _request_state(self._read(reply))
        if state.status == REJECTED:
            raise _rejection(state)
        return state

    # -- quotes, address, status -------------------------------------------------------------

    def _quote(self, product: str, data: Mapping[str, Any], risk_fields: tuple[str, ...]) -> Quote:
        risk = {**pick(data, *risk_fields), **_risk_terms(product, data)}
        body = {"product": PRODUCTS[product], "insured": pick(data, "owner_id"), "risk": risk}
        return self.channel.exchange(self._call("POST", "/quotes", json=body), self._read_quote)

    def trafik_quote(self, data: Mapping[str, Any]) -> Quote:
        return self._quote("trafik", data, VEHICLE_RISK_FIELDS)

    def kasko_quote(self, data: Mapping[str, Any]) -> Quote:
        return self._quote("kasko", data, KASKO_RISK_FIELDS)

    def dask_quote(self, data: Mapping[str, Any]) -> Quote:
        return self._quote("dask", data, DASK_RISK_FIELDS)

    def dask_address(self, data: Mapping[str, Any]) -> Address:
        def read(reply: Reply) -> Address:
            body = self._read(reply)
            return Address(
                uavt_code=text(body["uavt_code"]), address=text(body["line"]), building_id=text(body["building_ref"])
            )

        return self.channel.exchange(self._call("GET", f"/addresses/{path_part(data.get('uavt_code'))}"), read)

    def policy_status(self, data: Mapping[str, Any]) -> Policy:
        def read(reply: Reply) -> Policy:
            body = self._read(reply)
            starts_on, ends_on = _period(body)
            return Policy(
                policy_no=text(body["policy_no"]),
                status=POLICY_STATES[body["state"]],
                starts_on=starts_on,
                ends_on=ends_on,
            )

        return self.channel.exchange(self._call("GET", f"/policies/{path_part(data.get('policy_no'))}"), read)

    # -- policy documents --------------------------------------------------------------------

    def policy_document(self, data: Mapping[str, Any]) -> Document:
        """Ask for the document, then fetch the link Deniz redirects to (no credentials)."""
        policy_no = data.get("policy_no")
        call = self._call("GET", f"/policies/{path_part(policy_no)}/document")
        call.max_bytes = MAX_DOCUMENT_RESPONSE_BYTES  # a PDF answered at once is read, too
        read = partial(self._read_document_answer, policy_no=policy_no, asked=call.path)
        answer = self.channel.exchange(call, read)
        if isinstance(answer, Document):
            return answer
        # Deliberately no Authorization header: the link needs none, and it is a redirect target.
        download = Call("GET", answer, name="download", max_bytes=MAX_DOCUMENT_RESPONSE_BYTES)
        return self.channel.exchange(download, partial(self._read_download, policy_no=policy_no))

    def _read_document_answer(self, reply: Reply, *, policy_no: Any, asked: str) -> str | Document:
        """The link's path on our base URL (303), the PDF itself (a 200 without the detour), or a refusal."""
        if reply.status in REDIRECTS:
            return self._link_path(reply, asked)
        if reply.status == 202:
            raise _not_ready(reply)
        if reply.status == 200:
            return Document(policy_no=text(policy_no), content=reply.content)
        if 200 < reply.status < 300:
            raise Refusal(str(reply.status), f"unexpected {reply.status} to a document request")
        self._read(reply)  # raises the error answer's refusal
        raise AssertionError("unreachable: _read returns only for 2xx")

    def _link_path(self, reply: Reply, asked: str) -> str:
        """The redirect's target as a path under our base URL; never another host.

        Location may be a path or an absolute URL (RFC 9110 allows both), resolved against the
        URL we asked (`asked`, a path under the base URL). Following it anywhere else would let
        an answer point our client at any host; the channel only sends to the base URL, so the
        path is all it needs.
        """
        location = (reply.headers.get("Location") or "").strip()
        if not location:
            raise Refusal("MISSING_LOCATION", f"{reply.status} without a Location header")
        base = urlsplit(self.channel.base_url)
        target = urlsplit(urljoin(self.channel.base_url + asked, location))
        base_path = base.path.rstrip("/")
        same_origin = (
            target.scheme.lower() == base.scheme.lower()
            and target.hostname == base.hostname
            and _port(target) == _port(base)
            and target.username is None
            and target.password is None
        )
        if not same_origin or not target.path.startswith(base_path + "/"):
            raise Refusal("FOREIGN_REDIRECT", "belge bağlantısı Deniz'in adresi dışına yönlendiriyor; izlenmedi")
        path = target.path[len(base_path) :]
        return path + (f"?{target.query}" if target.query else "")

    def _read_download(self, reply: Reply, *, policy_no: Any) -> Document:
        """The PDF behind the link; anything but a PDF is an unreadable answer (Document says so)."""
        if reply.status == 200:
            return Document(policy_no=text(policy_no), content=reply.content)
        if reply.status == 404:
            raise Refusal("DOCUMENT_LINK_EXPIRED", "belge bağlantısının süresi dolmuş")
        if 200 < reply.status < 400:
            raise Refusal(str(reply.status), f"unexpected {reply.status} to a document download")
        self._read(reply)
        raise AssertionError("unreachable: _read returns only for 2xx")

    # -- issuance ----------------------------------------------------------------------------

    def issue_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy:
        """Send the policy request and poll it to its end, within this one attempt."""
        self._start_polling_clock()
        body = {
            "quote_id": data.get("quote_no"),
            "payment_token": data.get("payment_token"),
            "client_reference": reference,
            **wire_terms(data, ISSUE_TERM_FIELDS),
        }
        call = self._call("POST", "/policy-requests", json=body)
        return self._await(self.channel.exchange(call, self._read_issue))

    def find_issued_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy | None:
        """Ask Deniz what became of our reference; a request still in work is polled to its end."""
        self._start_polling_clock()
        call = self._call("GET", "/policy-requests", params={"client_reference": reference}, name="lookup")
        state = self.channel.exchange(call, self._read_lookup)
        return None if state is None else self._await(state)

    def _read_issue(self, reply: Reply) -> _RequestState:
        """The answer to a send: 202 with the new request, or 409 naming the request that stands.

        A 409 DUPLICATE_REFERENCE is not a failure: an earlier send with our reference reached
        Deniz, and that request's outcome is the one we want.
        """
        if reply.status == 409:
            try:
                body = json_body(reply)
            except Refusal:
                body = None
            if isinstance(body, dict) and body.get("code") == "DUPLICATE_REFERENCE":
                request_id = body.get("request_id")
                if not request_id:
                    # Our reference is known but the request was not named: the next attempt looks it up.
                    raise Refusal("DUPLICATE_REFERENCE", "409 without the earlier request_id", ambiguous=True)
                return self._settled_or_next_poll(_RequestState(request_id=str(request_id), status=PROCESSING))
        return self._settled_or_next_poll(self._read_request(reply))

    def _read_lookup(self, reply: Reply) -> _RequestState | None:
        items = self._read(reply)["items"]
        if not isinstance(items, list):
            raise Refusal("MALFORMED_BODY", "items is not a list")
        if not items:
            return None  # never received: sending is safe
        states = [_request_state(item) for item in items]
        # Deniz keeps one request per reference; should it list more, a policy wins over work in hand.
        for wanted in (ISSUED, PROCESSING):
            for state in states:
                if state.status == wanted:
                    return self._settled_or_next_poll(state)
        raise _rejection(states[0])

    def _await(self, state: _RequestState) -> Policy:
        """Poll a request Deniz accepted until it is ISSUED (REJECTED is raised while reading).

        Only `REJECTED` means no policy. Any other failed poll changes nothing: the request
        stands (polls are served by another cluster and lag the POST by a few seconds: a 404, a
        503 or a reset right after a 202 is not an answer), so we keep asking, waiting at least
        what Deniz signalled. When no time is left for another poll, the attempt ends with the
        outcome unknown, so the next attempt looks the request up instead of sending it again.
        """
        call = self._call("GET", f"/policy-requests/{path_part(state.request_id)}", name="poll")
        state = self._poll_to_end(
            call, state, self._read_poll, done=lambda polled: polled.status == ISSUED, subject=_request_subject(state)
        )
        return Policy(
            policy_no=state.policy_no, status=PolicyStatus.ACTIVE, starts_on=state.starts_on, ends_on=state.ends_on
        )

    def _poll_to_end(
        self, call: Call, state: S, read: Callable[..., S], *, done: Callable[[S], bool], subject: str
    ) -> S:
        """The one poll loop, for policy requests and cancellations alike: poll with `call` until
        `done` (a REJECTED status is raised while reading). Any other failed poll changes nothing: we keep
        asking, waiting at least what Deniz signalled; with no time left for another poll, the
        attempt ends ambiguous (`_still_processing`), never as a "no"."""
        interval = POLL_FIRST_INTERVAL
        pause = self._next_pause(interval) or 0.0
        while not done(state):
            time.sleep(pause)
            interval = min(interval * 2, POLL_MAX_INTERVAL)
            try:
                state = self.channel.exchange(call, partial(read, interval=interval))
            except InsurerError as error:
                if error.settles_issuance:
                    # Deniz's verdict, read from a poll's status. An error body that merely
                    # carries the word (not a code of Deniz's) answers the poll, not the request.
                    raise
                signalled = self._next_pause(interval, error.wait)
                if signalled is None:
                    raise _still_processing(subject, error) from error
                pause = signalled
            else:
                # The read already found time for another poll; a few ms since then cost nothing.
                pause = self._next_pause(interval) or 0.0
        return state

    def _read_poll(self, reply: Reply, *, interval: float) -> _RequestState:
        return self._settled_or_next_poll(self._read_request(reply), interval)

    def _settled_or_next_poll(self, state: _RequestState, interval: float = POLL_FIRST_INTERVAL) -> _RequestState:
        """Inside a read: a request still PROCESSING with no time left to poll again ends the attempt.

        Raised here rather than after the exchange so the attempt log shows why the attempt ended.
        """
        if state.status == PROCESSING:
            self._end_if_no_time_to_poll(_request_subject(state), interval)
        return state

    def _end_if_no_time_to_poll(self, subject: str, interval: float) -> None:
        if self._next_pause(interval) is None:
            raise Refusal("STILL_PROCESSING", f"{subject} hâlâ işleniyor", kind=ErrorKind.UNAVAILABLE, ambiguous=True)

    def _next_pause(self, interval: float, wait: WaitHint | None = None) -> float | None:
        """How long to sleep before the next poll, or None when no poll fits before the deadline."""
        wanted = interval if wait is None else max(interval, wait.seconds)
        remaining = self.channel.remaining()
        if remaining is None and self._poll_stop_at is not None:
            remaining = self._poll_stop_at - time.monotonic()
        if remaining is None:
            return wanted
        budget = remaining - POLL_MIN_WINDOW
        # Polling before the insurer's window reopens would only be throttled again.
        if budget <= 0 or (wait is not None and wait.seconds > budget):
            return None
        return min(wanted, budget)

    def _start_polling_clock(self) -> None:
        if self.channel.remaining() is None:
            self._poll_stop_at = time.monotonic() + POLL_WITHOUT_DEADLINE

    # -- cancellation and the production list ----------------------------------------------------

    def cancel_policy(self, data: Mapping[str, Any], *, reference: str) -> Cancellation:
        """Send the cancellation and poll it to its end, within this one attempt (as issuance).
        Our reference is the `client_reference`: a repeat answers 409 DUPLICATE_REFERENCE with
        the cancellation it made, polled like a fresh one; a REJECTED poll is Deniz's verdict."""
        self._start_polling_clock()
        policy_no = data.get("policy_no")
        body = {
            "reason": wire_word(CANCEL_REASONS, data.get("reason")),
            "effective_on": wire_date(data.get("effective_on")),
            "client_reference": reference,
        }
        call = self._call("POST", f"/policies/{path_part(policy_no)}/cancellations", json=body)
        state = self.channel.exchange(call, partial(self._read_cancel, policy_no=policy_no))
        poll = self._call("GET", f"/cancellations/{path_part(state.cancellation_id)}", name="poll")
        read = partial(self._read_cancellation_poll, policy_no=policy_no)
        state = self._poll_to_end(
            poll, state, read, done=lambda polled: polled.status == DONE, subject=_cancellation_subject(state)
        )
        assert state.result is not None  # DONE is read with its result
        return state.result

    def _read_cancel(self, reply: Reply, *, policy_no: Any) -> _CancellationState:
        """202 with the new cancellation, or a 409 naming the one that stands: DUPLICATE_REFERENCE
        (our reference's, whatever became of it) or ALREADY_CANCELLED (the policy's first one)."""
        if reply.status == 409:
            try:
                body = json_body(reply)
            except Refusal:
                body = None
            code = body.get("code") if isinstance(body, dict) else None
            if code in CANCELLATION_NAMED:
                cancellation_id = body.get("cancellation_id")
                if not isinstance(cancellation_id, str) or not cancellation_id:
                    # Known, but not named: whatever it did is unknown; the next attempt asks again.
                    raise Refusal(code, f"409 {code} without the cancellation_id", ambiguous=True)
                return self._cancellation_settled_or_next_poll(_CancellationState(cancellation_id, PROCESSING))
        state = _cancellation_state(self._read(reply), policy_no)
        return self._cancellation_settled_or_next_poll(state)

    def _read_cancellation_poll(self, reply: Reply, *, policy_no: Any, interval: float) -> _CancellationState:
        state = _cancellation_state(self._read(reply), policy_no)
        return self._cancellation_settled_or_next_poll(state, interval)

    def _cancellation_settled_or_next_poll(
        self, state: _CancellationState, interval: float = POLL_FIRST_INTERVAL
    ) -> _CancellationState:
        if state.status == PROCESSING:
            self._end_if_no_time_to_poll(_cancellation_subject(state), interval)
        return state

    def policy_list(self, data: Mapping[str, Any]) -> PolicyListing:
        """`GET /policies?issued_from&issued_to`, then `&cursor=` each page's `next_cursor` names."""
        params = {"issued_from": wire_date(data.get("issued_from")), "issued_to": wire_date(data.get("issued_to"))}

        def fetch(cursor: str | None) -> tuple[list[ListedPolicy], str | None]:
            page_params = params if cursor is None else {**params, "cursor": cursor}
            call = self._call("GET", "/policies", params=page_params)
            return self.channel.exchange(call, partial(self._read_page, cursor=cursor))

        return self.list_pages.read((params["issued_from"], params["issued_to"]), fetch, first=None)

    def _read_page(self, reply: Reply, *, cursor: str | None) -> tuple[list[ListedPolicy], str | None]:
        body = self._read(reply)
        items, following = body["items"], body["next_cursor"]
        if not isinstance(items, list):
            raise ValueError(f"items is a {type(items).__name__}, not a list")
        if following is not None and (not isinstance(following, str) or not following or following == cursor):
            # A cursor that names no page, or this one again, would read the list forever.
            raise ValueError(mask_and_cut(f"next_cursor is {following!r}", 200))
        return [_listed(item) for item in items], following


def _json_object(reply: Reply) -> dict[str, Any]:
    body = json_body(reply)
    if not isinstance(body, dict):
        raise Refusal("MALFORMED_BODY", "JSON object expected")
    return body


def _reset_hint(reply: Reply) -> WaitHint | None:
    seconds = parse_reset_epoch(reply.headers.get("X-RateLimit-Reset"))
    return None if seconds is None else WaitHint(seconds, "X-RateLimit-Reset")


def _request_state(body: Any) -> _RequestState:
    if not isinstance(body, dict):
        raise Refusal("MALFORMED_BODY", "policy request is not a JSON object")
    status = body["status"]
    if status not in REQUEST_STATES:
        raise ValueError(f"unknown policy request status {status!r}")
    if status == ISSUED and not body.get("policy_no"):
        raise ValueError(f"request {body['request_id']} ISSUED without a policy_no")
    starts_on, ends_on = _period(body)
    return _RequestState(
        request_id=text(body["request_id"]),
        status=status,
        policy_no=text(body.get("policy_no") or ""),
        reason=str(body.get("reason") or ""),
        starts_on=starts_on,
        ends_on=ends_on,
    )


def _period(body: Mapping[str, Any]) -> tuple[date | None, date | None]:
    """`"period": {"from", "to"}`; absent or unreadable dates are None, never a failure (the
    policy stands whatever its period looks like)."""
    period = body.get("period")
    if not isinstance(period, dict):
        return None, None
    return parse_policy_date(period.get("from")), parse_policy_date(period.get("to"))


def _money_amount(value: Any) -> Any:
    """Deniz writes sums as `{"amount", "currency"}`; a TRY amount, or a bare value, is read."""
    if not isinstance(value, dict):
        return value
    if value.get("currency") not in (None, CURRENCY):
        raise ValueError(mask_and_cut(f"amount in {value.get('currency')!r}, not TRY", 200))
    return value.get("amount")


def _coverage(item: Any) -> dict[str, Any]:
    """`{"code", "label", "sum_insured": {"amount", "currency"}}` (a replacement car's `days` too),
    or a bare code (older answers)."""
    if isinstance(item, str):
        return coverage_entry(item)
    if not isinstance(item, dict):
        raise TypeError(f"coverage entry is a {type(item).__name__}")
    return coverage_entry(
        item.get("code"), item.get("label"), _money_amount(item.get("sum_insured")), days=item.get("days")
    )


def _risk_terms(product: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """`starts_on` and, for kasko, `options` as Deniz's `risk` carries them; only what `data` has."""
    terms = wire_terms(data, QUOTE_TERM_FIELDS)
    if product != "kasko":
        return terms
    options = wire_terms(data, KASKO_OPTION_FIELDS)
    for name in MONEY_OPTIONS & options.keys():
        value = options[name]
        options[name] = None if value is None else {"amount": value, "currency": CURRENCY}
    if "repair_shop" in options:
        options["repair_shop"] = REPAIR_SHOP_WORDS.get(options["repair_shop"], options["repair_shop"])
    return {**terms, "options": options} if options else terms


def _field_in_detail(detail: str) -> str | None:
    """The platform field an INVALID_REQUEST's detail names by its path (`risk.plate is
    invalid`, `risk.options.deductible ...`, `quote_id ...`), or None."""
    match = re.match(r"\s*([A-Za-z_]+(?:\.[A-Za-z_]+)*)", detail)
    if match is None:
        return None
    name = match.group(1).rsplit(".", 1)[-1]
    name = WIRE_FIELDS.get(name, name)
    return name if name in REQUEST_FIELDS else None


def _installment(item: Any) -> dict[str, Any]:
    """`{"count", "total": {"amount", "currency"}}`."""
    if not isinstance(item, dict):
        raise TypeError(f"installment entry is a {type(item).__name__}")
    return installment_entry(item.get("count"), _money_amount(item.get("total")))


def _port(url: Any) -> int | None:
    """The URL's port, the scheme's default when none is written (`http://h` is `http://h:80`)."""
    try:
        port = url.port
    except ValueError:
        return -1  # not a port at all: never equal to a real one
    return port if port is not None else {"http": 80, "https": 443}.get(url.scheme.lower())


def _not_ready(reply: Reply) -> Refusal:
    """A 202 to a document request: GENERATING (or a status we do not know) with Retry-After."""
    wait = hint_from_retry_after(reply.headers.get("Retry-After"))
    try:
        body = json_body(reply)
    except Refusal:
        body = None
    status = body.get("status") if isinstance(body, dict) else None
    if isinstance(status, str) and status and status != "GENERATING":
        # A 202 says "not yet", but a word we do not know is left for an admin to map.
        return Refusal(mask_and_cut(status, 64), mask_and_cut(f"202 with status {status!r}", 200), wait=wait)
    return Refusal("GENERATING", "Belge henüz hazırlanıyor", wait=wait, kind=ErrorKind.NOT_READY)


def _request_subject(state: _RequestState) -> str:
    return f"Poliçe talebi {state.request_id}"


def _still_processing(subject: str, last: InsurerError) -> InsurerError:
    """The request stands but no poll told its end in time: ambiguous, never a "no"."""
    return InsurerError(
        ErrorKind.UNAVAILABLE,
        provider_code="STILL_PROCESSING",
        message=f"{subject} sonuçlanmadı; son yoklama: {last.provider_code}",
        http_status=last.http_status,
        ambiguous=True,
        raw_sample=last.raw_sample,
    )


def _rejection(state: _RequestState) -> Refusal:
    reason = state.reason or "gerekçe bildirilmedi"
    # Deniz's verdict on the request itself, whichever call read it: "only REJECTED means no policy".
    return Refusal(
        "REJECTED",
        f"Poliçe talebi reddedildi: {reason}",
        kind=ErrorKind.BUSINESS_REJECT,
        ambiguous=False,
        settles_issuance=True,
    )


def _cancellation_subject(state: _CancellationState) -> str:
    return f"İptal talebi {state.cancellation_id}"


def _cancellation_state(body: Any, policy_no: Any) -> _CancellationState:
    """`{"cancellation_id", "status", "refund"?, "effective_on"?, "reason"?}`; REJECTED raised here,
    so the attempt log shows Deniz's verdict; DONE read with its result (inside the exchange)."""
    if not isinstance(body, dict):
        raise Refusal("MALFORMED_BODY", "cancellation is not a JSON object")
    status = body["status"]
    if status not in CANCELLATION_STATES:
        raise ValueError(mask_and_cut(f"unknown cancellation status {status!r}", 200))
    cancellation_id = text(body["cancellation_id"])
    if status == REJECTED:
        reason = str(body.get("reason") or "gerekçe bildirilmedi")
        # Deniz's verdict on the cancellation itself: the policy stands, nothing was refunded.
        raise Refusal(
            REJECTED,
            mask_and_cut(f"İptal talebi reddedildi: {reason}", 300),
            kind=ErrorKind.BUSINESS_REJECT,
            ambiguous=False,
            settles_issuance=True,
        )
    result = None
    if status == DONE:
        result = Cancellation(
            policy_no=text(policy_no),
            refund=parse_money(_money_amount(body["refund"])),
            cancelled_on=parse_answer_date(body["effective_on"]),
        )
    return _CancellationState(cancellation_id, status, result)


def _listed(item: Any) -> ListedPolicy:
    """One production-list item; anything unreadable fails the page (never dropped unseen)."""
    if not isinstance(item, dict):
        raise TypeError(f"list item is a {type(item).__name__}")
    period = item.get("period")
    if period is not None and not isinstance(period, dict):
        raise TypeError(f"period is a {type(period).__name__}")
    return ListedPolicy(
        policy_no=text(item["policy_no"]),
        quote_no=text(item.get("quote_id") or ""),
        product=PRODUCT_WORDS[item["product"]],
        status=POLICY_STATES[item["state"]],
        starts_on=parse_listed_date((period or {}).get("from")),
        ends_on=parse_listed_date((period or {}).get("to")),
        premium=parse_money(_money_amount(item["gross_premium"])),
    )
