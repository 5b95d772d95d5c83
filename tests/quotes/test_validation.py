"""Input validators: examples from the glossary and contracts, plus properties over all inputs.

Django-free on purpose: these run before the Django pytest plugin is configured
(``-p no:django``) and must keep running without a database.
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from insurehub.masking import mask_identities_in_text, mask_identity
from quotes.validation import (
    PRODUCT_FIELDS,
    REQUIRED_MESSAGE,
    STARTS_ON_MESSAGE,
    FieldError,
    normalize_registration_serial,
    owner_id_kind,
    validate_construction_type,
    validate_construction_year,
    validate_damage_status,
    validate_fields,
    validate_floor_count,
    validate_gross_m2,
    validate_model_year,
    validate_owner_id,
    validate_uavt_code,
    validate_usage,
    validate_vehicle_code,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TODAY = date(2025, 6, 1)
ALL_FIELDS = sorted({field for fields in PRODUCT_FIELDS.values() for field in fields})


def assert_field_error(func, value, field: str, message: str | None = None) -> FieldError:
    with pytest.raises(FieldError) as info:
        func(value)
    assert info.value.field == field
    if message is not None:
        assert info.value.message == message
    return info.value


# --- FieldError ----------------------------------------------------------------------------------


def test_field_error_carries_field_and_message_and_survives_pickling():
    error = FieldError("plate", "Geçerli bir plaka girin (ör. 34 ABC 123).")
    assert isinstance(error, ValueError)
    assert str(error) == error.message
    copy = pickle.loads(pickle.dumps(error))  # noqa: S301 - our own bytes, made one line above
    assert (copy.field, copy.message) == ("plate", error.message)


def test_module_does_not_import_django():
    code = "import sys, quotes.validation; sys.exit('django' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, check=False)
    assert result.returncode == 0


# --- owner_id ------------------------------------------------------------------------------------


def tckn_check_digits(first_nine: str) -> str:
    """Independent of stdnum, from the published rule: d10 = (7*odd - even) mod 10, d11 = sum."""
    digits = [int(ch) for ch in first_nine]
    odd, even = sum(digits[0::2]), sum(digits[1::2])
    d10 = (7 * odd - even) % 10
    d11 = (sum(digits) + d10) % 10
    return f"{d10}{d11}"


tckns = st.builds(
    lambda first, rest: first + rest + tckn_check_digits(first + rest),
    st.sampled_from("123456789"),
    st.text(alphabet="0123456789", min_size=8, max_size=8),
)


@pytest.mark.parametrize(
    ("raw", "expected", "kind"),
    [
        ("10000000146", "10000000146", "tckn"),
        ("17291716060", "17291716060", "tckn"),
        (" 172 917 160 60 ", "17291716060", "tckn"),
        ("4540536920", "4540536920", "vkn"),
        ("454 053 6920", "4540536920", "vkn"),
    ],
)
def test_owner_id_valid(raw, expected, kind):
    assert validate_owner_id(raw) == expected
    assert owner_id_kind(raw) == kind


@pytest.mark.parametrize(
    "raw",
    [
        "10000000147",
        "17291716061",
        "27291716060",
        "4540536921",
        "4540536930",
        "01000000146",  # a TCKN never starts with 0
    ],
)
def test_owner_id_bad_checksum(raw):
    assert_field_error(validate_owner_id, raw, "owner_id", "Geçersiz T.C. kimlik / vergi numarası.")
    assert_field_error(owner_id_kind, raw, "owner_id")


@pytest.mark.parametrize(
    "raw",
    [
        "100000001",
        "100000001466",
        "123",
        "1000000014a",
        "１0000000146",
        "100-000-001-46",
    ],
)
def test_owner_id_bad_format(raw):
    error = assert_field_error(validate_owner_id, raw, "owner_id")
    assert "11" in error.message and "10" in error.message


@pytest.mark.parametrize("raw", [None, "", "  "])
def test_owner_id_required(raw):
    assert_field_error(validate_owner_id, raw, "owner_id", REQUIRED_MESSAGE)


@pytest.mark.parametrize("raw", [10000000146, 4540536920, True, 1.5])
def test_owner_id_must_be_text(raw):
    """An int would drop a VKN's leading zero; identity numbers travel as text."""
    assert_field_error(validate_owner_id, raw, "owner_id")


