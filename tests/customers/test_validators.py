"""A customer's fields: checksummed identity numbers, Turkish phones, e-mail, the KVKK consent pair."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from customers import validators
from customers.validators import normalize_phone, parse_consent_at, validate_customer
from quotes.validation import FieldError

from .conftest import TCKN, VKN

VALID = {"name": "Ayşe Yılmaz", "identity_no": TCKN}
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def errors_of(**fields) -> dict[str, str]:
    return validate_customer({**VALID, **fields}, now=NOW)[1]


def test_a_person_and_a_company_are_accepted_with_only_name_and_number():
    """Name and a TCKN or VKN are enough; contact and consent come back blank."""
    for number in (TCKN, VKN, " 123 456 789 50 "):
        clean, errors = validate_customer({**VALID, "identity_no": number}, now=NOW)
        assert errors == {}
        assert clean["identity_no"] == number.replace(" ", "")
        assert clean["phone"] == clean["email"] == clean["address"] == clean["kvkk_consent_channel"] == ""
        assert clean["kvkk_consent_at"] is None


@pytest.mark.parametrize(
    ("number", "fragment"),
    [
        ("12345678951", "Geçersiz T.C. kimlik / vergi numarası."),  # TCKN checksum off by one
        ("1234567891", "Geçersiz T.C. kimlik / vergi numarası."),  # VKN checksum off by one
        ("123456789", "11, vergi kimlik numarası 10 haneli"),
        ("1234567890A", "11, vergi kimlik numarası 10 haneli"),
        ("", "zorunludur"),
    ],
)
def test_identity_numbers_are_checked_by_checksum_and_length(number, fragment):
    """A typo in a TCKN/VKN is caught here, named on the identity field."""
    errors = errors_of(identity_no=number)
    assert list(errors) == ["identity_no"] and fragment in errors["identity_no"]


def test_an_identity_number_sent_as_a_number_is_refused():
    """An int has already lost a VKN's leading zero: text only."""
    assert list(errors_of(identity_no=12345678950)) == ["identity_no"]


@pytest.mark.parametrize(
    "typed",
    ["0532 123 45 67", "05321234567", "5321234567", "+90 532 123 45 67", "90 532 123 4567", "(0532) 123-45-67"],
)
def test_turkish_mobile_numbers_in_any_usual_form_become_plus_90(typed):
    assert normalize_phone(typed) == "+905321234567"


def test_landlines_and_0850_lines_are_accepted():
    assert normalize_phone("0212 555 12 34") == "+902125551234"
    assert normalize_phone("0850 222 00 00") == "+908502220000"


@pytest.mark.parametrize(("typed", "stored"), [("444 1 234", "+904441234"), ("0 444 12 34", "+904441234")])
def test_444_lines_are_accepted_in_their_seven_digits(typed, stored):
    """A company's 444 line has seven digits: a Turkish number all the same."""
    assert normalize_phone(typed) == stored


@pytest.mark.parametrize(
    "typed",
    [
        "0532 123 45 6",
        "0132 123 45 67",
        "+1 415 555 0100",
        "telefon",
        "0532١٢٣٤٥٦٧",
        "0200 123 45 67",  # the right shape, but no such area code
        "0590 123 45 67",  # no such mobile operator prefix
        "0900 123 45 67",  # a premium-rate line is no customer's phone
        "0532 123 45 67 dahili 5",
        "1" * 40,
    ],
)
def test_a_phone_that_is_not_turkish_is_a_phone_error(typed):
    errors = errors_of(phone=typed)
    assert list(errors) == ["phone"] and "Telefon" in errors["phone"]


def test_a_bad_email_is_an_email_error_and_a_good_one_is_kept():
    assert list(errors_of(email="ayse@")) == ["email"]
    assert "E-posta" in errors_of(email="ayse at example.com")["email"]
    assert validate_customer({**VALID, "email": " ayse@example.com "}, now=NOW)[0]["email"] == "ayse@example.com"


def test_consent_time_without_channel_and_channel_without_time_are_errors():
    """KVKK consent is a pair: the missing half is the field named."""
    assert list(errors_of(kvkk_consent_at="2026-11-01T10:00")) == ["kvkk_consent_channel"]
    assert "onay şekli" in errors_of(kvkk_consent_at="2026-11-01T10:00")["kvkk_consent_channel"]
    assert list(errors_of(kvkk_consent_channel="sms")) == ["kvkk_consent_at"]
    assert "onay zamanı" in errors_of(kvkk_consent_channel="sms")["kvkk_consent_at"]


def test_consent_pair_is_stored_as_an_aware_time_in_turkey():
    clean, errors = validate_customer(
        {**VALID, "kvkk_consent_at": "01.11.2026 10:30", "kvkk_consent_channel": "wet_signature"}, now=NOW
    )
    assert errors == {}
    assert clean["kvkk_consent_at"] == datetime(2026, 11, 1, 7, 30, tzinfo=UTC)
    assert clean["kvkk_consent_channel"] == "wet_signature"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("dün", validators.CONSENT_AT_MESSAGE),
        ("2026-12-30T10:00", validators.CONSENT_AT_FUTURE_MESSAGE),
        ("2010-01-01", validators.CONSENT_AT_TOO_EARLY_MESSAGE),
        ("0001-01-01T00:00", validators.CONSENT_AT_TOO_EARLY_MESSAGE),
    ],
)
def test_a_consent_time_that_cannot_be_true_is_a_consent_time_error(value, message):
    assert errors_of(kvkk_consent_at=value, kvkk_consent_channel="sms") == {"kvkk_consent_at": message}


def test_a_consent_date_alone_means_that_day():
    assert parse_consent_at(date(2026, 11, 2), now=NOW).date() == date(2026, 11, 2)
    assert parse_consent_at("2026-11-02", now=NOW).date() == date(2026, 11, 2)
    with pytest.raises(FieldError):
        parse_consent_at(NOW + timedelta(days=1), now=NOW)


def test_an_unknown_consent_channel_is_refused():
    errors = errors_of(kvkk_consent_at="2026-11-01T10:00", kvkk_consent_channel="pigeon")
    assert errors == {"kvkk_consent_channel": validators.CONSENT_CHANNEL_MESSAGE}


def test_name_is_required_and_plain_text():
    assert errors_of(name="  ") == {"name": validators.NAME_REQUIRED_MESSAGE}
    assert errors_of(name="Ayşe\x00") == {"name": validators.NAME_CHARACTERS_MESSAGE}
    assert errors_of(name="A" * 201) == {"name": validators.NAME_LENGTH_MESSAGE}
    assert validate_customer({**VALID, "name": "  Ayşe   Yılmaz "}, now=NOW)[0]["name"] == "Ayşe Yılmaz"


def test_every_bad_field_is_reported_at_once():
    errors = validate_customer({"name": "", "identity_no": "1", "phone": "x", "email": "y"}, now=NOW)[1]
    assert set(errors) == {"name", "identity_no", "phone", "email"}
