"""Anka Sigorta: REST/JSON, the HTTP status carries the error, `Retry-After` in seconds.

Issuance is safe to re-send: Anka honours `Idempotency-Key`, answering a repeat with the
original policy, so the re-send itself is how we ask for the state after an ambiguous failure.

Policy documents are produced after issuance: until then Anka answers 409 `DOCUMENT_NOT_READY`
with a `Retry-After`, a wait it asks for (NOT_READY), not a failure.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any, NoReturn

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
)
from integrations.adapters.registry import register
from integrations.answers.coverages import coverage_entry, installment_entry, read_entries
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

ERROR_TABLE: dict[str, ErrorKind] = {
    "VALIDATION": ErrorKind.VALIDATION,
    "AUTH_INVALID": ErrorKind.AUTH,
    "PRODUCT_NOT_ALLOWED": ErrorKind.NOT_ALLOWED,
    "NOT_FOUND": ErrorKind.NOT_FOUND,
    "ADDRESS_NOT_FOUND": ErrorKind.NOT_FOUND,
    "QUOTE_EXPIRED": ErrorKind.EXPIRED,
    "NOT_ELIGIBLE": ErrorKind.BUSINESS_REJECT,
    "RISK_DECLINED": ErrorKind.BUSINESS_REJECT,
    "IDEMPOTENCY_MISMATCH": ErrorKind.BUSINESS_REJECT,
    "RATE_LIMITED": ErrorKind.THROTTLED,
    "DOCUMENT_NOT_READY": ErrorKind.NOT_READY,
    "CANCEL_NOT_ALLOWED": ErrorKind.BUSINESS_REJECT,
    # ALREADY_CANCELLED (409) is no error: it carries the first cancellation, our result.
}

# What an agent reads (in one set of Turkish words, `Reason`) for Anka's business refusals.
AGENT_MESSAGES = {
    "NOT_ELIGIBLE": Reason.NOT_ELIGIBLE,
    "RISK_DECLINED": Reason.RISK_DECLINED,
    "PRODUCT_NOT_ALLOWED": Reason.PRODUCT_NOT_ALLOWED,
    "QUOTE_EXPIRED": Reason.QUOTE_EXPIRED,
    "CANCEL_NOT_ALLOWED": Reason.CANCEL_NOT_ALLOWED,
}

POLICY_STATUSES = {"ACTIVE": PolicyStatus.ACTIVE, "CANCELLED": PolicyStatus.CANCELLED, "EXPIRED": PolicyStatus.EXPIRED}

PDF_CONTENT_TYPE = "application/pdf"

# The code of a 409 that is our result, not an error (CONTRACTS.md, "Cancellation").
ALREADY_CANCELLED = "ALREADY_CANCELLED"


def _cancellation(body: Any) -> Cancellation:
    """`{"policy_no", "status": "CANCELLED", "refund", "cancelled_on"}`, a success's or a 409's."""
    if not isinstance(body, dict):
        raise TypeError(f"cancellation is a {type(body).__name__}")
    if body.get("status") != "CANCELLED":
        raise ValueError(mask_and_cut(f"cancellation status {body.get('status')!r}", 200))
    return Cancellation(
        policy_no=text(body["policy_no"]),
        refund=parse_money(body["refund"]),
        cancelled_on=parse_answer_date(body["cancelled_on"]),
    )


def _listed(item: Any) -> ListedPolicy:
    """One production-list item; anything unreadable fails the page (never dropped unseen)."""
    if not isinstance(item, dict):
        raise TypeError(f"list item is a {type(item).__name__}")
    return ListedPolicy(
        policy_no=text(item["policy_no"]),
        quote_no=text(item.get("quote_no") or ""),
        product=text(item["product"]),
        status=POLICY_STATUSES[item["status"]],
        starts_on=parse_listed_date(item.get("starts_on")),
        ends_on=parse_listed_date(item.get("ends_on")),
        premium=parse_money(item["premium"]),
    )


def _coverage(item: Any) -> dict[str, Any]:
    """`{"code", "name", "limit"}`, or a bare code from older releases."""
    if isinstance(item, str):
        return coverage_entry(item)
    if not isinstance(item, dict):
        raise TypeError(f"coverage entry is a {type(item).__name__}")
    return coverage_entry(item.get("code"), item.get("name"), item.get("limit"), days=item.get("days"))


def _installment(item: Any) -> dict[str, Any]:
    """`{"count", "total"}`: the premium paid in that many parts, and its total."""
    if not isinstance(item, dict):
        raise TypeError(f"installment entry is a {type(item).__name__}")
    return installment_entry(item.get("count"), item.get("total"))


# Anka takes the terms under the platform's names and in its words (`authorized`, `contracted`).
KASKO_TERM_FIELDS = (*QUOTE_TERM_FIELDS, *KASKO_OPTION_FIELDS)


def _with_terms(data: Mapping[str, Any], fields: tuple[str, ...], terms: tuple[str, ...]) -> dict[str, Any]:
    """The operation's fields (a missing one null, for Anka to refuse) and the terms `data` carries."""
    return {**pick(data, *fields), **wire_terms(data, terms)}


