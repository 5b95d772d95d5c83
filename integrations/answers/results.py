"""Normalised answers: the same shape whichever insurer gave them."""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from insurehub.masking import mask_and_cut


class PolicyStatus(StrEnum):
    ACTIVE = "ACTIVE"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"


def _jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


# What the platform can store: quote and policy numbers up to 64 characters, premiums under
# 10^10 TRY (DecimalField(12, 2)), ISO currency codes. An answer outside these is malformed:
# it must become `unknown`, never a half-stored quote.
MAX_NUMBER_LENGTH = 64
MAX_PREMIUM = Decimal(10) ** 10
CURRENCY_RE = re.compile(r"^[A-Z]{3}$")


def _check_text(name: str, value: object, max_length: int) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > max_length:
        raise ValueError(mask_and_cut(f"{name} is not a usable text: {value!r}", 200))


class _Result:
    def to_json(self) -> dict[str, Any]:
        # Every result class is a dataclass; this base, which only gives them to_json, is not one.
        return _jsonable(asdict(self))  # type: ignore[call-overload]


@dataclass(frozen=True)
class Quote(_Result):
    quote_no: str
    premium: Decimal
    currency: str
    valid_until: datetime
    # Insurer-specific extras worth keeping (kasko coverages, DASK sum insured); JSON-safe values only.
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_text("quote_no", self.quote_no, MAX_NUMBER_LENGTH)
        if not isinstance(self.currency, str) or not CURRENCY_RE.match(self.currency):
            raise ValueError(mask_and_cut(f"currency is not an ISO code: {self.currency!r}", 200))
        if not isinstance(self.premium, Decimal) or not self.premium.is_finite():
            raise ValueError(f"premium is not a decimal: {self.premium!r}")
        if not Decimal(0) <= self.premium < MAX_PREMIUM:
            raise ValueError(f"premium out of range: {self.premium}")
        if not isinstance(self.valid_until, datetime) or self.valid_until.tzinfo is None:
            raise ValueError("valid_until must be an aware datetime")


@dataclass(frozen=True)
class Address(_Result):
    uavt_code: str
    address: str
    building_id: str

    def __post_init__(self) -> None:
        _check_text("uavt_code", self.uavt_code, 16)
        _check_text("address", self.address, 500)
        _check_text("building_id", self.building_id, MAX_NUMBER_LENGTH)


@dataclass(frozen=True)
class Policy(_Result):
    policy_no: str
    status: PolicyStatus
    # When the policy runs, in Türkiye's calendar (CONTRACTS.md, "Policy period"); None when the
    # answer did not say or said it in a form no adapter reads: the policy number still stands.
    starts_on: date | None = None
    ends_on: date | None = None

    def __post_init__(self) -> None:
        _check_text("policy_no", self.policy_no, MAX_NUMBER_LENGTH)
        if not isinstance(self.status, PolicyStatus):
            raise ValueError(f"unknown policy status: {self.status!r}")
        for name in ("starts_on", "ends_on"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, date) or isinstance(value, datetime)):
                raise ValueError(f"{name} must be a date: {value!r}")


# CONTRACTS.md: a policy document is a PDF of at most 5 MiB; anything else is an unreadable answer.
MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
PDF_MAGIC = b"%PDF-"


@dataclass(frozen=True)
class Document(_Result):
    """A policy's PDF. Only its size and digest are reported (the probe, the attempt log); the
    bytes themselves go to storage, never into a log line or a task result."""

    policy_no: str
    content: bytes = field(repr=False)
    content_type: str = "application/pdf"

    def __post_init__(self) -> None:
        _check_text("policy_no", self.policy_no, MAX_NUMBER_LENGTH)
        if not isinstance(self.content, bytes) or not self.content.startswith(PDF_MAGIC):
            raise ValueError("document is not a PDF (no %PDF- header)")
        if len(self.content) > MAX_DOCUMENT_BYTES:
            raise ValueError(f"document is {len(self.content)} bytes, over the 5 MiB the contract allows")

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    def to_json(self) -> dict[str, Any]:
        return {
            "policy_no": self.policy_no,
            "content_type": self.content_type,
            "bytes": len(self.content),
            "sha256": self.sha256,
        }


@dataclass(frozen=True)
class Cancellation(_Result):
    """A cancelled policy (CONTRACTS.md, "Cancellation"): the refund the insurer pays back and
    the day the cancellation takes effect. An "already cancelled" answer gives the same result."""

    policy_no: str
    refund: Decimal
    cancelled_on: date
    status: PolicyStatus = PolicyStatus.CANCELLED

    def __post_init__(self) -> None:
        _check_text("policy_no", self.policy_no, MAX_NUMBER_LENGTH)
        if not isinstance(self.refund, Decimal) or not self.refund.is_finite():
            raise ValueError(f"refund is not a decimal: {self.refund!r}")
        if not Decimal(0) <= self.refund < MAX_PREMIUM:
            raise ValueError(f"refund out of range: {self.refund}")
        if not isinstance(self.cancelled_on, date) or isinstance(self.cancelled_on, datetime):
            raise ValueError(f"cancelled_on must be a date: {self.cancelled_on!r}")
        if self.status is not PolicyStatus.CANCELLED:
            raise ValueError(f"a cancellation's status is CANCELLED, not {self.status!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "policy_no": self.policy_no,
            "status": self.status.value,
            "refund": str(self.refund),
            "cancelled_on": self.cancelled_on.isoformat(),
        }


PRODUCTS = ("trafik", "kasko", "dask")


@dataclass(frozen=True)
class ListedPolicy(_Result):
    """One policy of an insurer's production list, as the insurer keeps it. `quote_no` is empty
    for a policy issued without a quote of ours (the insurer's own portal)."""

    policy_no: str
    quote_no: str
    product: str
    status: PolicyStatus
    starts_on: date | None
    ends_on: date | None
    premium: Decimal | None

    def __post_init__(self) -> None:
        _check_text("policy_no", self.policy_no, MAX_NUMBER_LENGTH)
        if not isinstance(self.quote_no, str) or len(self.quote_no) > MAX_NUMBER_LENGTH:
            raise ValueError(mask_and_cut(f"quote_no is not a usable text: {self.quote_no!r}", 200))
        if self.product not in PRODUCTS:
            raise ValueError(mask_and_cut(f"unknown product: {self.product!r}", 200))
        if not isinstance(self.status, PolicyStatus):
            raise ValueError(f"unknown policy status: {self.status!r}")
        if self.premium is not None and not (
            isinstance(self.premium, Decimal) and self.premium.is_finite() and 0 <= self.premium < MAX_PREMIUM
        ):
            raise ValueError(mask_and_cut(f"premium out of range: {self.premium!r}", 200))


@dataclass(frozen=True)
class PolicyListing(_Result):
    """Every page of a production list, in the insurer's order, none twice."""

    policies: tuple[ListedPolicy, ...]

    def __post_init__(self) -> None:
        numbers = [policy.policy_no for policy in self.policies]
        if len(set(numbers)) != len(numbers):
            raise ValueError("the production list holds a policy twice")
