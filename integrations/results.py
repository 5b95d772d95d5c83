"""Normalised answers: the same shape whichever insurer gave them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any


class PolicyStatus(StrEnum):
    ACTIVE = "ACTIVE"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"


def _jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


class _Result:
    def to_json(self) -> dict[str, Any]:
        return _jsonable(asdict(self))  # type: ignore[call-overload]


@dataclass(frozen=True)
class Quote(_Result):
    quote_no: str
    premium: Decimal
    currency: str
    valid_until: datetime
    # Insurer-specific extras worth keeping (kasko coverages, DASK sum insured).
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Address(_Result):
    uavt_code: str
    address: str
    building_id: str


@dataclass(frozen=True)
class Policy(_Result):
    policy_no: str
    status: PolicyStatus
