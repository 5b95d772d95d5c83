"""A plate in its one stored form: every way an agent types one is read, every impossible one refused
with the field named."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from insurehub.identity_numbers import REQUIRED_MESSAGE, FieldError
from vehicles.plates import normalize_plate

PLATE_LETTERS = "ABCDEFGHIJKLMNOPRSTUVYZ"


def assert_field_error(func, value, field: str) -> FieldError:
    with pytest.raises(FieldError) as info:
        func(value)
    assert info.value.field == field
    return info.value


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("34ABC123", "34ABC123"),
        ("06A1234", "06A1234"),
        ("35 AB 1234", "35AB1234"),
        ("34 abc 123", "34ABC123"),
        ("34-abc-123", "34ABC123"),
        ("  01 a 1234 ", "01A1234"),
        ("81AB123", "81AB123"),
        ("34ABC12", "34ABC12"),
        ("34 ıbc 12", "34IBC12"),  # dotless ı typed on a Turkish keyboard means I
        ("34 ibc 12", "34IBC12"),
    ],
)
def test_normalize_plate_valid(raw, expected):
    assert normalize_plate(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "82ABC12",  # province above 81
        "00AB123",  # province 00
        "34Q1234",  # Q is not used
        "34W1234",
        "34X1234",
        "34ABCD12",  # four letters
        "34A123",  # one letter needs four digits
        "34A12345",
        "34AB12",  # two letters need three or four digits
        "34AB12345",
        "34ABC1",  # three letters need two or three digits
        "34ABC1234",
        "34 İBC 12",  # dotted capital İ is never on a plate
        "34 ÇAB 12",
        "34ŞA1234",
        "34ÖÜ123",
        "34ĞA1234",
        "３４ABC123",  # full-width digits
        "4ABC123",
        "034ABC123",
        "34.ABC.123",
        "34ABC123X",
        "",
        "   ",
    ],
)
def test_normalize_plate_invalid(raw):
    error = assert_field_error(normalize_plate, raw, "plate")
    expected = REQUIRED_MESSAGE if not raw.strip() else "Geçerli bir plaka girin (ör. 34 ABC 123)."
    assert error.message == expected


@pytest.mark.parametrize("raw", [None, 34, 34.5, b"34ABC123", ["34ABC123"]])
def test_normalize_plate_non_text(raw):
    assert_field_error(normalize_plate, raw, "plate")


@st.composite
def plates(draw) -> str:
    """Canonical plates of every legal shape."""
    province = f"{draw(st.integers(1, 81)):02d}"
    letter_count = draw(st.integers(1, 3))
    digit_count = draw(st.sampled_from({1: [4], 2: [3, 4], 3: [2, 3]}[letter_count]))
    letters = "".join(
        draw(
            st.lists(
                st.sampled_from(PLATE_LETTERS),
                min_size=letter_count,
                max_size=letter_count,
            )
        )
    )
    digits = "".join(
        draw(
            st.lists(
                st.sampled_from("0123456789"),
                min_size=digit_count,
                max_size=digit_count,
            )
        )
    )
    return province + letters + digits


@st.composite
def typed_plates(draw) -> tuple[str, str]:
    """A canonical plate and the way an agent might type it (case, spaces, hyphens)."""
    plate = draw(plates())
    typed = []
    for ch in plate:
        if ch.isalpha() and draw(st.booleans()):
            ch = ch.lower()
        typed.append(ch + draw(st.sampled_from(["", "", " ", "-", "  "])))
    return plate, "".join(typed)


@given(typed_plates())
def test_normalize_plate_accepts_typed_forms(pair):
    canonical, typed = pair
    assert normalize_plate(typed) == canonical


@given(st.one_of(st.text(), typed_plates().map(lambda pair: pair[1])))
def test_normalize_plate_is_idempotent(raw):
    try:
        once = normalize_plate(raw)
    except FieldError as error:
        assert error.field == "plate"
        return
    assert normalize_plate(once) == once
    assert re.fullmatch(r"[0-9A-Z]+", once)
