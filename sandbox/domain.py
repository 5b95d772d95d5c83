"""Platform-level input rules, prices and the small fixed "world" every sandbox insurer shares.

A plate is a plate at every insurer, so the rules live here once, keyed by the platform's
field names. Each insurer module translates its wire names into these names, calls
:func:`validate`, and reports an :class:`InvalidField` or a :class:`Refusal` in its own words.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from zoneinfo import ZoneInfo

PLATE_RE = re.compile(r"(0[1-9]|[1-7][0-9]|8[01])[A-Z]{1,3}[0-9]{2,4}")
SERIAL_RE = re.compile(r"[A-Z]{2}[0-9]{6}")
UAVT_RE = re.compile(r"[0-9]{10}")
VEHICLE_CODE_RE = re.compile(r"[0-9]{3}")
BUILDING_ID_RE = re.compile(r"[0-9]{8}")
# Quote, policy and request numbers: letters, digits and dashes (every prefix uses them).
RECORD_NO_RE = re.compile(r"[A-Za-z0-9-]{1,64}")

USAGES = ("private", "commercial", "taxi")
CONSTRUCTION_TYPES = ("reinforced_concrete", "masonry", "other")
DAMAGE_STATUSES = ("none", "minor", "heavy")
POLICY_STATUSES = ("ACTIVE", "CANCELLED", "EXPIRED")

# Kasko cover ends here: a vehicle older than this many model years is "not eligible".
KASKO_MAX_AGE_YEARS = 20
DECLINED_PAYMENT_TOKEN = "tok_declined"

MOTOR_FIELDS = ("plate", "owner_id", "registration_serial", "usage")
KASKO_FIELDS = (*MOTOR_FIELDS, "model_year", "brand_code", "model_code")
DASK_QUOTE_FIELDS = (
    "uavt_code",
    "building_id",
    "construction_type",
    "construction_year",
    "floor_count",
    "gross_m2",
    "damage_status",
    "owner_id",
)
OPERATION_FIELDS: dict[str, tuple[str, ...]] = {
    "trafik_quote": MOTOR_FIELDS,
    "kasko_quote": KASKO_FIELDS,
    "dask_address": ("uavt_code",),
    "dask_quote": DASK_QUOTE_FIELDS,
    "issue_policy": ("quote_no", "payment_token"),
    "policy_status": ("policy_no",),
    "policy_document": ("policy_no",),
    "cancel_policy": ("policy_no", "reason", "effective_on"),
    "policy_list": ("issued_from", "issued_to"),
}
QUOTE_OPERATIONS = ("trafik_quote", "kasko_quote", "dask_quote")
PRODUCT_OF = {"trafik_quote": "trafik", "kasko_quote": "kasko", "dask_quote": "dask"}


class InvalidField(Exception):
    """An input field is missing or malformed.

    ``reason`` is ``"missing"``, ``"invalid"`` or ``"identity"`` (a TCKN/VKN that fails its
    format or checksum): Boğaziçi and Çınar report identity numbers with their own codes.
    """

    def __init__(self, field: str, reason: str, detail: str = "") -> None:
        super().__init__(f"{field}: {reason}{' (' + detail + ')' if detail else ''}")
        self.field = field
        self.reason = reason
        self.detail = detail


class DocumentNotReady(Exception):
    """The policy exists but its PDF is still being produced; ``seconds`` until it should be."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"document not ready for {seconds:.1f} s")
        self.seconds = seconds


class Refusal(Exception):
    """A well-formed request the insurer refuses for a business reason (see ``KINDS``)."""

    NOT_FOUND = "NOT_FOUND"
    ADDRESS_NOT_FOUND = "ADDRESS_NOT_FOUND"
    QUOTE_EXPIRED = "QUOTE_EXPIRED"
    NOT_ELIGIBLE = "NOT_ELIGIBLE"
    RISK_DECLINED = "RISK_DECLINED"
    PAYMENT_DECLINED = "PAYMENT_DECLINED"
    KINDS = (NOT_FOUND, ADDRESS_NOT_FOUND, QUOTE_EXPIRED, NOT_ELIGIBLE, RISK_DECLINED, PAYMENT_DECLINED)

    def __init__(self, kind: str, detail: str = "", field: str | None = None) -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail
        self.field = field  # the platform field that pointed at the missing record