@given(tckns)
def test_every_computed_tckn_validates(tckn):
    assert validate_owner_id(tckn) == tckn
    assert owner_id_kind(tckn) == "tckn"


@given(tckns, st.integers(0, 10), st.integers(1, 9))
def test_any_single_digit_change_of_a_tckn_fails(tckn, position, delta):
    changed_digit = str((int(tckn[position]) + delta) % 10)
    changed = tckn[:position] + changed_digit + tckn[position + 1 :]
    assert changed != tckn
    assert_field_error(validate_owner_id, changed, "owner_id")


# --- registration serial, UAVT, vehicle codes ----------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("AB123456", "AB123456"), ("ab 123456", "AB123456"), (" Ab-123 456 ", "AB123456")],
)
def test_registration_serial_valid(raw, expected):
    assert normalize_registration_serial(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "A1234567",
        "ABC12345",
        "AB12345",
        "AB1234567",
        "12345678",
        "ÇB123456",
        "AB12345x",
        12,
    ],
)
def test_registration_serial_invalid(raw):
    assert_field_error(
        normalize_registration_serial,
        raw,
        "registration_serial",
        "Ruhsat seri numarası 2 harf ve 6 rakam olmalıdır (ör. AB123456).",
    )


@pytest.mark.parametrize(("raw", "expected"), [("1234567890", "1234567890"), (" 0123456789 ", "0123456789")])
def test_uavt_valid(raw, expected):
    assert validate_uavt_code(raw) == expected


@pytest.mark.parametrize("raw", ["123456789", "12345678901", "12345A7890", 1234567890, "١٢٣٤٥٦٧٨٩٠"])
def test_uavt_invalid(raw):
    assert_field_error(validate_uavt_code, raw, "uavt_code", "UAVT kodu 10 haneli olmalıdır.")


def test_uavt_required():
    assert_field_error(validate_uavt_code, None, "uavt_code", REQUIRED_MESSAGE)


@pytest.mark.parametrize("field", ["brand_code", "model_code"])
def test_vehicle_codes(field):
    assert validate_vehicle_code(field, "012") == "012"
    assert validate_vehicle_code(field, " 345 ") == "345"
    for bad in ["12", "1234", "A12", 12, 123]:
        with pytest.raises(FieldError) as info:
            validate_vehicle_code(field, bad)
        assert info.value.field == field
        assert "3 haneli" in info.value.message
    with pytest.raises(FieldError, match=re.escape(REQUIRED_MESSAGE)):
        validate_vehicle_code(field, None)


def test_vehicle_code_unknown_field_is_a_programming_error():
    with pytest.raises(ValueError) as info:
        validate_vehicle_code("colour_code", "123")
    assert not isinstance(info.value, FieldError)


# --- choices -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("func", "field", "valid", "invalid"),
    [
        (
            validate_usage,
            "usage",
            ["private", "commercial", "taxi"],
            ["hususi", "truck", 1],
        ),
        (
            validate_construction_type,
            "construction_type",
            ["reinforced_concrete", "masonry", "other"],
            ["steel", "betonarme", 0],
        ),
        # heavy is valid input: the insurers' refusal is a business answer, not a typo
        (
            validate_damage_status,
            "damage_status",
            ["none", "minor", "heavy"],
            ["ağır", "total", True],
        ),
    ],
)
def test_choice_fields(func, field, valid, invalid):
    for value in valid:
        assert func(value) == value
        assert func(f" {value.upper()} ") == value
    for value in invalid:
        error = assert_field_error(func, value, field)
        assert error.message != REQUIRED_MESSAGE
    assert_field_error(func, None, field, REQUIRED_MESSAGE)
    assert_field_error(func, "", field, REQUIRED_MESSAGE)


# --- integers ------------------------------------------------------------------------------------


def test_model_year_bounds():
    assert validate_model_year("2015", today=TODAY) == 2015
    assert validate_model_year(2015, today=TODAY) == 2015
    assert validate_model_year(" 2026 ", today=TODAY) == 2026
    assert validate_model_year(1950, today=TODAY) == 1950
    for bad in (2027, 1949, "0", "-2015"):
        error = assert_field_error(lambda v: validate_model_year(v, today=TODAY), bad, "model_year")
        assert error.message == "Model yılı 1950 ile 2026 arasında olmalıdır."


