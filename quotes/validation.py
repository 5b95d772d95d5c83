"""Validation of the common quote input fields, before anything is sent to an insurer.

Every insurer refuses malformed input in its own words (an HTTP 400, a SOAP fault code, an
application error inside a 200), and some only after a slow round trip. Checking the fields here
lets the agent fix a typo while the customer is still at the desk, with one Turkish message per
field, and keeps insurer calls for questions only an insurer can answer.

The functions are plain Python and know nothing about Django: the desk's forms, the API's
serializers, the customer checks and the portfolio import wrap them and turn :class:`FieldError`
into their own error types; they live beside the forms that use them, above the insurer layer,
which never validates an agent's input. Field names and rules follow the
"Common input fields" table in ``CONTRACTS.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import date, datetime, timedelta, timezone

from insurehub.identity_numbers import (
    DIGITS_RE,
    REQUIRED_MESSAGE,
    FieldError,
    is_blank,
    owner_id_kind,
    require_text,
    validate_owner_id,
    without_whitespace,
)
from integrations.operations import (
    KASKO_DEDUCTIBLES,
    KASKO_OPTION_FIELDS,
    KASKO_REPAIR_SHOPS,
    KASKO_REPLACEMENT_CAR_DAYS,
    PRODUCT_INPUT_FIELDS,
    STARTS_ON_MAX_DAYS_AHEAD,
    Product,
)
from vehicles.plates import ascii_upper, normalize_plate

__all__ = [
    "PRODUCT_FIELDS",
    "REQUIRED_MESSAGE",
    "FieldError",
    "normalize_plate",
    "normalize_registration_serial",
    "owner_id_kind",
    "product_input_fields",
    "validate_construction_type",
    "validate_construction_year",
    "validate_damage_status",
    "validate_fields",
    "validate_floor_count",
    "validate_gross_m2",
    "validate_kasko_option",
    "validate_model_year",
    "validate_owner_id",
    "validate_uavt_code",
    "validate_usage",
    "validate_vehicle_code",
]

# Turkey has stayed on UTC+3 all year since 2016; a fixed offset keeps the "current year" right
# around New Year without depending on the host's time zone or on tz data being installed.
_TURKEY_TZ = timezone(timedelta(hours=3), "TRT")

_SERIAL_RE = re.compile(r"[A-Z]{2}[0-9]{6}")
_INT_RE = re.compile(r"[+-]?[0-9]+")

_SERIAL_MESSAGE = "Ruhsat seri numarası 2 harf ve 6 rakam olmalıdır (ör. AB123456)."
_UAVT_MESSAGE = "UAVT kodu 10 haneli olmalıdır."
_USAGE_MESSAGE = "Geçersiz kullanım tarzı; hususi (private), ticari (commercial) veya taksi (taxi) olmalıdır."
_CONSTRUCTION_TYPE_MESSAGE = (
    "Geçersiz yapı tarzı; betonarme/çelik (reinforced_concrete), yığma (masonry) veya diğer (other) olmalıdır."
)
_DAMAGE_STATUS_MESSAGE = (
    "Geçersiz hasar durumu; hasarsız (none), az hasarlı (minor) veya ağır hasarlı (heavy) olmalıdır."
)
_VEHICLE_CODE_LABELS = {"brand_code": "Marka kodu", "model_code": "Tip kodu"}

USAGES = ("private", "commercial", "taxi")
CONSTRUCTION_TYPES = ("reinforced_concrete", "masonry", "other")
DAMAGE_STATUSES = ("none", "minor", "heavy")

MODEL_YEAR_MIN = 1950
CONSTRUCTION_YEAR_MIN = 1900
FLOOR_COUNT_RANGE = (1, 99)
GROSS_M2_RANGE = (40, 1000)


# --- helpers -----------------------------------------------------------------------------------


def _today_in_turkey() -> date:
    return datetime.now(_TURKEY_TZ).date()


def _choice(field: str, value: object, choices: tuple[str, ...], message: str) -> str:
    text = require_text(field, value, message).strip().lower()
    if text not in choices:
        raise FieldError(field, message)
    return text


def _digit_code(field: str, value: object, length: int, message: str) -> str:
    """Codes are identifiers, not numbers: leading zeros matter, so an int is refused outright
    rather than guessed back into shape."""
    text = without_whitespace(require_text(field, value, message))
    if len(text) != length or not DIGITS_RE.fullmatch(text):
        raise FieldError(field, message)
    return text


def _int_in_range(
    field: str,
    value: object,
    label: str,
    low: int,
    high: int,
    *,
    example: int,
    unit: str = "",
) -> int:
    """Forms hand integers over as strings and JSON as ints; both are fine. Anything with a
    fraction or separator is refused rather than rounded: "1.000" means a thousand to a Turkish
    agent and one to Python."""
    range_message = f"{label} {low} ile {high}{unit} arasında olmalıdır."
    not_int_message = f"{label} tam sayı olmalıdır (ör. {example})."
    if is_blank(value):
        raise FieldError(field, REQUIRED_MESSAGE)
    if isinstance(value, bool):
        raise FieldError(field, not_int_message)
    if isinstance(value, int):
        number = int(value)
    elif isinstance(value, str):
        text = value.strip()
        if not _INT_RE.fullmatch(text):
            raise FieldError(field, not_int_message)
        # Python refuses to parse very long digit strings (int_max_str_digits); anything that
        # long is out of range anyway.
        if len(text.lstrip("+-").lstrip("0")) > 9:
            raise FieldError(field, range_message)
        number = int(text)
    else:
        raise FieldError(field, not_int_message)
    if not low <= number <= high:
        raise FieldError(field, range_message)
    return number


# --- motor fields ------------------------------------------------------------------------------


def normalize_registration_serial(value: object) -> str:
    """Agents copy the serial off the paper ruhsat with spaces and in any case; insurers want
    the compact upper-case form."""
    text = require_text("registration_serial", value, _SERIAL_MESSAGE)
    serial = ascii_upper(without_whitespace(text).replace("-", ""))
    if not _SERIAL_RE.fullmatch(serial):
        raise FieldError("registration_serial", _SERIAL_MESSAGE)
    return serial


def validate_usage(value: object) -> str:
    return _choice("usage", value, USAGES, _USAGE_MESSAGE)


def validate_vehicle_code(field: str, value: object) -> str:
    """Brand and model codes come from the insurers' shared TSB list as 3-digit strings;
    "012" and 12 are different things to an insurer, so only text is accepted."""
    try:
        label = _VEHICLE_CODE_LABELS[field]
    except KeyError:
        raise ValueError(f"not a vehicle code field: {field!r}") from None
    return _digit_code(field, value, 3, f"{label} 3 haneli olmalıdır (ör. 012).")


def validate_model_year(value: object, *, today: date | None = None) -> int:
    """Next year's models are sold from the autumn before, hence the one-year allowance."""
    year = (today or _today_in_turkey()).year
    return _int_in_range("model_year", value, "Model yılı", MODEL_YEAR_MIN, year + 1, example=2015)


