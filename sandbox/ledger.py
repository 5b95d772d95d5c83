"""The business records of one sandbox insurer: quotes, policies, issuance keys, tokens.

Insurer modules describe the wire; the ledger holds what the insurer "knows". It is guarded
by the state's lock (``Insurer.handle`` holds it), so it has no lock of its own.
Numbers look like ``AK-P-3F9A2C-000001``: a tag drawn when the server starts, then a counter
that keeps counting across :meth:`Ledger.clear`. A client that remembers a number from an
earlier test, or a demo database that outlives a sandbox restart, never sees it reused.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from . import domain
from .domain import DocumentNotReady, InvalidField, Refusal

_PRODUCT_LETTER = {"trafik_quote": "T", "kasko_quote": "K", "dask_quote": "D"}


@dataclass
class Quote:
    quote_no: str
    operation: str
    agency: str
    premium: Decimal
    sum_insured: Decimal | None
    valid_until: float  # epoch seconds
    terms: domain.QuoteTerms = field(default_factory=domain.QuoteTerms)

    def covers(self) -> list[tuple[str, Decimal | None]]:
        """The product's covers (vehicle values from the tariff, whatever the options cost)."""
        return domain.coverages(self.operation, self.terms.tariff or self.premium, self.sum_insured)

    def offered_installments(self) -> list[tuple[int, Decimal]]:
        return domain.installments(self.premium)

    def is_expired(self, now: float) -> bool:
        return now >= self.valid_until


@dataclass
class Policy:
    policy_no: str
    status: str  # platform vocabulary: ACTIVE, CANCELLED, EXPIRED
    agency: str | None = None  # None: seeded through the control API, visible to every agency
    quote_no: str | None = None
    starts_on: date | None = None
    ends_on: date | None = None
    installments: int = 1  # the count chosen at issuance (1: peşin)
    document_ready_at: float = 0.0  # epoch seconds: "not ready yet" before this
    # What the production list and a cancellation read (CONTRACTS.md, the last two sections).
    product: str = "trafik"
    premium: Decimal | None = None
    issued_at: float | None = None  # epoch seconds; its day in Türkiye's calendar is the issue date
    sequence: int = 0  # issue order: "newest first" among policies issued in the same instant
    open_claim: bool = False  # a DASK policy with an open claim cannot be cancelled
    cancellation: Cancellation | None = None  # what cancelled it (None while it is not cancelled)


@dataclass
class Cancellation:
    """One cancellation of a policy, decided when it is received: the policy is cancelled (and
    counted) once, there and then. Deniz reveals it ``ready_at``, when its poll turns DONE, or
    REJECTED when ``rejected`` says why the policy stands."""

    cancellation_id: str
    policy_no: str
    agency: str | None  # None: cancelled outside the web service (the control API, a seed)
    reason: str  # platform word: vehicle_sold, customer_request, duplicate, other
    cancelled_on: date
    refund: Decimal
    reference: str | None = None
    ready_at: float = 0.0
    visible_at: float = 0.0  # Deniz: its polls do not see it before (poll lag)
    rejected: str | None = None

    def status(self, now: float) -> str:
        if now < self.ready_at:
            return "PROCESSING"
        return "REJECTED" if self.rejected else "DONE"


@dataclass
class PolicyRequest:
    """Deniz's asynchronous issuance: PROCESSING until ``ready_at``, then ISSUED or REJECTED."""

    request_id: str
    agency: str
    client_reference: str
    quote_no: str
    ready_at: float
    policy_no: str | None = None
    reason: str | None = None
    visible_at: float = 0.0  # epoch seconds: polls and lookups do not see it before (poll lag)

    def status(self, now: float) -> str:
        if now < self.ready_at:
            return "PROCESSING"
        return "ISSUED" if self.policy_no else "REJECTED"


@dataclass
class Address:
    uavt_code: str
    line: str
    building_id: str