def test_model_year_defaults_to_the_current_year_in_turkey():
    year = datetime.now(timezone(timedelta(hours=3))).year
    assert validate_model_year(year + 1) == year + 1
    assert_field_error(validate_model_year, year + 2, "model_year")


def test_construction_year_bounds():
    assert validate_construction_year("1998", today=TODAY) == 1998
    assert validate_construction_year(2025, today=TODAY) == 2025
    assert validate_construction_year(1900, today=TODAY) == 1900
    for bad in (2026, 1899):
        error = assert_field_error(
            lambda v: validate_construction_year(v, today=TODAY),
            bad,
            "construction_year",
        )
        assert error.message == "Yapım yılı 1900 ile 2025 arasında olmalıdır."


def test_floor_count_bounds():
    assert validate_floor_count("1") == 1
    assert validate_floor_count(99) == 99
    for bad in (0, 100, "-3"):
        assert_field_error(
            validate_floor_count,
            bad,
            "floor_count",
            "Kat sayısı 1 ile 99 arasında olmalıdır.",
        )


def test_gross_m2_bounds():
    assert validate_gross_m2("40") == 40
    assert validate_gross_m2(1000) == 1000
    for bad in (39, 1001, "5000", "9" * 5000):
        assert_field_error(
            validate_gross_m2,
            bad,
            "gross_m2",
            "Brüt alan 40 ile 1000 m² arasında olmalıdır.",
        )


@pytest.mark.parametrize(
    "func",
    [
        validate_model_year,
        validate_construction_year,
        validate_floor_count,
        validate_gross_m2,
    ],
)
@pytest.mark.parametrize("bad", ["20.5", "1.000", "1,000", "12a", 20.5, 120.0, True, False, [120], "٣"])
def test_integers_refuse_non_integers(func, bad):
    with pytest.raises(FieldError) as info:
        func(bad)
    assert "tam sayı" in info.value.message


@pytest.mark.parametrize(
    "func",
    [
        validate_model_year,
        validate_construction_year,
        validate_floor_count,
        validate_gross_m2,
    ],
)
@pytest.mark.parametrize("blank", [None, "", "  "])
def test_integers_required(func, blank):
    with pytest.raises(FieldError, match=re.escape(REQUIRED_MESSAGE)):
        func(blank)


# --- masking -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("10000000146", "100******46"),
        ("4540536920", "454*****20"),
        (" 100 000 001 46 ", "100******46"),
        ("12345", "*****"),
        ("123456789", "*********"),
        ("", ""),
        (None, ""),
        (10000000146, "100******46"),
    ],
)
def test_mask_identity(raw, expected):
    assert mask_identity(raw) == expected


@given(st.one_of(st.text(), st.text(alphabet="0123456789 -", max_size=40), tckns))
def test_mask_never_reveals_more_than_five_digits(raw):
    masked = mask_identity(raw)
    assert sum(ch.isdigit() for ch in masked) <= 5


@given(tckns)
def test_mask_hides_the_middle_of_a_tckn(tckn):
    masked = mask_identity(tckn)
    assert masked == tckn[:3] + "******" + tckn[-2:]


def test_mask_identities_in_text_examples():
    text = (
        '{"owner_id": "10000000146", "vkn": 4540536920, "quote_no": "AK-T-123456789012"}'
        " <b:TcKimlikNo>17291716060</b:TcKimlikNo> ref=123456789"
    )
    masked = mask_identities_in_text(text)
    assert "10000000146" not in masked and "100******46" in masked
    assert "4540536920" not in masked and "454*****20" in masked
    assert "17291716060" not in masked and "172******60" in masked
    # not standalone 10/11-digit runs: left alone
    assert "AK-T-123456789012" in masked
    assert "ref=123456789" in masked
    assert mask_identities_in_text(None) == ""


non_digit_text = st.text(alphabet=st.characters(exclude_characters="0123456789"), max_size=30)