@register
class AnkaAdapter(InsurerAdapter):
    code = "anka"
    name = "Anka Sigorta"
    credential_fields = ("api_key",)
    identifying_credential_is_secret = True
    error_table = ERROR_TABLE
    issuance_deduplicated = True

    def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        headers: dict[str, str] | None = None,
        name: str = "main",
        max_bytes: int = MAX_RESPONSE_BYTES,
    ) -> Call:
        return Call(
            method,
            path,
            json=json,
            headers={"X-Api-Key": self.credentials["api_key"], **(headers or {})},
            name=name,
            max_bytes=max_bytes,
        )

    def _read(self, reply: Reply) -> dict[str, Any]:
        """Success body, or a `Refusal` carrying Anka's code and its wait signal."""
        if 200 <= reply.status < 300:
            body = json_body(reply)
            if not isinstance(body, dict):
                raise Refusal("MALFORMED_BODY", "JSON object expected")
            return body
        self._refuse(reply)

    def _refuse(self, reply: Reply) -> NoReturn:
        """Raise the `Refusal` an error answer (status >= 300) carries, with its wait signal."""
        wait = hint_from_retry_after(reply.headers.get("Retry-After"))
        try:
            body = json_body(reply)
        except Refusal as refusal:
            refusal.wait = wait
            raise
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            refused = status_refusal(reply, "error body without a code")
            refused.wait = wait
            raise refused
        code = error["code"]
        message = AGENT_MESSAGES.get(code) or str(error.get("message") or "")
        field = error.get("field") if isinstance(error.get("field"), str) else None
        kind = ErrorKind.UNAVAILABLE if reply.status >= 500 else None
        raise Refusal(code, message, field=field, wait=wait, kind=kind)

    def _read_quote(self, reply: Reply) -> Quote:
        body = self._read(reply)
        details: dict[str, Any] = {}
        if "coverages" in body:
            details["coverages"] = read_entries(body["coverages"], _coverage, log=logger, what="coverages")
        if "installments" in body:
            details["installments"] = read_entries(body["installments"], _installment, log=logger, what="installments")
        if "sum_insured" in body:
            details["sum_insured"] = body["sum_insured"]
        return Quote(
            quote_no=text(body["quote_no"]),
            premium=parse_money(body["premium"]),
            currency=text(body["currency"]),
            valid_until=parse_utc(body["valid_until"]),
            details=details,
        )

    def _read_policy(self, reply: Reply) -> Policy:
        body = self._read(reply)
        return Policy(
            policy_no=text(body["policy_no"]),
            status=POLICY_STATUSES[body["status"]],
            starts_on=parse_policy_date(body.get("starts_on")),
            ends_on=parse_policy_date(body.get("ends_on")),
        )

    def trafik_quote(self, data: Mapping[str, Any]) -> Quote:
        return self.channel.exchange(
            self._call("POST", "/v1/quotes/trafik", json=_with_terms(data, VEHICLE_FIELDS, QUOTE_TERM_FIELDS)),
            self._read_quote,
        )

    def kasko_quote(self, data: Mapping[str, Any]) -> Quote:
        return self.channel.exchange(
            self._call("POST", "/v1/quotes/kasko", json=_with_terms(data, KASKO_FIELDS, KASKO_TERM_FIELDS)),
            self._read_quote,
        )

    def dask_address(self, data: Mapping[str, Any]) -> Address:
        def read(reply: Reply) -> Address:
            body = self._read(reply)
            return Address(
                uavt_code=text(body["uavt_code"]), address=text(body["address"]), building_id=text(body["building_id"])
            )

        return self.channel.exchange(self._call("GET", f"/v1/dask/addresses/{path_part(data.get('uavt_code'))}"), read)

    def dask_quote(self, data: Mapping[str, Any]) -> Quote:
        return self.channel.exchange(
            self._call("POST", "/v1/quotes/dask", json=_with_terms(data, DASK_QUOTE_FIELDS, QUOTE_TERM_FIELDS)),
            self._read_quote,
        )

    def issue_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy:
        call = self._call(
            "POST",
            "/v1/policies",
            json=_with_terms(data, ("quote_no", "payment_token"), ISSUE_TERM_FIELDS),
            headers={"Idempotency-Key": reference},
        )
        return self.channel.exchange(call, self._read_issued_policy)

    def _read_issued_policy(self, reply: Reply) -> Policy:
        """An issuance's answer. IDEMPOTENCY_MISMATCH says Anka already holds a request under our
        key (with another body): whatever that request did is unknown, so it is never read as a
        refusal of the send (which would let a replay send the quote again under a new key)."""
        try:
            return self._read_policy(reply)
        except Refusal as refusal:
            if refusal.code == "IDEMPOTENCY_MISMATCH":
                refusal.ambiguous = True
            raise

    def find_issued_policy(self, data: Mapping[str, Any], *, reference: str) -> Policy | None:
        """No lookup to ask: a re-send under the same Idempotency-Key is the question (a repeat
        answers with the first send's policy), so "not known" here means "send it again"."""
        return None

    def policy_status(self, data: Mapping[str, Any]) -> Policy:
        return self.channel.exchange(
            self._call("GET", f"/v1/policies/{path_part(data.get('policy_no'))}"), self._read_policy
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

        call = self._call("GET", f"/v1/policies/{path_part(policy_no)}/document", max_bytes=MAX_DOCUMENT_RESPONSE_BYTES)
        return self.channel.exchange(call, read)

    # -- cancellation and the production list ----------------------------------------------------

    def cancel_policy(self, data: Mapping[str, Any], *, reference: str) -> Cancellation:
        """Our reference is the `Idempotency-Key`: a repeat is Anka's replay of the first answer.
        The reasons are the platform's own words at Anka."""
        body = {"reason": data.get("reason"), "effective_on": wire_date(data.get("effective_on"))}
        call = self._call(
            "POST",
            f"/v1/policies/{path_part(data.get('policy_no'))}/cancellation",
            json=body,
            headers={"Idempotency-Key": reference},
        )
        return self.channel.exchange(call, self._read_cancellation)

    def _read_cancellation(self, reply: Reply) -> Cancellation:
        """A 200, or a 409 ALREADY_CANCELLED with the first cancellation: the same result. A 409
        at Anka is QUOTE_EXPIRED or ALREADY_CANCELLED: the code says which. IDEMPOTENCY_MISMATCH
        means Anka holds another request under our key, whose outcome is unknown (as at issuance)."""
        if reply.status == 409:
            try:
                body = json_body(reply)
            except Refusal:
                body = None
            error = body.get("error") if isinstance(body, dict) else None
            if isinstance(error, dict) and error.get("code") == ALREADY_CANCELLED:
                if "cancellation" not in body:
                    raise ValueError("ALREADY_CANCELLED without the cancellation it repeats")
                return _cancellation(body["cancellation"])
        try:
            return _cancellation(self._read(reply))
        except Refusal as refusal:
            if refusal.code == "IDEMPOTENCY_MISMATCH":
                refusal.ambiguous = True
            raise

    def policy_list(self, data: Mapping[str, Any]) -> PolicyListing:
        """`GET /v1/policies?issued_from&issued_to&page`, page 1 to `pages`, one exchange each."""
        params = {"issued_from": wire_date(data.get("issued_from")), "issued_to": wire_date(data.get("issued_to"))}

        def fetch(page: int) -> tuple[list[ListedPolicy], int | None]:
            call = self._call("GET", "/v1/policies")
            call.params = {**params, "page": str(page)}
            return self.channel.exchange(call, partial(self._read_page, page=page))

        return self.list_pages.read((params["issued_from"], params["issued_to"]), fetch, first=1)

    def _read_page(self, reply: Reply, *, page: int) -> tuple[list[ListedPolicy], int | None]:
        body = self._read(reply)
        items, pages = body["items"], body["pages"]
        if not isinstance(items, list):
            raise ValueError(f"items is a {type(items).__name__}, not a list")
        if not isinstance(pages, int) or isinstance(pages, bool) or pages < 0:
            raise ValueError(mask_and_cut(f"pages is {pages!r}", 200))
        if body.get("page", page) != page or (items and page > pages):
            raise ValueError(
                mask_and_cut(f"answer of page {body.get('page')!r} of {pages}, asked for page {page}", 200)
            )
        return [_listed(item) for item in items], (page + 1 if page < pages else None)