def tckn_is_valid(number: str) -> bool:
    """TCKN: 11 digits, first non-zero, two check digits (d10, d11)."""
    if len(number) != 11 or not number.isascii() or not number.isdigit() or number[0] == "0":
        return False
    d = [int(c) for c in number]
    d10 = ((d[0] + d[2] + d[4] + d[6] + d[8]) * 7 - (d[1] + d[3] + d[5] + d[7])) % 10
    d11 = sum(d[:10]) % 10
    return d[9] == d10 and d[10] == d11


def vkn_is_valid(number: str) -> bool:
    """VKN: 10 digits, the last a check digit (same algorithm as ``stdnum.tr.vkn``)."""
    if len(number) != 10 or not number.isascii() or not number.isdigit():
        return False
    total = 0
    for position, char in enumerate(reversed(number[:9]), start=1):
        c1 = (int(char) + position) % 10
        if c1:
            total += (c1 * 2**position) % 9 or 9
    return int(number[9]) == (10 - total) % 10


def identity_is_valid(owner_id: Any) -> bool:
    """A person's TCKN (11 digits) or a company's VKN (10 digits)."""
    if not isinstance(owner_id, str):
        return False
    return tckn_is_valid(owner_id) if len(owner_id) == 11 else vkn_is_valid(owner_id)


def current_year() -> int:
    return datetime.now(UTC).year


