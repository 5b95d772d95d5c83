"""Validation of a customer's fields: one Turkish message per field, every error at once.

Plain functions, like `quotes.validation` (both use the identity check of
`insurehub.identity_numbers`), so the desk form, the quote form's inline customer and the API
all refuse the same things with the same words. Clean values come back normalised: a phone in
E.164 (+90…), consent as an aware time.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta, timezone

import phonenumbers
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from customers.models import Customer
from insurehub.identity_numbers import FieldError, validate_owner_id
from insurehub.model_fields import char_max_length
from insurehub.person_names import person_name_problem

# Turkey has stayed on UTC+3 all year since 2016 (as in quotes.validation).
TURKEY_TZ = timezone(timedelta(hours=3), "TRT")
# A consent timed a little ahead is a clock skew between the agent's PC and the server, not a lie.
CONSENT_CLOCK_SKEW = timedelta(minutes=5)
# The law came into force in 2016: an earlier "consent" is a typo (and year 1 cannot even be stored).
KVKK_IN_FORCE = datetime(2016, 4, 7, tzinfo=TURKEY_TZ)

NAME_MAX_LENGTH = char_max_length(Customer, "name")
ADDRESS_MAX_LENGTH = 500
EMAIL_MAX_LENGTH = 254

NAME_REQUIRED_MESSAGE = "Ad soyad / unvan zorunludur."
NAME_LENGTH_MESSAGE = f"Ad soyad / unvan en fazla {NAME_MAX_LENGTH} karakter olabilir."
NAME_CHARACTERS_MESSAGE = "Ad soyad / unvan geçersiz karakter içeriyor."
NAME_LABEL = "Ad soyad / unvan"
IDENTITY_REQUIRED_MESSAGE = "T.C. kimlik / vergi numarası zorunludur."
PHONE_MESSAGE = "Telefon numarası geçersiz; 0532 123 45 67, 0212 123 45 67 ya da 444 1 234 biçiminde girin."
EMAIL_MESSAGE = "E-posta adresi geçersiz (ör. ad@ornek.com)."
ADDRESS_MESSAGE = f"Adres en fazla {ADDRESS_MAX_LENGTH} karakter olabilir ve geçersiz karakter içeremez."
CONSENT_AT_MESSAGE = "KVKK onay zamanı geçersiz; gg.aa.yyyy ss:dd biçiminde girin."
CONSENT_AT_FUTURE_MESSAGE = "KVKK onay zamanı ileri bir tarih olamaz."
CONSENT_AT_TOO_EARLY_MESSAGE = "KVKK onay zamanı 2016'dan (KVKK'nın yürürlüğe girişinden) önce olamaz."
CONSENT_AT_MISSING_MESSAGE = "KVKK onay şekli seçildiyse onay zamanı da girilmelidir."
CONSENT_CHANNEL_MESSAGE = "Geçersiz KVKK onay şekli."
CONSENT_CHANNEL_MISSING_MESSAGE = "KVKK onay zamanı girildiyse onay şekli de seçilmelidir."

CUSTOMER_FIELDS = (
    "name",
    "identity_no",
    "phone",
    "email",
    "address",
    "kvkk_consent_at",
    "kvkk_consent_channel",
)

# What a typed phone may hold besides its digits; anything else (letters, "dahili 12") is refused,
# not guessed at. ASCII only: phonenumbers would read Arabic-Indic digits as digits.
_PHONE_CHARACTERS_RE = re.compile(r"[0-9+\s\-().]+")
_PHONE_MAX_LENGTH = 32
# Türkiye's numbering plan, as Google's libphonenumber keeps it: a shape alone let 0200…/0590…
# (unassigned) through and refused 444 lines (7 digits).
_PHONE_REGION = "TR"
# What agents type for a consent moment: the browser's datetime-local, ISO, or the Turkish way.
_CONSENT_FORMATS = ("%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%d.%m.%Y %H:%M", "%d.%m.%Y %H:%M:%S")
_CONSENT_DATE_FORMATS = ("%Y-%m-%d", "%d.%m.%Y")


def _is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _has_bad_characters(text: str, *, allow_newlines: bool = False) -> bool:
    """Control characters and lone surrogates have no place in a name or an address (and a lone
    surrogate cannot even be stored)."""
    allowed = "\n\r\t" if allow_newlines else ""
    return any(unicodedata.category(ch) in ("Cc", "Cs") and ch not in allowed for ch in text)


def normalize_phone(value: object) -> str:
    """Agents type "0532 123 45 67", "(532) 123-4567", "+90 532...", "90532..." or "444 1 234":
    each is one number, valid in Türkiye's numbering plan (`phonenumbers`), stored the one way an
    SMS gateway takes it, E.164 (+90 and the national number). A number of another country, an
    extension or a premium-rate line (0900) is refused: the agency calls and texts its customers
    in Türkiye."""
    if not isinstance(value, str) or len(value) > _PHONE_MAX_LENGTH or not _PHONE_CHARACTERS_RE.fullmatch(value):
        raise FieldError("phone", PHONE_MESSAGE)
    try:
        number = phonenumbers.parse(value, _PHONE_REGION)
    except phonenumbers.NumberParseException:
        raise FieldError("phone", PHONE_MESSAGE) from None
    if (
        number.country_code != 90
        or number.extension
        or not phonenumbers.is_valid_number(number)
        or phonenumbers.number_type(number) == phonenumbers.PhoneNumberType.PREMIUM_RATE
    ):
        raise FieldError("phone", PHONE_MESSAGE)
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def validate_customer_email(value: object) -> str:
    if not isinstance(value, str) or len(value.strip()) > EMAIL_MAX_LENGTH:
        raise FieldError("email", EMAIL_MESSAGE)
    text = value.strip()
    try:
        validate_email(text)
    except ValidationError:
        raise FieldError("email", EMAIL_MESSAGE) from None
    return text


def parse_consent_at(value: object, *, now: datetime | None = None) -> datetime:
    """A consent moment as an aware time. A bare date means that day (noon, Türkiye), since paper
    forms carry a date only; a time without a zone is Türkiye's."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime.combine(value, time(12, 0))
    elif isinstance(value, str):
        moment = _parse_consent_text(value.strip())
    else:
        raise FieldError("kvkk_consent_at", CONSENT_AT_MESSAGE)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=TURKEY_TZ)
    if moment > (now or datetime.now(UTC)) + CONSENT_CLOCK_SKEW:
        raise FieldError("kvkk_consent_at", CONSENT_AT_FUTURE_MESSAGE)
    if moment < KVKK_IN_FORCE:
        raise FieldError("kvkk_consent_at", CONSENT_AT_TOO_EARLY_MESSAGE)
    return moment