@dataclass
class Ledger:
    insurer_code: str
    prefix: str
    quotes: dict[str, Quote] = field(default_factory=dict)
    policies: dict[str, Policy] = field(default_factory=dict)
    issued_by_quote: dict[str, list[str]] = field(default_factory=dict)
    # Issuance dedup records, keyed by (agency, key): Anka's Idempotency-Key,
    # Çınar's request_ref, Deniz's client_reference. What is stored is the insurer's business.
    dedup: dict[tuple[str, str], Any] = field(default_factory=dict)
    requests: dict[str, PolicyRequest] = field(default_factory=dict)
    tokens: dict[str, tuple[str, float]] = field(default_factory=dict)  # token -> (identity, expires_at)
    run_tag: str = field(default_factory=lambda: secrets.token_hex(3).upper())
    # The sandbox config's `document_delay_seconds`, kept here by SandboxState.
    document_delay: float = 0.0
    # The kasko options this insurer sells (its class's `kasko_menu`, set by `Insurer`).
    kasko_menu: domain.KaskoMenu = domain.FULL_MENU
    _counters: dict[str, int] = field(default_factory=dict)
    # Cancellations by id, their dedup records (keyed like ``dedup``), and how many times each
    # policy was cancelled through the web service.
    cancellations: dict[str, Cancellation] = field(default_factory=dict)
    cancel_dedup: dict[tuple[str, str], Any] = field(default_factory=dict)
    cancelled_count: dict[str, int] = field(default_factory=dict)

    def clear(self) -> None:
        self.quotes.clear()
        self.policies.clear()
        self.issued_by_quote.clear()
        self.dedup.clear()
        self.requests.clear()
        self.tokens.clear()
        self.cancellations.clear()
        self.cancel_dedup.clear()
        self.cancelled_count.clear()

    def next_number(self, letter: str) -> str:
        self._counters[letter] = self._counters.get(letter, 0) + 1
        return f"{self.prefix}-{letter}-{self.run_tag}-{self._counters[letter]:06d}"

    # --- quotes and addresses -------------------------------------------------------------

    def address(self, fields: Mapping[str, Any]) -> Address:
        domain.validate(fields, domain.OPERATION_FIELDS["dask_address"])
        uavt_code = fields["uavt_code"]
        if not domain.address_exists(uavt_code):
            raise Refusal(Refusal.ADDRESS_NOT_FOUND, f"UAVT {uavt_code}", field="uavt_code")
        return Address(uavt_code, domain.address_for(uavt_code), domain.building_id_for(self.insurer_code, uavt_code))

    def create_quote(self, operation: str, fields: Mapping[str, Any], *, agency: str, ttl_seconds: float) -> Quote:
        """Validate, apply the underwriting rules, price and store a quote."""
        domain.validate(fields, domain.OPERATION_FIELDS[operation])
        starts_on, options = domain.quote_terms(operation, fields, menu=self.kasko_menu, now_epoch=time.time())
        if operation == "kasko_quote" and not domain.vehicle_is_eligible_for_kasko(fields["model_year"]):
            raise Refusal(Refusal.NOT_ELIGIBLE, f"model year {fields['model_year']}")
        if operation == "dask_quote":
            uavt_code = fields["uavt_code"]
            if not domain.address_exists(uavt_code):
                raise Refusal(Refusal.ADDRESS_NOT_FOUND, f"UAVT {uavt_code}", field="uavt_code")
            if fields["building_id"] != domain.building_id_for(self.insurer_code, uavt_code):
                raise InvalidField("building_id", "invalid", "not the building of this UAVT code")
            if fields["damage_status"] == "heavy":
                raise Refusal(Refusal.RISK_DECLINED, "heavily damaged building")
        tariff, sum_insured = domain.price(self.insurer_code, operation, fields)
        premium = domain.price_with_options(tariff, options)
        quote = Quote(
            quote_no=self.next_number(_PRODUCT_LETTER[operation]),
            operation=operation,
            agency=agency,
            premium=premium,
            sum_insured=sum_insured,
            valid_until=time.time() + ttl_seconds,
            terms=domain.QuoteTerms(starts_on=starts_on, options=options, tariff=tariff),
        )
        self.quotes[quote.quote_no] = quote
        return quote

    # --- issuance --------------------------------------------------------------------------

    def issuable_quote(self, quote_no: str, *, agency: str) -> Quote:
        """The agency's own, unexpired quote (another agency's quote does not exist for it)."""
        quote = self.quotes.get(quote_no)
        if quote is None or quote.agency != agency:
            raise Refusal(Refusal.NOT_FOUND, f"quote {quote_no}", field="quote_no")
        if quote.is_expired(time.time()):
            raise Refusal(Refusal.QUOTE_EXPIRED, f"quote {quote_no}")
        return quote

    def issue(self, fields: Mapping[str, Any], *, agency: str) -> Policy:
        """Validate, check the quote and the payment, and create a NEW policy.

        No deduplication here on purpose: each insurer adds its own (or, like Boğaziçi, none).
        """
        domain.validate(fields, domain.OPERATION_FIELDS["issue_policy"])
        quote = self.issuable_quote(fields["quote_no"], agency=agency)
        starts_on, installments = self.issuance_terms(quote, fields)
        if fields["payment_token"] == domain.DECLINED_PAYMENT_TOKEN:
            raise Refusal(Refusal.PAYMENT_DECLINED, "card declined")
        return self.create_policy(quote, starts_on=starts_on, installments=installments)

    def issuance_terms(self, quote: Quote, fields: Mapping[str, Any]) -> tuple[date | None, int]:
        """The start (the issuance's own, else the quote's; None: tomorrow) and the count of
        installments (one the quote offered; not given: 1) an issuance asks for."""
        today = domain.today_in_turkiye(time.time())
        starts_on: date | None
        if domain.is_given(fields, "starts_on"):
            starts_on = domain.read_starts_on(fields["starts_on"], today=today)
        else:
            starts_on = quote.terms.starts_on
            if starts_on is not None and starts_on < today:
                raise InvalidField("starts_on", "invalid", "the quote's start date has passed")
        offered = [count for count, _ in quote.offered_installments()]
        return starts_on, domain.read_installments(fields, offered)

    def create_policy(self, quote: Quote, *, starts_on: date | None = None, installments: int = 1) -> Policy:
        now = time.time()
        starts_on, ends_on = domain.policy_period(now, starts_on)
        policy = Policy(
            self.next_number("P"),
            "ACTIVE",
            agency=quote.agency,
            quote_no=quote.quote_no,
            starts_on=starts_on,
            ends_on=ends_on,
            installments=installments,
            document_ready_at=now + self.document_delay,
        )
        self.policies[policy.policy_no] = policy
        self.issued_by_quote.setdefault(quote.quote_no, []).append(policy.policy_no)
        self._record_issue(policy, quote, now)
        return policy

    # --- policies --------------------------------------------------------------------------

    def policy(self, fields: Mapping[str, Any], *, agency: str, known_only: bool) -> Policy:
        """A policy visible to the agency; with ``known_only`` off, any well-formed number is ACTIVE."""
        domain.validate(fields, domain.OPERATION_FIELDS["policy_status"])
        policy_no = fields["policy_no"]
        policy = self.policies.get(policy_no)
        if policy is not None and policy.agency in (None, agency):
            return policy
        if policy is None and not known_only and self.is_well_formed_policy_no(policy_no):
            starts_on, ends_on = domain.seeded_period(policy_no, time.time())
            return Policy(policy_no, "ACTIVE", starts_on=starts_on, ends_on=ends_on)
        raise Refusal(Refusal.NOT_FOUND, f"policy {policy_no}", field="policy_no")

    def document(self, fields: Mapping[str, Any], *, agency: str, known_only: bool, insurer_name: str) -> bytes:
        """The policy's PDF; ``DocumentNotReady`` while the insurer is still producing it."""
        domain.validate(fields, domain.OPERATION_FIELDS["policy_document"])
        policy = self.policy(fields, agency=agency, known_only=known_only)
        wait = policy.document_ready_at - time.time()
        if wait > 0:
            raise DocumentNotReady(wait)
        return domain.policy_pdf(insurer_name, policy.policy_no, policy.starts_on, policy.ends_on)

    def is_well_formed_policy_no(self, policy_no: str) -> bool:
        head = f"{self.prefix}-P-"
        rest = policy_no[len(head) :]
        return policy_no.startswith(head) and bool(rest) and domain.RECORD_NO_RE.fullmatch(rest) is not None

    def latest_policy_for_quote(self, quote_no: str, *, agency: str) -> Policy:
        """The most recent policy issued (or seeded) for a quote."""
        for policy in reversed(self.policies.values()):
            if policy.quote_no == quote_no and policy.agency in (None, agency):
                return policy
        raise Refusal(Refusal.NOT_FOUND, f"no policy for quote {quote_no}", field="quote_no")

    def seed_policy(
        self,
        policy_no: str,
        status: str,
        quote_no: str | None = None,
        starts_on: date | None = None,
        ends_on: date | None = None,
        *,
        agency: str | None = None,
        product: str | None = None,
        premium: Decimal | None = None,
        issued_on: date | None = None,
        open_claim: bool = False,
    ) -> Policy:
        """A policy that exists at the insurer without having been issued in this run; its period
        is the one given, else a deterministic one (see ``domain.seeded_period``).

        With ``agency`` it is that agency's (issued on the insurer's portal, say): only it sees it,
        and its production list shows it; without, every agency sees it and no list does.
        """
        if starts_on is None or ends_on is None:
            starts_on, ends_on = domain.seeded_period(policy_no, time.time())
        policy = Policy(policy_no, status, agency=agency, quote_no=quote_no, starts_on=starts_on, ends_on=ends_on)
        self._record_seed(policy, product=product, premium=premium, issued_on=issued_on, open_claim=open_claim)
        self.policies.pop(policy_no, None)  # re-insert so "latest" order follows seeding order
        self.policies[policy_no] = policy
        return policy

    def issued_summary(self) -> tuple[dict[str, list[str]], int]:
        by_quote = {quote_no: list(numbers) for quote_no, numbers in self.issued_by_quote.items()}
        return by_quote, sum(len(numbers) for numbers in by_quote.values())

    # --- what the production list and a cancellation read (CONTRACTS.md, last two sections) ----

    def _next_sequence(self) -> int:
        self._counters["sequence"] = self._counters.get("sequence", 0) + 1
        return self._counters["sequence"]

    def _record_issue(self, policy: Policy, quote: Quote, now: float) -> None:
        """An issued policy's product, premium and issue time, from the quote it was issued on."""
        policy.product = domain.PRODUCT_OF[quote.operation]
        policy.premium = quote.premium
        policy.issued_at = now
        policy.sequence = self._next_sequence()

    def _record_seed(
        self,
        policy: Policy,
        *,
        product: str | None,
        premium: Decimal | None,
        issued_on: date | None,
        open_claim: bool,
    ) -> None:
        """A seeded policy's product (default trafik), premium (default deterministic per number)
        and issue time: noon in Türkiye on ``issued_on``, by default the day before it starts."""
        policy.product = product or "trafik"
        policy.premium = premium if premium is not None else domain.seeded_premium(policy.policy_no)
        policy.issued_at = domain.seeded_issue_time(issued_on, policy.starts_on)
        policy.sequence = self._next_sequence()
        policy.open_claim = open_claim

    def production_list(self, *, agency: str, issued_from: date, issued_to: date) -> list[Policy]:
        """The agency's own policies issued in the range (Türkiye's calendar), newest issue first."""
        chosen = [
            policy
            for policy in self.policies.values()
            if policy.agency == agency
            and policy.issued_at is not None
            and issued_from <= domain.today_in_turkiye(policy.issued_at) <= issued_to
        ]
        return sorted(chosen, key=lambda policy: (policy.issued_at, policy.sequence), reverse=True)

    def cancel(
        self,
        *,
        agency: str,
        policy_no: Any,
        reason: str,
        effective_on: date,
        reference: str | None = None,
        processing_seconds: float = 0.0,
        visible_after: float = 0.0,
        deferred: frozenset[str] = frozenset(),
        reject: str | None = None,
    ) -> Cancellation:
        """Cancel one of the agency's policies (or a seeded one): decided now, so the policy is
        cancelled and counted once, whatever becomes of the answer.

        Raises ``Refusal(NOT_FOUND)``; ``AlreadyCancelled`` with the first cancellation;
        ``InvalidField("effective_on")`` for a date outside the period (a duplicate takes effect
        on the start date whatever it says); ``CancelNotAllowed`` unless its code is ``deferred``
        (Deniz's background check): then, as with ``reject`` (a fault), the cancellation is
        recorded REJECTED and the policy stands.
        """
        domain.validate({"policy_no": policy_no}, ("policy_no",))
        policy = self.policies.get(policy_no)
        if policy is None or policy.agency not in (None, agency):
            raise Refusal(Refusal.NOT_FOUND, f"policy {policy_no}", field="policy_no")
        if policy.status == "CANCELLED":
            raise domain.AlreadyCancelled(self.cancellation_of(policy))
        starts_on, ends_on = self._period_of(policy)
        if reason != domain.DUPLICATE_REASON and not starts_on <= effective_on <= ends_on:
            raise InvalidField("effective_on", "invalid", f"outside the policy's period {starts_on} - {ends_on}")
        rejected = reject
        refused = self.cancel_refusal(policy)
        if refused is not None:
            if refused.code not in deferred:
                raise refused
            rejected = rejected or refused.code
        now = time.time()
        amount, cancelled_on = domain.refund(self._premium_of(policy), starts_on, ends_on, effective_on, reason)
        record = Cancellation(
            self.next_number("C"),
            policy.policy_no,
            agency,
            reason,
            cancelled_on,
            amount,
            reference=reference,
            ready_at=now + processing_seconds,
            visible_at=now + visible_after,
            rejected=rejected,
        )
        self.cancellations[record.cancellation_id] = record
        if rejected is None:
            policy.status = "CANCELLED"
            policy.cancellation = record
            self.cancelled_count[policy.policy_no] = self.cancelled_count.get(policy.policy_no, 0) + 1
        return record

    def cancel_refusal(self, policy: Policy) -> domain.CancelNotAllowed | None:
        """Why the insurer will not cancel this policy, if it will not."""
        if policy.status == "EXPIRED":
            return domain.CancelNotAllowed("POLICY_EXPIRED", f"policy {policy.policy_no} has expired")
        if policy.product == "dask" and policy.open_claim:
            return domain.CancelNotAllowed("OPEN_CLAIM", f"DASK policy {policy.policy_no} has an open claim")
        return None

    def cancellation_of(self, policy: Policy) -> Cancellation:
        """The cancellation that ended a cancelled policy. One cancelled outside the web service
        (seeded so, or through the control API) gets one now: reason ``other``, effective today
        (within its period), the refund by the same rule; not counted as a cancellation."""
        if policy.cancellation is None:
            starts_on, ends_on = self._period_of(policy)
            today = min(max(domain.today_in_turkiye(time.time()), starts_on), ends_on)
            amount, cancelled_on = domain.refund(self._premium_of(policy), starts_on, ends_on, today, "other")
            record = Cancellation(self.next_number("C"), policy.policy_no, None, "other", cancelled_on, amount)
            self.cancellations[record.cancellation_id] = record
            policy.cancellation = record
        return policy.cancellation

    def _period_of(self, policy: Policy) -> tuple[date, date]:
        if policy.starts_on is not None and policy.ends_on is not None:
            return policy.starts_on, policy.ends_on
        return domain.seeded_period(policy.policy_no, time.time())

    def _premium_of(self, policy: Policy) -> Decimal:
        return policy.premium if policy.premium is not None else domain.seeded_premium(policy.policy_no)

    def cancellations_summary(self) -> dict[str, int]:
        """How many times each policy was cancelled through the web service (one, or a bug)."""
        return dict(self.cancelled_count)