@given(st.lists(st.tuples(non_digit_text.filter(bool), tckns), max_size=5), non_digit_text)
def test_mask_identities_in_text_hides_every_embedded_tckn(parts, tail):
    text = "".join(prefix + tckn for prefix, tckn in parts) + tail
    masked = mask_identities_in_text(text)
    for _, tckn in parts:
        assert tckn not in masked
    assert not re.search(r"(?<![0-9])[0-9]{10,11}(?![0-9])", masked)
    assert mask_identities_in_text(masked) == masked


# --- validate_fields -----------------------------------------------------------------------------

VALID = {
    "plate": "34 abc 123",
    "owner_id": "10000000146",
    "registration_serial": "ab 123456",
    "usage": "private",
    "model_year": "2015",
    "brand_code": "012",
    "model_code": "345",
    "uavt_code": "1234567890",
    "construction_type": "reinforced_concrete",
    "construction_year": 1998,
    "floor_count": "5",
    "gross_m2": 120,
    "damage_status": "heavy",
}


def test_validate_fields_clean_data():
    clean, errors = validate_fields("kasko", VALID, today=TODAY)
    assert errors == {}
    assert clean == {
        "plate": "34ABC123",
        "owner_id": "10000000146",
        "registration_serial": "AB123456",
        "usage": "private",
        "model_year": 2015,
        "brand_code": "012",
        "model_code": "345",
        "starts_on": (TODAY + timedelta(days=1)).isoformat(),  # absent: tomorrow
    }

    clean, errors = validate_fields("dask", VALID, today=TODAY)
    assert errors == {}
    assert clean["damage_status"] == "heavy"
    assert set(clean) == {*PRODUCT_FIELDS["dask"], "starts_on"}

    clean, errors = validate_fields("trafik", VALID)
    assert errors == {}
    assert set(clean) == {"plate", "owner_id", "registration_serial", "usage", "starts_on"}


def test_validate_fields_reports_all_errors_at_once():
    data = {
        "plate": "34A123",
        "owner_id": "10000000147",
        "usage": "",
        "extra": "ignored",
    }
    clean, errors = validate_fields("trafik", data)
    assert set(clean) == {"starts_on"}
    assert errors == {
        "plate": "Geçerli bir plaka girin (ör. 34 ABC 123).",
        "owner_id": "Geçersiz T.C. kimlik / vergi numarası.",
        "registration_serial": REQUIRED_MESSAGE,
        "usage": REQUIRED_MESSAGE,
    }


def test_validate_fields_accepts_product_enum_like_strings():
    class Product(str):
        pass

    _, errors = validate_fields(Product("dask"), {})
    assert set(errors) == set(PRODUCT_FIELDS["dask"])
    assert set(errors.values()) == {REQUIRED_MESSAGE}


def test_validate_fields_unknown_product_is_a_programming_error():
    with pytest.raises(ValueError):
        validate_fields("konut", VALID)


field_values = st.one_of(
    st.text(),
    st.integers(),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True),
    st.sampled_from(list(VALID.values())),
    st.lists(st.integers(), max_size=2),
)


@given(
    st.sampled_from(sorted(PRODUCT_FIELDS)),
    st.dictionaries(st.one_of(st.sampled_from(ALL_FIELDS), st.text()), field_values),
)
def test_validate_fields_never_raises(product, data):
    clean, errors = validate_fields(product, data)
    fields = {*PRODUCT_FIELDS[product], "starts_on"}
    assert set(clean) | set(errors) == fields
    assert not set(clean) & set(errors)
    assert all(isinstance(message, str) and message for message in errors.values())


@pytest.mark.parametrize(
    ("given", "expected"),
    [("", "2026-06-16"), ("2026-06-15", "2026-06-15"), ("15.07.2026", "2026-07-15"), ("2026-07-15", "2026-07-15")],
)
def test_cover_starts_tomorrow_unless_the_agent_picks_a_day_within_30(given, expected):
    clean, errors = validate_fields("trafik", {**VALID, "starts_on": given}, today=date(2026, 6, 15))
    assert errors == {} and clean["starts_on"] == expected


@pytest.mark.parametrize("given", ["2026-06-14", "2026-07-16", "yarın", "31.02.2026"])
def test_a_start_in_the_past_beyond_30_days_or_unreadable_names_the_field(given):
    _, errors = validate_fields("trafik", {**VALID, "starts_on": given}, today=date(2026, 6, 15))
    assert errors == {"starts_on": STARTS_ON_MESSAGE}