def _parse_consent_text(text: str) -> datetime:
    for pattern in _CONSENT_FORMATS:
        try:
            return datetime.strptime(text, pattern)
        except ValueError:
            continue
    for pattern in _CONSENT_DATE_FORMATS:
        try:
            return datetime.combine(datetime.strptime(text, pattern).date(), time(12, 0))
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise FieldError("kvkk_consent_at", CONSENT_AT_MESSAGE) from None


def validate_consent_channel(value: object) -> str:
    if not isinstance(value, str) or value.strip() not in Customer.ConsentChannel.values:
        raise FieldError("kvkk_consent_channel", CONSENT_CHANNEL_MESSAGE)
    return value.strip()


def _name(value: object) -> str:
    if _is_blank(value):
        raise FieldError("name", NAME_REQUIRED_MESSAGE)
    if not isinstance(value, str) or _has_bad_characters(value):
        raise FieldError("name", NAME_CHARACTERS_MESSAGE)
    problem = person_name_problem(value, label=NAME_LABEL)
    if problem:
        raise FieldError("name", problem)
    text = " ".join(value.split())
    if len(text) > NAME_MAX_LENGTH:
        raise FieldError("name", NAME_LENGTH_MESSAGE)
    return text


def _identity(value: object) -> str:
    if _is_blank(value):
        raise FieldError("identity_no", IDENTITY_REQUIRED_MESSAGE)
    try:
        return validate_owner_id(value)  # non-text is refused inside
    except FieldError as error:
        raise FieldError("identity_no", error.message) from None


def _address(value: object) -> str:
    if not isinstance(value, str) or _has_bad_characters(value, allow_newlines=True):
        raise FieldError("address", ADDRESS_MESSAGE)
    text = value.strip()
    if len(text) > ADDRESS_MAX_LENGTH:
        raise FieldError("address", ADDRESS_MESSAGE)
    return text


def validate_customer(data: Mapping, *, now: datetime | None = None) -> tuple[dict, dict[str, str]]:
    """Every field of a customer checked at once: (clean, errors). Name and identity are required;
    phone, e-mail, address and consent may be blank, but consent is a pair: a time without the
    channel (or the other way round) proves nothing under KVKK. The clean data is partial when
    there are errors."""
    clean: dict = {}
    errors: dict[str, str] = {}
    checks = {"name": _name, "identity_no": _identity}
    optional = {"phone": normalize_phone, "email": validate_customer_email, "address": _address}
    for field, check in checks.items():
        try:
            clean[field] = check(data.get(field))
        except FieldError as error:
            errors[field] = error.message
    for field, check in optional.items():
        value = data.get(field)
        if _is_blank(value):
            clean[field] = ""
            continue
        try:
            clean[field] = check(value)
        except FieldError as error:
            errors[field] = error.message
    consent_at, channel = data.get("kvkk_consent_at"), data.get("kvkk_consent_channel")
    clean["kvkk_consent_at"], clean["kvkk_consent_channel"] = None, ""
    if not _is_blank(consent_at):
        try:
            clean["kvkk_consent_at"] = parse_consent_at(consent_at, now=now)
        except FieldError as error:
            errors[error.field] = error.message
    if not _is_blank(channel):
        try:
            clean["kvkk_consent_channel"] = validate_consent_channel(channel)
        except FieldError as error:
            errors[error.field] = error.message
    if _is_blank(consent_at) and not _is_blank(channel):
        errors.setdefault("kvkk_consent_at", CONSENT_AT_MISSING_MESSAGE)
    if not _is_blank(consent_at) and _is_blank(channel):
        errors.setdefault("kvkk_consent_channel", CONSENT_CHANNEL_MISSING_MESSAGE)
    return clean, errors