def _matches(pattern: re.Pattern[str]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and pattern.fullmatch(value) is not None


def _one_of(choices: Iterable[str]) -> Callable[[Any], bool]:
    allowed = frozenset(choices)
    return lambda value: isinstance(value, str) and value in allowed


def _int_between(low: int | Callable[[], int], high: int | Callable[[], int]) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        lo = low() if callable(low) else low
        hi = high() if callable(high) else high
        return lo <= value <= hi

    return check


def _non_empty_string(max_length: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and 0 < len(value) <= max_length


FIELD_RULES: dict[str, Callable[[Any], bool]] = {
    "plate": _matches(PLATE_RE),
    "owner_id": identity_is_valid,
    "registration_serial": _matches(SERIAL_RE),
    "usage": _one_of(USAGES),
    "model_year": _int_between(1950, lambda: current_year() + 1),
    "brand_code": _matches(VEHICLE_CODE_RE),
    "model_code": _matches(VEHICLE_CODE_RE),
    "uavt_code": _matches(UAVT_RE),
    "building_id": _matches(BUILDING_ID_RE),
    "construction_type": _one_of(CONSTRUCTION_TYPES),
    "construction_year": _int_between(1900, current_year),
    "floor_count": _int_between(1, 99),
    "gross_m2": _int_between(40, 1000),
    "damage_status": _one_of(DAMAGE_STATUSES),
    "quote_no": _matches(RECORD_NO_RE),
    "policy_no": _matches(RECORD_NO_RE),
    "payment_token": _non_empty_string(128),
    # Issuance dedup keys and helper identifiers of individual insurers.
    "request_ref": _non_empty_string(64),
    "client_reference": _non_empty_string(64),
    "request_id": _matches(RECORD_NO_RE),
}


def validate(fields: Mapping[str, Any], names: Iterable[str]) -> None:
    """Raise :class:`InvalidField` for the first of ``names`` that is missing or malformed."""
    for name in names:
        value = fields.get(name)
        if value is None or value == "":
            raise InvalidField(name, "missing")
        if not FIELD_RULES[name](value):
            raise InvalidField(name, "identity" if name == "owner_id" else "invalid")


def address_exists(uavt_code: str) -> bool:
    """The sandbox's address register: every UAVT code exists except those starting with 9."""
    return not uavt_code.startswith("9")


def _digest(*parts: Any) -> int:
    text = json.dumps(parts, sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def building_id_for(insurer_code: str, uavt_code: str) -> str:
    """The building id an insurer's address call returns for a UAVT code (8 digits).

    Each insurer keeps its own building register, so the id differs per insurer but is
    stable, and a test can recompute it without calling the address service.
    """
    return f"{_digest('building', insurer_code, uavt_code) % 10**8:08d}"


_STREETS = ("Atatürk Cad.", "Cumhuriyet Cad.", "Gazi Sok.", "Lale Sok.", "Deniz Sok.", "Çınar Sok.")
_PLACES = ("Kadıköy/İstanbul", "Çankaya/Ankara", "Karşıyaka/İzmir", "Nilüfer/Bursa", "Muratpaşa/Antalya")


def address_for(uavt_code: str) -> str:
    """A deterministic, plausible address line for a UAVT code."""
    h = _digest("address", uavt_code)
    street = _STREETS[h % len(_STREETS)]
    place = _PLACES[(h // 7) % len(_PLACES)]
    return f"{street} No:{h % 120 + 1} D:{(h // 11) % 20 + 1}, {place}"


def vehicle_is_eligible_for_kasko(model_year: int) -> bool:
    return current_year() - model_year <= KASKO_MAX_AGE_YEARS


_CENTS = Decimal("0.01")
_TRAFIK_BASE = {"private": Decimal("3800"), "commercial": Decimal("6200"), "taxi": Decimal("11500")}
_KASKO_USAGE = {"private": Decimal("1.00"), "commercial": Decimal("1.30"), "taxi": Decimal("1.80")}
_DASK_UNIT_COST = {"reinforced_concrete": Decimal("13500"), "masonry": Decimal("9500"), "other": Decimal("6000")}
_DASK_RATE_PER_MILLE = {"reinforced_concrete": Decimal("1.05"), "masonry": Decimal("1.90"), "other": Decimal("2.60")}


def _spread(insurer_code: str, product: str, fields: Mapping[str, Any], names: Iterable[str]) -> Decimal:
    """A per-insurer price factor in [0.85, 1.25): why the four insurers quote different prices."""
    inputs = {name: fields.get(name) for name in names}
    return Decimal("0.85") + Decimal(_digest("price", insurer_code, product, inputs) % 4000) / Decimal(10000)


def price(insurer_code: str, operation: str, fields: Mapping[str, Any]) -> tuple[Decimal, Decimal | None]:
    """Premium (and DASK sum insured) for validated inputs; deterministic per insurer and inputs."""
    names = OPERATION_FIELDS[operation]
    spread = _spread(insurer_code, operation, fields, names)
    if operation == "trafik_quote":
        return (_TRAFIK_BASE[fields["usage"]] * spread).quantize(_CENTS, ROUND_HALF_UP), None
    if operation == "kasko_quote":
        age = max(0, current_year() - fields["model_year"])
        brand_factor = Decimal("0.8") + Decimal(int(fields["brand_code"]) % 10) / Decimal(20)
        vehicle_value = Decimal(900000) * Decimal("0.93") ** age * brand_factor
        premium = vehicle_value * Decimal("0.028") * _KASKO_USAGE[fields["usage"]] * spread
        return premium.quantize(_CENTS, ROUND_HALF_UP), None
    construction = fields["construction_type"]
    sum_insured = (_DASK_UNIT_COST[construction] * fields["gross_m2"]).quantize(_CENTS)
    rate = _DASK_RATE_PER_MILLE[construction] / 1000
    if fields["damage_status"] == "minor":
        rate *= Decimal("1.15")
    if fields["construction_year"] < 2000:
        rate *= Decimal("1.10")
    return (sum_insured * rate * spread).quantize(_CENTS, ROUND_HALF_UP), sum_insured


def money(amount: Decimal) -> str:
    """Money on the wire: a decimal string with two places, never a float."""
    return str(amount.quantize(_CENTS, ROUND_HALF_UP))


def iso_utc(epoch_seconds: float) -> str:
    return datetime.fromtimestamp(epoch_seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- cancellation and the production list (CONTRACTS.md, the last two sections) -----------------

# Operations that move money: a dedup key of the insurer's, faults that commit before answering.
MONEY_OPERATIONS = ("issue_policy", "cancel_policy")
CANCEL_REASONS = ("vehicle_sold", "customer_request", "duplicate", "other")
DUPLICATE_REASON = "duplicate"
# The production list: a range of at most this many days after its first, pages of up to 100.
LIST_MAX_DAYS = 31
LIST_PAGE_SIZE = 100
PRODUCTS = ("trafik", "kasko", "dask")
# Deniz's cancellations are polled like its policy requests: fault rules may aim at one.
FIELD_RULES["cancellation_id"] = _matches(RECORD_NO_RE)
ISO_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
DOTTED_DATE_RE = re.compile(r"[0-9]{2}\.[0-9]{2}\.[0-9]{4}")


class CancelNotAllowed(Exception):
    """The insurer will not cancel this policy (an expired one, a DASK policy with an open claim).

    ``code`` is the sandbox's own word for why (``POLICY_EXPIRED``, ``OPEN_CLAIM``): Deniz puts it
    in a REJECTED cancellation's ``reason``; the others answer their "not allowed" code.
    """

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


class AlreadyCancelled(Exception):
    """The policy is cancelled already; ``cancellation`` is the first cancellation's record, whose
    result every insurer repeats in its "already cancelled" answer."""

    def __init__(self, cancellation: Any) -> None:
        super().__init__(f"policy {cancellation.policy_no} already cancelled")
        self.cancellation = cancellation


def read_date(value: Any, field: str, *, dotted: bool = False) -> date:
    """A calendar date as the insurer writes it (ISO ``2026-12-01``; Çınar ``01.12.2026``), or the
    :class:`InvalidField` naming the platform ``field``."""
    if value is None or value == "":
        raise InvalidField(field, "missing")
    pattern = DOTTED_DATE_RE if dotted else ISO_DATE_RE
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise InvalidField(field, "invalid", "01.12.2026 expected" if dotted else "YYYY-MM-DD expected")
    try:
        return datetime.strptime(value, "%d.%m.%Y").date() if dotted else date.fromisoformat(value)
    except ValueError:
        raise InvalidField(field, "invalid", "no such day") from None


def read_choice(value: Any, field: str, words: Mapping[str, str]) -> str:
    """The platform's word for an insurer's word (a cancellation reason), or the :class:`InvalidField`."""
    if value is None or value == "":
        raise InvalidField(field, "missing")
    if not isinstance(value, str) or value not in words:
        raise InvalidField(field, "invalid", f"one of {sorted(words)} expected")
    return words[value]


def read_page(value: Any, field: str = "page") -> int:
    """A 1-based page number (an integer, or its digits as text); absent means the first page."""
    if value is None or value == "":
        return 1
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidField(field, "invalid", "a page number from 1 expected")
    return value


def check_list_range(issued_from: date, issued_to: date, *, field: str = "issued_to") -> None:
    """Both ends inclusive, ``issued_to`` never before ``issued_from`` and at most 31 days after it
    (a refusal names ``field``, the insurer's name for the range's end)."""
    if issued_to < issued_from:
        raise InvalidField(field, "invalid", "before the range's start")
    if (issued_to - issued_from).days > LIST_MAX_DAYS:
        raise InvalidField(field, "invalid", f"more than {LIST_MAX_DAYS} days after the range's start")


def refund(premium: Decimal, starts_on: date, ends_on: date, effective_on: date, reason: str) -> tuple[Decimal, date]:
    """The refund and the day the cancellation takes effect.

    A duplicate takes effect on the start date and refunds the whole premium, whatever
    ``effective_on`` says; otherwise premium × (ends_on − effective_on) ÷ (ends_on − starts_on)
    in days, rounded half-up to kuruş.
    """
    if reason == DUPLICATE_REASON:
        return premium.quantize(_CENTS, ROUND_HALF_UP), starts_on
    total_days = (ends_on - starts_on).days
    if total_days <= 0:
        return Decimal("0.00"), effective_on
    left = Decimal((ends_on - effective_on).days)
    return (premium * left / Decimal(total_days)).quantize(_CENTS, ROUND_HALF_UP), effective_on


def page_of(items: list[Any], page: int) -> tuple[list[Any], int]:
    """Page ``page`` (1-based) of ``items`` and how many pages there are (0 for no items)."""
    pages = -(-len(items) // LIST_PAGE_SIZE)
    start = (page - 1) * LIST_PAGE_SIZE
    return items[start : start + LIST_PAGE_SIZE], pages


def seeded_issue_time(issued_on: date | None, starts_on: date | None) -> float | None:
    """When a seeded policy was issued (epoch seconds): noon in Türkiye on ``issued_on``, by
    default the day before it starts (as a policy issued here starts the next day)."""
    if issued_on is None:
        if starts_on is None:
            return None
        issued_on = starts_on - timedelta(days=1)
    return datetime(issued_on.year, issued_on.month, issued_on.day, 12, tzinfo=TURKIYE).timestamp()


def seeded_premium(policy_no: str) -> Decimal:
    """A seeded policy's gross premium when the seed names none: deterministic per number."""
    return Decimal(2500 + _digest("premium", policy_no) % 750000) / Decimal(100)


# --- policy periods, coverages, installments, documents (CONTRACTS.md, last section) -------------

TURKIYE = ZoneInfo("Europe/Istanbul")


def today_in_turkiye(epoch_seconds: float) -> date:
    return datetime.fromtimestamp(epoch_seconds, TURKIYE).date()


def one_year_after(start: date) -> date:
    try:
        return start.replace(year=start.year + 1)
    except ValueError:  # 29 February
        return start.replace(year=start.year + 1, day=28)


def policy_period(issued_epoch: float, starts_on: date | None = None) -> tuple[date, date]:
    """A new policy runs for a year from the start it was asked for, else from the next day in
    Türkiye's calendar."""
    if starts_on is None:
        starts_on = today_in_turkiye(issued_epoch) + timedelta(days=1)
    return starts_on, one_year_after(starts_on)


def seeded_period(policy_no: str, now_epoch: float) -> tuple[date, date]:
    """A seeded (pre-existing) policy's period: deterministic per number, started within the last
    year, so some are near their end (what the renewal list is for)."""
    starts_on = today_in_turkiye(now_epoch) - timedelta(days=_digest("period", policy_no) % 360)
    return starts_on, one_year_after(starts_on)


# Legal trafik limits (TRY, 2026 schedule in the sandbox's world) and the kasko covers offered.
TRAFIK_LIMITS = {
    "bodily_injury": Decimal("2700000"),
    "medical": Decimal("2700000"),
    "property_damage": Decimal("300000"),
}
KASKO_COVERS = ("collision", "theft", "fire", "flood", "glass")


def coverages(operation: str, premium: Decimal, sum_insured: Decimal | None) -> list[tuple[str, Decimal | None]]:
    """The covers a quote lists, as (platform code, limit or None for unlimited) pairs; each
    insurer module writes them with its own codes and names."""
    if operation == "trafik_quote":
        return list(TRAFIK_LIMITS.items())
    if operation == "kasko_quote":
        vehicle_value = (premium / Decimal("0.028")).quantize(_CENTS, ROUND_HALF_UP)
        return [(code, None if code == "glass" else vehicle_value) for code in KASKO_COVERS]
    return [("earthquake", sum_insured)]


INSTALLMENT_LOADINGS = ((1, Decimal("1.00")), (3, Decimal("1.03")), (6, Decimal("1.06")), (9, Decimal("1.09")))


def installments(premium: Decimal) -> list[tuple[int, Decimal]]:
    """Payment plans: how many parts, and the whole premium paid that way (parts cost more)."""
    return [(count, (premium * loading).quantize(_CENTS, ROUND_HALF_UP)) for count, loading in INSTALLMENT_LOADINGS]


# --- quote terms: policy start, kasko options, installments chosen at issuance -------------------
# (CONTRACTS.md, "Policy start", "Kasko options", "Installments"). Insurer modules translate their
# wire into these platform names and values; the ledger checks them here, in one place.

STARTS_ON_MAX_DAYS_AHEAD = 30
KASKO_OPTION_FIELDS = ("deductible", "replacement_car_days", "liability_limit", "repair_shop")
KASKO_DEDUCTIBLES = (0, 2500, 5000, 10000)
KASKO_REPLACEMENT_CAR_DAYS = (0, 7, 15)
KASKO_REPAIR_SHOPS = ("authorized", "contracted")
# A null here is a choice (unlimited İMM), not an absence; for every other term null means "not given".
NULL_IS_A_CHOICE = frozenset({"liability_limit"})


@dataclass(frozen=True)
class KaskoMenu:
    """The kasko options one insurer sells: a subset of the contract's values. The contract names
    no İMM limits, so each insurer lists its own; ``None`` among them is "unlimited"."""

    deductibles: tuple[int, ...] = KASKO_DEDUCTIBLES
    replacement_car_days: tuple[int, ...] = KASKO_REPLACEMENT_CAR_DAYS
    liability_limits: tuple[int | None, ...] = (1_000_000, 2_500_000, 5_000_000, None)
    repair_shops: tuple[str, ...] = KASKO_REPAIR_SHOPS


FULL_MENU = KaskoMenu()


@dataclass(frozen=True)
class QuoteTerms:
    """What a quote remembers besides its price: the start it was asked for (None: tomorrow, at
    issuance), the kasko options it priced (platform names; ``liability_limit`` None = unlimited)
    and the tariff before those options (the covers' vehicle value is the tariff's)."""

    starts_on: date | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    tariff: Decimal | None = None


@dataclass(frozen=True)
class Unreadable:
    """A wire value an insurer module could not read as its kind (a date in another format):
    every rule refuses it as invalid."""

    raw: Any


_AMOUNT_RE = re.compile(r"[0-9]{1,12}(\.[0-9]{1,2})?")
_ISO_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def read_amount(value: Any) -> Decimal | None:
    """A TRY amount as sent: a JSON integer or a decimal string ("5000", "5000.00"); never a float."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value) if value >= 0 else None
    if isinstance(value, str) and _AMOUNT_RE.fullmatch(value.strip()):
        return Decimal(value.strip())
    return None


def read_iso_date(value: Any) -> date | None:
    """``2026-12-01`` (or a ``date`` already), else None."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str) and _ISO_DATE_RE.fullmatch(value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def is_given(fields: Mapping[str, Any], name: str) -> bool:
    """Did the call carry this optional term? An empty value is "not given"; so is null, except
    where null is itself a choice (``NULL_IS_A_CHOICE``)."""
    if name not in fields or fields[name] == "":
        return False
    return fields[name] is not None or name in NULL_IS_A_CHOICE


def _int_value(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _listing(values: Iterable[Any]) -> str:
    return ", ".join("unlimited" if value is None else str(value) for value in values)


def read_starts_on(value: Any, *, today: date) -> date:
    """A policy start: a date from today up to ``STARTS_ON_MAX_DAYS_AHEAD`` days ahead."""
    starts_on = read_iso_date(value)
    if starts_on is None:
        raise InvalidField("starts_on", "invalid", "not a calendar date")
    last = today + timedelta(days=STARTS_ON_MAX_DAYS_AHEAD)
    if not today <= starts_on <= last:
        raise InvalidField("starts_on", "invalid", f"from {today.isoformat()} to {last.isoformat()}")
    return starts_on


def read_kasko_options(fields: Mapping[str, Any], menu: KaskoMenu) -> dict[str, Any]:
    """The kasko options a quote carries, checked against what the insurer sells."""
    options: dict[str, Any] = {}
    if is_given(fields, "deductible"):
        amount = read_amount(fields["deductible"])
        if amount is None:
            raise InvalidField("deductible", "invalid", "a TRY amount")
        if amount not in menu.deductibles:
            raise InvalidField("deductible", "invalid", f"not sold; sold: {_listing(menu.deductibles)}")
        options["deductible"] = amount
    if is_given(fields, "replacement_car_days"):
        days = _int_value(fields["replacement_car_days"])
        if days is None or days not in menu.replacement_car_days:
            raise InvalidField(
                "replacement_car_days", "invalid", f"not sold; sold: {_listing(menu.replacement_car_days)}"
            )
        options["replacement_car_days"] = days
    if is_given(fields, "liability_limit"):
        raw = fields["liability_limit"]
        limit = None if raw is None else read_amount(raw)
        if raw is not None and limit is None:
            raise InvalidField("liability_limit", "invalid", "a TRY amount, or null for unlimited")
        if limit not in menu.liability_limits:
            raise InvalidField("liability_limit", "invalid", f"not sold; sold: {_listing(menu.liability_limits)}")
        options["liability_limit"] = limit
    if is_given(fields, "repair_shop"):
        shop = fields["repair_shop"]
        if not isinstance(shop, str) or shop not in menu.repair_shops:
            raise InvalidField("repair_shop", "invalid", f"not sold; sold: {_listing(menu.repair_shops)}")
        options["repair_shop"] = shop
    return options


def quote_terms(
    operation: str, fields: Mapping[str, Any], *, menu: KaskoMenu, now_epoch: float
) -> tuple[date | None, dict[str, Any]]:
    """A quote's start (None when not given) and, for kasko, its options. Kasko options sent with
    another product are ignored, as an insurer ignores fields it does not know."""
    starts_on = None
    if is_given(fields, "starts_on"):
        starts_on = read_starts_on(fields["starts_on"], today=today_in_turkiye(now_epoch))
    options = read_kasko_options(fields, menu) if operation == "kasko_quote" else {}
    return starts_on, options


def read_installments(fields: Mapping[str, Any], offered: Iterable[int]) -> int:
    """The count an issuance chose among the quote's offered plans; not given: 1 (peşin)."""
    if not is_given(fields, "installments"):
        return 1
    counts = tuple(offered)
    count = _int_value(fields["installments"])
    if count is None or count not in counts:
        raise InvalidField("installments", "invalid", f"not offered; offered: {_listing(counts)}")
    return count


# What the options cost: a higher deductible is cheaper, an authorized shop dearer, a replacement
# car a fee per day, İMM a rate on its limit (unlimited a fixed fee). Deterministic, like the tariff.
DEDUCTIBLE_FACTORS = {0: Decimal("1.12"), 2500: Decimal("1.00"), 5000: Decimal("0.93"), 10000: Decimal("0.86")}
REPAIR_SHOP_FACTORS = {"authorized": Decimal("1.15"), "contracted": Decimal("1.00")}
REPLACEMENT_CAR_FEE_PER_DAY = Decimal("55")
LIABILITY_RATE = Decimal("0.0005")
UNLIMITED_LIABILITY_FEE = Decimal("4000")


def price_with_options(tariff: Decimal, options: Mapping[str, Any]) -> Decimal:
    """The kasko premium for the chosen options; no options: the tariff itself."""
    premium = tariff
    if "deductible" in options:
        premium *= DEDUCTIBLE_FACTORS[int(options["deductible"])]
    if "repair_shop" in options:
        premium *= REPAIR_SHOP_FACTORS[options["repair_shop"]]
    if "replacement_car_days" in options:
        premium += REPLACEMENT_CAR_FEE_PER_DAY * options["replacement_car_days"]
    if "liability_limit" in options:
        limit = options["liability_limit"]
        premium += UNLIMITED_LIABILITY_FEE if limit is None else limit * LIABILITY_RATE
    return premium.quantize(_CENTS, ROUND_HALF_UP)


def option_covers(options: Mapping[str, Any]) -> list[tuple[str, Decimal | None, int | None]]:
    """The priced options as covers, (platform code, TRY amount, days): İMM with its limit (None:
    unlimited), the replacement car with its days, the deductible with its amount (what the
    insured bears per claim). The repair shop is no cover: it only moves the price."""
    covers: list[tuple[str, Decimal | None, int | None]] = []
    if "liability_limit" in options:
        covers.append(("liability", options["liability_limit"], None))
    if "replacement_car_days" in options:
        covers.append(("replacement_car", None, options["replacement_car_days"]))
    if "deductible" in options:
        covers.append(("deductible", options["deductible"], None))
    return covers


def _pdf_text(value: str) -> str:
    """PDF literal string: ASCII only (the sandbox's document is a stand-in), parentheses escaped."""
    ascii_text = value.encode("ascii", "replace").decode()
    return ascii_text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def policy_pdf(insurer_name: str, policy_no: str, starts_on: date | None, ends_on: date | None) -> bytes:
    """A small, valid one-page PDF naming the policy: what the agency hands the customer.

    Deterministic per policy (no creation date), so a re-fetch returns the same bytes and the
    same SHA-256.
    """
    lines = [insurer_name, f"Police no: {policy_no}"]
    if starts_on and ends_on:
        lines.append(f"Sure: {starts_on:%d.%m.%Y} - {ends_on:%d.%m.%Y}")
    text_ops = "".join(f"BT /F1 14 Tf 72 {760 - 24 * i} Td ({_pdf_text(line)}) Tj ET\n" for i, line in enumerate(lines))
    stream = text_ops.encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842]"
        b" /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"endstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref_at = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref_at}\n%%EOF\n".encode()
    return bytes(out)
