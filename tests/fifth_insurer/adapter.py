"""Ege Sigorta (test): the fifth insurer's adapter, the worked example of docs/adding-an-insurer.md.

A small REST/JSON insurer that exists only in the tests (its sandbox is `sandbox.py` beside
this module). The HTTP status carries the error, the body names it in Ege's own words
(`{"fault": {"id", "text", "field"}}`); a throttle or a "PDF not ready yet" says how long to
wait in `Retry-After`. Issuance is deduplicated by our reference in the `X-Ege-Reference`
header: a repeat is answered with the first send's policy, so re-sending is itself the lookup.
Cancellation carries the same header (a repeat: the first cancellation again; already cancelled:
409 `E_CANCELLED` with it), and the production list pages by number until `"more": false`.
Quote and issuance terms (policy start, installments, kasko options) go flat in the body under
the platform's names; the options Ege priced come back among its covers in Ege's own codes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar, NoReturn

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
from integrations.answers.coverages import COMMON_ALIASES, coverage_entry, installment_entry, read_entries
from integrations.answers.results import (
    PDF_MAGIC,
    Address,
    Cancellation,
    Document,
    ListedPolicy,
    Policy,
    PolicyListing,
    PolicyStatus,
    Quote,
)
from integrations.answers.taxonomy import ErrorKind, Reason, Refusal
from integrations.calling.channel import MAX_DOCUMENT_RESPONSE_BYTES, MAX_RESPONSE_BYTES, Call, Reply
from integrations.operations import DASK_QUOTE_FIELDS, KASKO_FIELDS, KASKO_OPTION_FIELDS, VEHICLE_FIELDS
from integrations.pacing.waits import hint_from_retry_after

logger = logging.getLogger(__name__)

# Ege's whole error vocabulary, read into the taxonomy. The channel classifies with this table;
# a code missing here is `unclassified` (and shows up as such in the attempt log).
ERROR_TABLE: dict[str, ErrorKind] = {
    "E_INPUT": ErrorKind.VALIDATION,
    "E_KEY": ErrorKind.AUTH,
    "E_PRODUCT": ErrorKind.NOT_ALLOWED,
    "E_UNKNOWN": ErrorKind.NOT_FOUND,
    "E_STALE": ErrorKind.EXPIRED,
    "E_VEHICLE": ErrorKind.BUSINESS_REJECT,
    "E_RISK": ErrorKind.BUSINESS_REJECT,
    "E_REF_REUSED": ErrorKind.BUSINESS_REJECT,
    "E_SLOW_DOWN": ErrorKind.THROTTLED,
    "E_NOT_READY": ErrorKind.NOT_READY,
    "E_INTERNAL": ErrorKind.UNAVAILABLE,
    "E_DOWN": ErrorKind.UNAVAILABLE,
    "E_NOT_CANCELLABLE": ErrorKind.BUSINESS_REJECT,
    # E_CANCELLED (409) is no error: it carries the first cancellation, our result.
}

# What an agent reads for Ege's business refusals: the platform's one set of Turkish words.
AGENT_MESSAGES = {
    "E_VEHICLE": Reason.NOT_ELIGIBLE,
    "E_RISK": Reason.RISK_DECLINED,
    "E_PRODUCT": Reason.PRODUCT_NOT_ALLOWED,
    "E_STALE": Reason.QUOTE_EXPIRED,
    "E_NOT_CANCELLABLE": Reason.CANCEL_NOT_ALLOWED,
}

POLICY_STATES = {"LIVE": PolicyStatus.ACTIVE, "CANCELLED": PolicyStatus.CANCELLED, "LAPSED": PolicyStatus.EXPIRED}

# Ege's cover codes that are not the platform's or the common ones.
COVERAGE_ALIASES = {
    **COMMON_ALIASES,
    "KISI_BEDENI": "bodily_injury",
    "KISI_TEDAVI": "medical",
    "ARAC_MADDI": "property_damage",
    # the kasko options Ege priced (IMM is a common code)
    "IKAME": "replacement_car",
    "MUAF": "deductible",
}

PDF_CONTENT_TYPE = "application/pdf"

CANCEL_REASONS = {"vehicle_sold": "SATIS", "customer_request": "TALEP", "duplicate": "MUKERRER", "other": "DIGER"}
PRODUCTS = {"TRAFIK": "trafik", "KASKO": "kasko", "DASK": "dask"}


def _cancellation(body: Any) -> Cancellation:
    """`{"cancellation": {"no", "state": "CANCELLED", "refund", "date"}}`, a success's or a 409's."""
    cancellation = body.get("cancellation") if isinstance(body, dict) else None
    if not isinstance(cancellation, dict) or cancellation.get("state") != "CANCELLED":
        raise ValueError("a cancellation object in state CANCELLED expected")
    return Cancellation(
        policy_no=text(cancellation["no"]),
        refund=parse_money(cancellation["refund"]),
        cancelled_on=parse_answer_date(cancellation["date"]),
    )


def _listed(item: Any) -> ListedPolicy:
    if not isinstance(item, dict):
        raise TypeError(f"list item is a {type(item).__name__}")
    return ListedPolicy(
        policy_no=text(item["no"]),
        quote_no=text(item.get("quote") or ""),
        product=PRODUCTS[item["product"]],
        status=POLICY_STATES[item["state"]],
        starts_on=parse_listed_date(item.get("from")),
        ends_on=parse_listed_date(item.get("to")),
        premium=parse_money(item["premium"]),
    )


def _cover(item: Any) -> dict[str, Any]:
    """`{"code", "title", "limit"}`, Ege's codes read through its aliases."""
    if not isinstance(item, dict):
        raise TypeError(f"cover entry is a {type(item).__name__}")
    return coverage_entry(
        item.get("code"), item.get("title"), item.get("limit"), aliases=COVERAGE_ALIASES, days=item.get("days")
    )


