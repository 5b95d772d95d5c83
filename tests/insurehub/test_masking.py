"""KVKK masking: identity numbers in any shape, any encoding, cut anywhere, never leave six digits in a row."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stdnum.tr import tckimlik, vkn

from insurehub.masking import decode_body, mask_and_cut, mask_identities_in_text, raw_sample

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

tckns = st.builds(
    lambda first, rest: first + rest + tckimlik.calc_check_digits(first + rest),
    st.sampled_from("123456789"),
    st.text(alphabet="0123456789", min_size=8, max_size=8),
)
vkns = st.text(alphabet="0123456789", min_size=9, max_size=9).map(lambda head: head + vkn.calc_check_digit(head))
identities = st.one_of(tckns, vkns)
SEPARATORS = ["", "", "", " ", ".", "-", "\u00a0", "\u202f", "\u2009", "\\xa0", "\\u00a0", "\\u202F"]
# A masked identity shows five digits (three and two); six of it in a row are most of one.
MOST_OF_ONE = 6
_ESCAPED_SPACE_RE = re.compile(r"\\{1,2}(?i:x(?:a0|00)|u(?:00a0|2007|2009|202f|0000))")
# Any other escape (`repr` writes an unprintable character of the text around the number as
# `\U000dbdba`): its hex digits are not the identity's, and it separates like any character.
_OTHER_ESCAPE_RE = re.compile(r"\\{1,2}(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})")
# A UAVT label (`uavt_code`, `/addresses/`) says the ten digits after it are an address code,
# left readable on purpose (the labelled UAVT test below): no context around an identity holds one.
_UAVT_LABEL_RE = re.compile(r"uavt_?cod|uavt_?kod|/addresses/", re.IGNORECASE)
# Arbitrary text around the number, without ASCII digits: any digit left in the output is one
# of the identity's.
context = st.text(
    alphabet=st.characters(exclude_characters="0123456789", exclude_categories=["Cs"]), max_size=60
).filter(lambda text: not _UAVT_LABEL_RE.search(text))
ENCODINGS = ["text", "utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"]


@st.composite
def spaced(draw, number: str) -> str:
    """The number as someone might write it: any of the separators between any two digits."""
    return number[0] + "".join(draw(st.sampled_from(SEPARATORS)) + digit for digit in number[1:])


def surviving_runs(identity: str, output: str) -> list[str]:
    """Six-digit stretches of `identity` still readable in `output`, whatever sits between its
    digits (a masked digit, `*`, breaks a stretch; an escaped space such as `\\xa0` is no digit)."""
    digits = re.sub(r"[^0-9*]", "", _OTHER_ESCAPE_RE.sub("*", _ESCAPED_SPACE_RE.sub("", output)))
    width = MOST_OF_ONE
    return [identity[i : i + width] for i in range(len(identity) - width + 1) if identity[i : i + width] in digits]


@PROPERTY
@given(
    identity=identities,
    data=st.data(),
    before=context,
    after=context,
    encoding=st.sampled_from(ENCODINGS),
    limit=st.integers(0, 200),
)
def test_no_nine_digits_of_an_identity_survive_any_shape_or_cut(identity, data, before, after, encoding, limit):
    """A valid TCKN/VKN with any separators (escaped ones too), in UTF-8 or UTF-16/32, cut at any
    length: at most five of its digits in a row come out."""
    text = before + data.draw(spaced(identity), label="written") + after
    body = text if encoding == "text" else text.encode(encoding)
    assert surviving_runs(identity, raw_sample(body, limit)) == []


@PROPERTY
@given(identity=identities, data=st.data(), before=context, after=context)
def test_whole_text_masking_hides_the_identity_in_any_shape(identity, data, before, after):
    """Uncut, the identity is masked wherever it sits, and masking twice changes nothing."""
    masked = mask_identities_in_text(before + data.draw(spaced(identity)) + after)
    assert surviving_runs(identity, masked) == []
    assert mask_identities_in_text(masked) == masked


@PROPERTY
@given(identity=identities, before=context, limit=st.integers(0, 80))
def test_a_cut_through_an_identity_leaves_no_six_digit_head(identity, before, limit):
    """Cutting after masking, not before: the head of a cut identity never shows six digits."""
    assert surviving_runs(identity, mask_and_cut(before + identity + "}", limit)) == []


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("10000000146", "100******46"),
        ("100 000 001 46", "100 *** *** 46"),
        ("100.000.001-46", "100.***.***-46"),
        ("100\u00a0000\u00a0001\u00a046", "100\u00a0***\u00a0***\u00a046"),
        ("454 053 6920", "454 *** **20"),
        ("4540536920", "454*****20"),
        # A mistyped TCKN is still a person's number: 11 digits are masked whatever the checksum.
        ("10000000147", "100******47"),
    ],
)
def test_identity_numbers_are_masked_in_their_usual_shapes(written, expected):
    """Spaced, dotted and NBSP-grouped numbers are one number each, masked as such."""
    assert mask_identities_in_text(f"kimlik: {written}.") == f"kimlik: {expected}."


@pytest.mark.parametrize(
    "text",
    [
        '{"uavt_code": "1234567891"}',  # a UAVT code that is no valid VKN
        "Teklif AK-T-123456789012 bulunamadı",  # a quote number: longer than any identity
        "Poliçe 2026-000124-45 aktif",  # (one in ten such numbers passes the VKN checksum: masked)
        "ref=123456789",
        "tarih 30.11.2026 saat 12:00",
    ],
)
def test_numbers_that_are_no_identity_stay_readable(text):
    """UAVT codes, quote and policy numbers and dates are what support reads: left alone."""
    assert mask_identities_in_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        '{"uavt_code": "4540536920"}',
        '{"uavt_kodu":"4540536920"}',
        "<UavtKodu>4540536920</UavtKodu>",
        "GET /v1/dask/addresses/4540536920",
    ],
)
def test_a_labelled_uavt_code_stays_readable_even_when_it_passes_the_vkn_checksum(text):
    """4540536920 is a valid VKN; labelled as an address code it is an address, not a company."""
    assert mask_identities_in_text(text) == text
    # The same number anywhere else is a company's tax number: masked.
    assert "454*****20" in mask_identities_in_text(text.replace("4540536920", "vkn 4540536920"))


def test_six_to_eleven_digits_touching_a_cut_are_masked():
    """A run cut down to 6–11 digits may be the head of an identity (more than the five digits a
    masked one shows): masked whole."""
    assert mask_and_cut("no=123456789012345", 12) == "no=*********"
    assert mask_and_cut("no=123 456 789 012", 14) == "no=*** *** ***"
    assert mask_and_cut("no=123456789012345", 9) == "no=******"
    # Five digits say no more than a masked identity; a whole short answer is not cut at all.
    assert mask_and_cut("no=123456789012345", 8) == "no=12345"
    assert mask_and_cut("ref=123456789", 100) == "ref=123456789"


def test_utf16_with_narrow_no_break_spaces_is_not_read_as_ascii():
    """U+202F in UTF-16-LE is the bytes "/ ": read byte-wise the text looks ASCII; it is not."""
    body = "00000\u202f0\u202f0\u202f0\u202f0\u202f1".encode("utf-16-le")  # a valid VKN, spaced
    assert decode_body(body) == "00000\u202f0\u202f0\u202f0\u202f0\u202f1"
    assert "000000000" not in "".join(ch for ch in raw_sample(body, 25) if ch.isdigit())


def test_utf16_bodies_are_decoded_before_masking():
    """Digits of a UTF-16 body are not ASCII runs until decoded; BOM or not, they are masked."""
    answer = '{"hata": "TCKN 10000000146 bulunamadı"}'
    for encoding in ("utf-16", "utf-16-le", "utf-16-be", "utf-8-sig", "utf-32"):
        body = answer.encode(encoding)
        assert decode_body(body) == answer, encoding
        assert raw_sample(body, 2000) == '{"hata": "TCKN 100******46 bulunamadı"}', encoding
    # The declared charset is used when the body is not UTF-8.
    assert decode_body("Müşteri 10000000146".encode("iso-8859-9"), "iso-8859-9") == "Müşteri 10000000146"


# --- references the caller names ------------------------------------------------------------------

REFERENCE = "AK-P-3B0009-000094"  # tag and serial join across the dash into a valid VKN: 0009000094


def test_a_reference_the_caller_names_is_left_as_it_is_even_when_it_holds_a_vkn():
    assert vkn.is_valid("0009000094")
    title = f"Anka poliçesi düzenlendi: {REFERENCE}"
    assert mask_identities_in_text(title) == "Anka poliçesi düzenlendi: AK-P-3B000*-****94"  # the trap
    assert mask_identities_in_text(title, keep=[REFERENCE]) == title
    assert mask_and_cut(title, 200, keep=[REFERENCE]) == title
    assert mask_and_cut(title, len(title) - 2, keep=[REFERENCE]) == title[:-2]  # a cut through it
    assert mask_identities_in_text(title, keep=["", None]) == mask_identities_in_text(title)  # odd input


def test_a_cut_just_after_a_named_reference_leaves_its_serial_and_hides_the_identity_running_on():
    """Found by the property below: a VKN written straight after the reference, cut one digit
    in. The digits at the cut run on from the reference's serial, but they are two numbers: the
    reference stays whole, and the one digit left of the identity says nothing."""
    reference = "AK-P-00000A-000001"
    text = reference + "0000000001"
    assert mask_and_cut(text, len(reference) + 1, keep=[reference]) == reference + "0"
    assert mask_and_cut(text, len(reference) + 7, keep=[reference]) == reference + "000****"
    assert mask_and_cut(text, len(text), keep=[reference]) == reference + "000*****01"


hex_tags = st.text(alphabet="0123456789ABCDEF", min_size=6, max_size=6)


@PROPERTY
@given(
    identity=identities,
    data=st.data(),
    before=context,
    between=context,
    after=context,
    tag=hex_tags,
    serial=st.integers(1, 999_999),
    identity_first=st.booleans(),
    limit=st.integers(0, 200),
)
def test_a_named_reference_never_shields_an_identity_beside_it(
    identity, data, before, between, after, tag, serial, identity_first, limit
):
    """Whatever the reference and wherever the identity sits (before it, after it, cut or not),
    naming the reference spares its own characters only."""
    reference = f"AK-P-{tag}-{serial:06d}"
    written = data.draw(spaced(identity), label="written")
    pieces = (
        [before, written, between, reference, after] if identity_first else [before, reference, between, written, after]
    )
    text = "".join(pieces)
    masked = mask_and_cut(text, limit, keep=[reference])
    start = text.index(reference)
    end = start + len(reference)
    # Masking keeps every character's place: the reference's own digits are taken out before
    # looking for the identity's, which they may hold by chance.
    assert surviving_runs(identity, masked[:start] + "|" + masked[end:]) == []
    assert masked[start:end] == text[start:end][: max(limit - start, 0)]