# --- DASK fields -------------------------------------------------------------------------------


def validate_uavt_code(value: object) -> str:
    return _digit_code("uavt_code", value, 10, _UAVT_MESSAGE)


def validate_construction_type(value: object) -> str:
    return _choice("construction_type", value, CONSTRUCTION_TYPES, _CONSTRUCTION_TYPE_MESSAGE)


def validate_construction_year(value: object, *, today: date | None = None) -> int:
    year = (today or _today_in_turkey()).year
    return _int_in_range(
        "construction_year",
        value,
        "Yapım yılı",
        CONSTRUCTION_YEAR_MIN,
        year,
        example=1998,
    )


def validate_floor_count(value: object) -> int:
    return _int_in_range("floor_count", value, "Kat sayısı", *FLOOR_COUNT_RANGE, example=5)


def validate_gross_m2(value: object) -> int:
    return _int_in_range("gross_m2", value, "Brüt alan", *GROSS_M2_RANGE, example=120, unit=" m²")


def validate_damage_status(value: object) -> str:
    """ "heavy" is accepted on purpose: refusing a heavily damaged building is the insurers'
    business answer, and the agent should see it as that, not as a typing mistake."""
    return _choice("damage_status", value, DAMAGE_STATUSES, _DAMAGE_STATUS_MESSAGE)