def _plan(item: Any) -> dict[str, Any]:
    """`{"n", "total"}`: the premium paid in n parts, and its total."""
    if not isinstance(item, dict):
        raise TypeError(f"plan entry is a {type(item).__name__}")
    return installment_entry(item.get("n"), item.get("total"))


def _with_terms(data: Mapping[str, Any], fields: tuple[str, ...], terms: tuple[str, ...]) -> dict[str, Any]:
    """The operation's fields (a missing one null, for Ege to refuse) and the terms `data` carries,
    in their wire forms (an ISO date, amounts as decimal strings) under the platform's names."""
    return {**pick(data, *fields), **wire_terms(data, terms)}


@register
class EgeAdapter(InsurerAdapter):
    code = "ege"
    name = "Ege Sigorta (test)"
    credential_fields = ("agent_id", "secret")
    error_table = ERROR_TABLE
    # Nothing in Ege's contract changes the platform's default retry policies.
    policy_defaults: ClassVar[Mapping[str, Mapping[str, float]]] = {}
    issuance_deduplicated = True

    def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        headers: dict[str, str] | None = None,
        max_bytes: int = MAX_RESPONSE_BYTES,
    ) -> Call:
        auth = {"X-Ege-Agent": self.credentials["agent_id"], "X-Ege-Secret": self.credentials["secret"]}
        return Call(method, path, json=json, headers={**auth, **(headers or {})}, max_bytes=max_bytes)

    def _read(self, reply: Reply) -> dict[str, Any]:
        if 200 <= reply.status < 300:
            body = json_body(reply)
            if not isinstance(body, dict):
                raise Refusal("MALFORMED_BODY", "JSON object expected")
            return body
        self._refuse(reply)

    def _refuse(self, reply: Reply) -> NoReturn:
        """The `Refusal` an error answer carries, with its `Retry-After` (throttle, not ready, 503)."""
        wait = hint_from_retry_after(reply.headers.get("Retry-After"))
        try:
            body = json_body(reply)
        except Refusal as refusal:
            refusal.wait = wait
            raise
        fault = body.get("fault") if isinstance(body, dict) else None
        if not isinstance(fault, dict) or not isinstance(fault.get("id"), str) or not fault["id"]:
            refused = status_refusal(reply, "error body without a fault id")
            refused.wait = wait
            raise refused
        code = fault["id"]
        message = AGENT_MESSAGES.get(code) or str(fault.get("text") or "")
        field = fault.get("field") if isinstance(fault.get("field"), str) else None
        kind = ErrorKind.UNAVAILABLE if reply.status >= 500 else None
        raise Refusal(code, message, field=field, wait=wait, kind=kind)

    def _read_quote(self, reply: Reply) -> Quote:
        body = self._read(reply)
        details: dict[str, Any] = {
            # An unreadable entry is left out (and logged), never the quote: the premium is what is sold.
            "coverages": read_entries(body.get("covers"), _cover, log=logger, what="covers"),
            "installments": read_entries(body.get("plans"), _plan, log=logger, what="plans"),
        }
        if "sum_insured" in body:
            details["sum_insured"] = body["sum_insured"]
        return Quote(
            quote_no=text(body["ref"]),
            premium=parse_money(body["premium"]),
            currency=text(body["currency"]),
            valid_until=parse_utc(body["expires"]),
            details=details,
        )

    def _read_policy(self, reply: Reply) -> Policy:
        policy = self._read(reply).get("policy")
        if not isinstance(policy, dict):
            raise ValueError("policy object expected")
        return Policy(
            policy_no=text(policy["no"]),
            status=POLICY_STATES[policy["state"]],
            starts_on=parse_policy_date(policy.get("from")),
            ends_on=parse_policy_date(policy.get("to")),
        )

    def trafik_quote(self, data: Mapping[str, Any]) -> Quote:
        return self.channel.exchange(
            self._call("POST", "/api/quotes/trafik", json=_with_terms(data, VEHICLE_FIELDS, QUOTE_TERM_FIELDS)),
            self._read_quote,
        )

    def kasko_quote(self, data: Mapping[str, Any]) -> Quote:
        return self.channel.exchange(
            self._call(
                "POST",
                "/api/quotes/kasko",
                json=_with_terms(data, KASKO_FIELDS, (*QUOTE_TERM_FIELDS, *KASKO_OPTION_FIELDS)),
            ),
            self._read_quote,
        )

    def dask_address(self, data: Mapping[str, Any]) -> Address:
        def read(reply: Reply) -> Address:
            body = self._read(reply)
            return Address(uavt_code=text(body["uavt"]), address=text(body["text"]), building_id=text(body["building"]))

        return self.channel.exchange(self._call("GET", f"/api/addresses/{path_part(data.get('uavt_code'))}"), read)

    def dask_quote(self, data: Mapping[str, Any]) -> Quote:
        return self.channel.exchange(
            self._call("POST", "/api/quotes/dask", json=_with_terms(data, DASK_QUOTE_FIELDS, QUOTE_TERM_FIELDS)),
            self._read_quote,
        )

    def issue_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy:
        body = _with_terms(data, ("quote_no", "payment_token"), ISSUE_TERM_FIELDS)
        call = self._call("POST", "/api/policies", json=body, headers={"X-Ege-Reference": reference})
        return self.channel.exchange(call, self._read_policy)

    def find_issued_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy | None:
        """No lookup: a re-send under the same `X-Ege-Reference` answers with the first send's
        policy, so "not known" here means "send it again" (`issuance_deduplicated`)."""
        return None

    def policy_status(self, data: Mapping[str, Any]) -> Policy:
        return self.channel.exchange(
            self._call("GET", f"/api/policies/{path_part(data.get('policy_no'))}"), self._read_policy
        )

    def policy_document(self, data: Mapping[str, Any]) -> Document:
        policy_no = data.get("policy_no")

        def read(reply: Reply) -> Document:
            if not 200 <= reply.status < 300:
                self._refuse(reply)
            if reply.content_type != PDF_CONTENT_TYPE:
                raise Refusal("MALFORMED_BODY", f"PDF expected, got {reply.content_type or 'no content type'}")
            if not reply.content.startswith(PDF_MAGIC):
                raise Refusal("MALFORMED_BODY", "PDF expected, the body has no %PDF- header")
            return Document(policy_no=text(policy_no), content=reply.content, content_type=PDF_CONTENT_TYPE)

        call = self._call("GET", f"/api/policies/{path_part(policy_no)}/pdf", max_bytes=MAX_DOCUMENT_RESPONSE_BYTES)
        return self.channel.exchange(call, read)

    def cancel_policy(self, data: Mapping[str, Any], *, reference: str) -> Cancellation:
        body = {"reason": wire_word(CANCEL_REASONS, data.get("reason")), "date": wire_date(data.get("effective_on"))}
        call = self._call(
            "POST",
            f"/api/policies/{path_part(data.get('policy_no'))}/cancel",
            json=body,
            headers={"X-Ege-Reference": reference},
        )

        def read(reply: Reply) -> Cancellation:
            if reply.status == 409:
                try:
                    answer = json_body(reply)
                except Refusal:
                    answer = None
                fault = answer.get("fault") if isinstance(answer, dict) else None
                if isinstance(fault, dict) and fault.get("id") == "E_CANCELLED":
                    return _cancellation(answer)  # already cancelled: the first cancellation
            return _cancellation(self._read(reply))

        return self.channel.exchange(call, read)

    def policy_list(self, data: Mapping[str, Any]) -> PolicyListing:
        params = {"from": wire_date(data.get("issued_from")), "to": wire_date(data.get("issued_to"))}

        def fetch(page: int) -> tuple[list[ListedPolicy], int | None]:
            call = self._call("GET", "/api/policies")
            call.params = {**params, "page": str(page)}

            def read(reply: Reply) -> tuple[list[ListedPolicy], int | None]:
                body = self._read(reply)
                items, more = body["policies"], body["more"]
                if not isinstance(items, list) or not isinstance(more, bool) or body.get("page", page) != page:
                    raise ValueError("a page of policies, its number and `more` expected")
                return [_listed(item) for item in items], (page + 1 if more else None)

            return self.channel.exchange(call, read)

        return self.list_pages.read((params["from"], params["to"]), fetch, first=1)
