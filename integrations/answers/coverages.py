"""Coverages and installments, read from each insurer's quote into one shape.

Insurers name the same cover in their own words (Anka's `collision`, Boğaziçi's `CARPISMA`);
an agent comparing quotes side by side needs one row per cover, so each adapter maps its codes
onto the platform's vocabulary below. A code no adapter knows yet keeps the insurer's own code
and name: it gets a row of its own rather than being dropped.

The stored shape (in `Quote.details`, JSON):
- `coverages`: `[{"code", "name", "limit"}]`, `limit` a TRY decimal string or None (unlimited,
  or not applicable); the replacement car (`replacement_car`) also has `days`, and the
  deductible's (`deductible`) `limit` is its amount, what the insured bears per claim;
- `installments`: `[{"count", "total"}]`, `total` the whole premium paid in `count` parts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from insurehub.masking import mask_and_cut

# The platform's coverage vocabulary, in the order a comparison lists them.
COVERAGE_NAMES_TR: dict[str, str] = {
    # trafik: the legal limits
    "bodily_injury": "Kişi başı sakatlanma ve ölüm",
    "medical": "Kişi başı tedavi masrafları",
    "property_damage": "Araç başı maddi hasar",
    # kasko
    "collision": "Çarpışma",
    "theft": "Hırsızlık",
    "fire": "Yangın",
    "flood": "Sel ve su baskını",
    "natural_disaster": "Doğal afetler",
    "glass": "Cam kırılması",
    "mini_repair": "Mini onarım",
    "legal_protection": "Hukuksal koruma",
    # kasko options the customer chose (CONTRACTS.md, "Kasko options"), as the quote priced them
    "liability": "İhtiyari mali mesuliyet (İMM)",
    "replacement_car": "İkame araç",
    "deductible": "Muafiyet",
    # DASK
    "earthquake": "Deprem ve deprem kaynaklı yangın",
}

# Codes the four insurers use for the same covers (upper-case, as Boğaziçi and Çınar write them).
COMMON_ALIASES: dict[str, str] = {
    "CARPISMA": "collision",
    "HIRSIZLIK": "theft",
    "YANGIN": "fire",
    "SEL": "flood",
    "DOGAL_AFET": "natural_disaster",
    "CAM": "glass",
    "MINI_ONARIM": "mini_repair",
    "HUKUKSAL_KORUMA": "legal_protection",
    "SAKATLANMA_OLUM": "bodily_injury",
    "TEDAVI": "medical",
    "MADDI_HASAR": "property_damage",
    "DEPREM": "earthquake",
    "IMM": "liability",
    "IKAME_ARAC": "replacement_car",
    "MUAFIYET": "deductible",
}


def coverage_code(raw: str, aliases: Mapping[str, str] = COMMON_ALIASES) -> str:
    """The platform's code for an insurer's coverage code; the insurer's own when unmapped."""
    key = raw.strip()
    if key in COVERAGE_NAMES_TR:
        return key
    return aliases.get(key.upper(), aliases.get(key, key))


def coverage_limit(value: Any) -> str | None:
    """A limit as a TRY decimal string; None for "unlimited / not applicable" (null)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(mask_and_cut(f"coverage limit is not a decimal string: {value!r}", 200))
    amount = _decimal(value, "coverage limit")
    if not amount.is_finite() or amount < 0:
        raise ValueError(mask_and_cut(f"coverage limit out of range: {value!r}", 200))
    return str(amount.quantize(Decimal("0.01")))


def _decimal(value: Any, what: str) -> Decimal:
    """A decimal, or a ValueError (never decimal's InvalidOperation, which is not one)."""
    try:
        return Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(mask_and_cut(f"{what} is not a decimal: {value!r}", 200)) from None


def coverage_entry(
    code: Any,
    name: Any = None,
    limit: Any = None,
    *,
    aliases: Mapping[str, str] = COMMON_ALIASES,
    days: Any = None,
) -> dict[str, Any]:
    """One coverage in the stored shape; the Turkish name is ours when we know the cover. `days`
    (a replacement car's) is kept when the insurer gave it."""
    if not isinstance(code, str) or not code.strip():
        raise ValueError(mask_and_cut(f"coverage without a code: {code!r}", 200))
    platform_code = coverage_code(code, aliases)
    known_name = COVERAGE_NAMES_TR.get(platform_code)
    given_name = name.strip() if isinstance(name, str) and name.strip() else ""
    entry: dict[str, Any] = {
        "code": platform_code,
        "name": known_name or given_name or code.strip(),
        "limit": coverage_limit(limit),
    }
    if days is not None and days != "":
        entry["days"] = coverage_days(days)
    return entry


def coverage_days(value: Any) -> int:
    """A cover's days (a replacement car's): a whole number, 0 to 365."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(mask_and_cut(f"coverage days is not a number: {value!r}", 200))
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or not 0 <= int(text) <= 365:
        raise ValueError(mask_and_cut(f"coverage days out of range: {value!r}", 200))
    return int(text)


def installment_entry(count: Any, total: Any) -> dict[str, Any]:
    """One payment plan: the whole premium `total` paid in `count` parts."""
    if isinstance(count, bool):
        raise ValueError("installment count is not a number")
    parts = int(str(count).strip())
    if not 1 <= parts <= 36:
        raise ValueError(mask_and_cut(f"installment count out of range: {count!r}", 200))
    if isinstance(total, bool) or not isinstance(total, str | int):
        raise ValueError(mask_and_cut(f"installment total is not a decimal string: {total!r}", 200))
    amount = _decimal(total, "installment total")
    if not amount.is_finite() or amount < 0:
        raise ValueError(mask_and_cut(f"installment total out of range: {total!r}", 200))
    return {"count": parts, "total": str(amount.quantize(Decimal("0.01")))}


# What reading one malformed entry may raise (Decimal's errors are ArithmeticErrors).
ENTRY_ERRORS = (ValueError, TypeError, ArithmeticError)


def read_entries(
    raw: Any, read: Callable[[Any], dict[str, Any]], *, log: logging.Logger, what: str
) -> list[dict[str, Any]]:
    """Every entry `read` can make sense of, in order. Coverages and payment plans describe a
    price; one the platform cannot read is left out (logged at WARNING with its position, so it
    gets looked at), never the quote: the premium is what the agent sells. A list that is not a
    list is left out whole."""
    if raw is None:
        return []
    if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Iterable):
        log.warning("%s is a %s, not a list; ignored", what, type(raw).__name__)
        return []
    entries = []
    for position, item in enumerate(raw, start=1):
        try:
            entries.append(read(item))
        except ENTRY_ERRORS as exc:
            log.warning("%s #%d skipped, unreadable: %s", what, position, mask_and_cut(exc, 200))
    return entries


def coverage_sort_key(code: str) -> tuple[int, str]:
    """Known covers in the vocabulary's order, then the insurers' own codes alphabetically."""
    order = list(COVERAGE_NAMES_TR)
    return (order.index(code), "") if code in order else (len(order), code)