STARTS_ON_MESSAGE = (
    f"Poliçe başlangıç tarihi bugünden en çok {STARTS_ON_MAX_DAYS_AHEAD} gün sonrası olabilir (GG.AA.YYYY)."
)


def parse_day(value: object) -> date | None:
    """A calendar day as agents and the API write it: a date, `YYYY-MM-DD` or `GG.AA.YYYY`."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    text = str(value or "").strip()
    for fmt in ("%Y-%m-%d", "%d.%m.%Y"):
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None


def validate_starts_on(value: object, *, today: date | None = None) -> str:
    """When cover starts (CONTRACTS.md, "Policy start"): today up to 30 days ahead in Türkiye's
    calendar; kept as an ISO date in the request's input, which the adapters send as it is."""
    today = today or _today_in_turkey()
    day = parse_day(value)
    if day is None or not today <= day <= today + timedelta(days=STARTS_ON_MAX_DAYS_AHEAD):
        raise FieldError("starts_on", STARTS_ON_MESSAGE)
    return day.isoformat()


def default_starts_on(*, today: date | None = None) -> str:
    """Absent means tomorrow, as every insurer reads it."""
    return ((today or _today_in_turkey()) + timedelta(days=1)).isoformat()


# --- kasko options (CONTRACTS.md, "Kasko options") ----------------------------------------------

# The contract names no İMM limits: each insurer sells its own. These are the limits the desk
# offers (every one some insurer we work with sells); `None` is unlimited. A limit an insurer does
# not sell is its refusal on that field, shown on its row.
KASKO_LIABILITY_LIMITS: tuple[int | None, ...] = (
    500_000,
    1_000_000,
    2_000_000,
    2_500_000,
    3_000_000,
    5_000_000,
    10_000_000,
    None,
)
REPAIR_SHOP_LABELS_TR = {"authorized": "Yetkili servis", "contracted": "Anlaşmalı servis"}
# Options each product may carry; each optional (absent: the insurer's own default).
PRODUCT_OPTION_FIELDS: dict[str, tuple[str, ...]] = {Product.KASKO.value: KASKO_OPTION_FIELDS}


def _thousands(amount: int) -> str:
    return f"{amount:,}".replace(",", ".")


def _listed(values: tuple[int | None, ...], unit: str) -> str:
    shown = [_thousands(value) for value in values if value is not None]
    return ", ".join(shown[:-1]) + f" veya {shown[-1]}{unit}"


_DEDUCTIBLE_MESSAGE = f"Muafiyet {_listed(KASKO_DEDUCTIBLES, ' TL')} olmalıdır."
_REPLACEMENT_CAR_MESSAGE = f"İkame araç gün sayısı {_listed(KASKO_REPLACEMENT_CAR_DAYS, ' gün')} olmalıdır."
_LIABILITY_MESSAGE = f"İMM limiti {_listed(KASKO_LIABILITY_LIMITS, ' TL')} ya da sınırsız (null) olmalıdır."
_REPAIR_SHOP_MESSAGE = "Servis türü yetkili servis (authorized) veya anlaşmalı servis (contracted) olmalıdır."


def _whole_amount(value: object) -> int | None:
    """A whole TRY amount as forms (`"5000"`), JSON (`5000`) or the contract (`"5000.00"`) write it;
    None when it is none of those. Never a float: 2500.5 is no choice on any menu."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip().removesuffix(".00")
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        return None
    return int(text)


def validate_kasko_option(field: str, value: object) -> int | str | None:
    """One kasko option, checked against the contract's values (the İMM limit against the desk's
    list): amounts and days as integers, the repair shop as the platform's word, None for an
    unlimited İMM."""
    if field == "deductible":
        amount = _whole_amount(value)
        if amount not in KASKO_DEDUCTIBLES:
            raise FieldError(field, _DEDUCTIBLE_MESSAGE)
        return amount
    if field == "replacement_car_days":
        days = _whole_amount(value) if not (isinstance(value, str) and "." in value) else None
        if days not in KASKO_REPLACEMENT_CAR_DAYS:
            raise FieldError(field, _REPLACEMENT_CAR_MESSAGE)
        return days
    if field == "liability_limit":
        if value is None:
            return None
        limit = _whole_amount(value)
        if limit is None or limit not in KASKO_LIABILITY_LIMITS:
            raise FieldError(field, _LIABILITY_MESSAGE)
        return limit
    if field == "repair_shop":
        shop = value.strip().lower() if isinstance(value, str) else None
        if shop not in KASKO_REPAIR_SHOPS:
            raise FieldError(field, _REPAIR_SHOP_MESSAGE)
        return shop
    raise ValueError(f"not a kasko option: {field!r}")


def option_given(data: Mapping, field: str) -> bool:
    """Whether `data` chooses the option: present and not blank; a null İMM limit is a choice
    (unlimited), any other null or blank is "the insurer's default"."""
    if field not in data:
        return False
    value = data[field]
    if value is None:
        return field == "liability_limit"
    return not is_blank(value)


# --- whole requests ----------------------------------------------------------------------------

PRODUCT_FIELDS: dict[str, tuple[str, ...]] = {str(product): fields for product, fields in PRODUCT_INPUT_FIELDS.items()}


def _field_validators(today: date | None) -> dict[str, Callable[[object], object]]:
    return {
        "plate": normalize_plate,
        "owner_id": validate_owner_id,
        "registration_serial": normalize_registration_serial,
        "usage": validate_usage,
        "model_year": lambda value: validate_model_year(value, today=today),
        "brand_code": lambda value: validate_vehicle_code("brand_code", value),
        "model_code": lambda value: validate_vehicle_code("model_code", value),
        "uavt_code": validate_uavt_code,
        "construction_type": validate_construction_type,
        "construction_year": lambda value: validate_construction_year(value, today=today),
        "floor_count": validate_floor_count,
        "gross_m2": validate_gross_m2,
        "damage_status": validate_damage_status,
    }


def product_input_fields(product: str) -> tuple[str, ...]:
    """Every field a request for `product` may carry: its own, the day its cover starts and its
    options (kasko). An unknown product has none."""
    fields = PRODUCT_FIELDS.get(str(product))
    if fields is None:
        return ()
    return (*fields, "starts_on", *PRODUCT_OPTION_FIELDS.get(str(product), ()))


def validate_fields(product: str, data: Mapping, *, today: date | None = None) -> tuple[dict, dict[str, str]]:
    """Reports every bad field at once, so the agent fixes the form in one pass instead of one
    error per submit. Fields the product does not use are dropped from the clean data, so nothing
    unvalidated reaches an insurer. The clean data is partial when there are errors: callers
    must check the errors first.

    An unknown product is the caller's bug, not the agent's, and raises ValueError.
    """
    try:
        fields = PRODUCT_FIELDS[str(product)]
    except KeyError:
        raise ValueError(f"unknown product: {product!r}") from None
    validators = _field_validators(today)
    clean: dict = {}
    errors: dict[str, str] = {}
    for field in fields:
        value = data.get(field)
        if is_blank(value):
            errors[field] = REQUIRED_MESSAGE
            continue
        try:
            clean[field] = validators[field](value)
        except FieldError as error:
            errors[field] = error.message
    # Every product's cover starts on a day: the agent's, else tomorrow.
    if is_blank(data.get("starts_on")):
        clean["starts_on"] = default_starts_on(today=today)
    else:
        try:
            clean["starts_on"] = validate_starts_on(data.get("starts_on"), today=today)
        except FieldError as error:
            errors["starts_on"] = error.message
    # Options are each optional: only those chosen are kept (and so sent).
    for field in PRODUCT_OPTION_FIELDS.get(str(product), ()):
        if not option_given(data, field):
            continue
        try:
            clean[field] = validate_kasko_option(field, data[field])
        except FieldError as error:
            errors[field] = error.message
    return clean, errors
