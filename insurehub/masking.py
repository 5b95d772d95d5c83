"""KVKK masking of identity numbers (TCKN, VKN) in text we show or keep: logs, error messages, raw samples.

What is masked, precisely:

- A *number* is a chain of digit groups joined by single separators (space, no-break and thin
  spaces, ``.``, ``-``, each with up to three NUL bytes around it: what is left of UTF-16/32
  text read byte-wise as UTF-8).
  "100 000 001 46", "100.000.001-46" and "1 0 0 0 0 0 0 0 1 4 6" are one number each.
  Digits are ASCII digits, as everywhere in the platform.
- Inside a number, every stretch of whole groups (never part of a group: a digit glued to
  other digits belongs to a longer number) holding 11 digits that form a valid TCKN, or 10
  digits that form a valid VKN, is masked: its first three and last two digits stay, the rest
  become ``*``, separators stay where they were.
- A standalone 11-digit run without separators is masked even with a wrong checksum: it has a
  TCKN's shape, and a mistyped TCKN is still a person's number.
- A standalone 10-digit run without separators is masked only when it is a valid VKN: UAVT
  address codes are 10 digits too. One labelled as a UAVT code (`uavt_code`, `uavt_kodu`,
  `<UavtKodu>`, an `/addresses/` path) is never masked, even the tenth that passes the VKN
  checksum: an address code is not personal data.
- Longer digit runs (quote and policy numbers) are left alone.
- What the caller names as a reference (`keep`: an insurer's policy or quote number the text
  quotes) is left as it is, whatever digits it holds: "AK-P-3B0009-000094" holds a valid VKN
  (`0009-000094`) by chance, and an insurer's reference is not personal data. Only text the
  platform composed from its own fields names them; an insurer's free text never does.
- Where text is cut (`mask_and_cut`), it is masked *before* the cut, so a cut never leaves the
  nine leading digits of a TCKN (the last two are checksums: nine are enough to rebuild it).
  A number of 6 to 11 digits left touching the cut is masked whole as well: it may be the start
  of an identity the text it was cut from would have shown, and more than the five digits a
  masked identity shows is most of one (six known digits leave a thousand candidates).
- `mask_and_cut` is the one way to shorten a text that may quote an answer, an input or an
  exception: every `f"...{value!r}"` that is cut goes through it, never through `[:n]`
  (`tests/insurehub/test_mask_then_cut.py` reads the product code for stray cuts).

`raw_sample` decodes an answer's bytes first (UTF-8/16/32 byte-order marks, BOM-less UTF-16,
the declared charset), since digits of a UTF-16 body are not ASCII digit runs until decoded.

Every function here never raises on odd input: they run inside logging and error handling.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable

from stdnum.tr import tckimlik, vkn

__all__ = [
    "decode_body",
    "mask_and_cut",
    "mask_identities_in_text",
    "mask_identity",
    "raw_sample",
]

# One separator between two digit groups. Runs of NUL come from UTF-16/32 read byte-wise.
_SEP_CHARS = "[ .\\-\u00a0\u2007\u2009\u202f]"
# The same spaces (and NUL) as `repr()` and `json.dumps()` escape them: an exception quoting a
# value with `{value!r}` writes "100\xa0000\xa0001\xa046", an ASCII-only JSON body "\u00a0".
# Their own digits are separator, never part of the number.
_SEP_ESCAPED = r"\\{1,2}(?i:x(?:a0|00)|u(?:00a0|2007|2009|202f|0000))"
_SEP = rf"(?:\x00{{1,3}}(?:{_SEP_CHARS}\x00{{0,3}})?|{_SEP_CHARS}\x00{{0,3}}|{_SEP_ESCAPED})"
# An escaped separator right before the digits is read with them, so the "0" ending "\\xa0" is
# never taken for the first digit of the number.
_NUMBER_RE = re.compile(rf"(?P<lead>{_SEP_ESCAPED})?[0-9]+(?:{_SEP}[0-9]+)*")
_DIGIT_RE = re.compile(r"[0-9]")
# Reads a number left to right: a separator (escapes included) or one digit of the number.
_SEP_OR_DIGIT_RE = re.compile(rf"(?P<sep>{_SEP})|[0-9]")
# Text past the cut that must be seen to recognise an identity straddling it: 11 digits and
# up to 7 characters of separator (NULs, a separator, NULs) between each pair.
_CUT_MARGIN = 11 + 10 * 7
# A masked identity shows five digits; a fragment at a cut with more than that is most of one.
_EDGE_MIN_DIGITS = 6
_EDGE_MAX_DIGITS = 11


def mask_identity(value: object) -> str:
    """KVKK: logs and screens keep only enough of an identity number to tell two customers
    apart. At most five characters survive, and only of strings at least ten long, so a short
    fragment is never half revealed. Never raises, because it runs inside logging."""
    if value is None:
        return ""
    text = "".join((value if isinstance(value, str) else str(value)).split()).replace("-", "")
    if len(text) < 10:
        return "*" * len(text)
    return text[:3] + "*" * (len(text) - 5) + text[-2:]


def mask_identities_in_text(text: object, *, keep: Iterable[str] = ()) -> str:
    """Raw insurer answers and log lines echo identity numbers in every shape (JSON, SOAP,
    query strings, spaced out for reading); what counts as one is in the module docstring."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    if not _DIGIT_RE.search(text):
        return text
    return _masked_outside(text, _kept_spans(text, keep))


def mask_and_cut(text: object, limit: int, *, keep: Iterable[str] = ()) -> str:
    """Mask, then cut to `limit` characters: cutting first could leave nine digits of a TCKN
    that no longer look like one."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    limit = max(int(limit), 0)
    keep = tuple(keep)
    if len(text) <= limit:
        return mask_identities_in_text(text, keep=keep)
    if not keep:
        return _mask_edge_number(mask_identities_in_text(text[: limit + _CUT_MARGIN])[:limit])
    # Masked whole, so a reference the margin would cut in two is still seen as one; masking
    # keeps every character's place, so the references' spans hold in the masked text.
    spans = _kept_spans(text, keep)
    cut = _masked_outside(text, spans)[:limit]
    if any(start < limit <= end for start, end in spans):
        return cut  # the cut ends in a reference: the digits it leaves are the reference's
    # The number the cut leaves starts after the last kept reference at the earliest: digits that
    # run on from a reference's own (`...-000001` then `0…`) are not one number with them.
    kept_until = max((end for _, end in spans if end <= limit), default=0)
    return cut[:kept_until] + _mask_edge_number(cut[kept_until:])


def decode_body(content: bytes, charset: str | None = None) -> str:
    """An insurer's bytes as text, for showing and masking (not for parsing: adapters read
    their own formats). A byte-order mark wins. Without one, bytes holding NULs may be UTF-16:
    of UTF-8 (or the declared charset) and both UTF-16 byte orders, the reading with the most
    plain ASCII and the fewest NULs and replacement characters wins, since digits are ASCII in
    every reading that is right and never ASCII in UTF-16 read the wrong way round."""
    if not content:
        return ""
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if content.startswith(bom):
            return content[len(bom) :].decode(codec, errors="replace")
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        text = _decode_declared(content, charset)
    if b"\x00" not in content:
        return text
    readings = [text, content.decode("utf-16-le", errors="replace"), content.decode("utf-16-be", errors="replace")]
    return max(readings, key=_plain_ascii_score)  # max keeps the first of equals: UTF-8


def raw_sample(content: bytes | str, limit: int, *, charset: str | None = None) -> str:
    """What is kept of an answer we could not read: decoded, masked, then cut."""
    text = content if isinstance(content, str) else decode_body(content, charset)
    return mask_and_cut(text, limit)


# --- helpers -----------------------------------------------------------------------------------


def _decode_declared(content: bytes, charset: str | None) -> str:
    if charset:
        try:
            return content.decode(charset, errors="replace")
        except LookupError:
            pass
    return content.decode("utf-8", errors="replace")


def _plain_ascii_score(text: str) -> int:
    head = text[:8192]
    printable = sum(1 for ch in head if " " <= ch <= "~")
    # A NUL in a reading is a wide character split in two: it counts against that reading twice,
    # or UTF-16 text full of "/ " (U+202F read byte-wise) would pass for ASCII.
    return printable - 2 * head.count("\x00") - head.count("\ufffd")


def _digit_positions(number: str) -> list[int]:
    """Where the number's own digits are (not those of an escaped separator such as `\\xa0`)."""
    return [m.start() for m in _SEP_OR_DIGIT_RE.finditer(number) if m.group("sep") is None]


def _ascii_digits(number: str, positions: list[int]) -> str:
    return "".join(number[i] for i in positions)


def _is_identity(digits: str) -> bool:
    try:
        if len(digits) == 11:
            tckimlik.validate(digits)
        elif len(digits) == 10:
            vkn.validate(digits)
        else:
            return False
    except Exception:  # noqa: BLE001 - stdnum raises several kinds; none may escape masking
        return False
    return True


# A 10-digit run right after one of these is a DASK address code: not personal data, and what
# support needs to read; never masked, even the tenth that happens to pass the VKN checksum.
_UAVT_LABEL_RE = re.compile(r"(?:uavt_?code|uavt_?kodu|/addresses/)[\"'>:=\s]{0,4}$", re.IGNORECASE)


def _labelled_uavt(text: str, start: int) -> bool:
    return _UAVT_LABEL_RE.search(text, max(start - 24, 0), start) is not None


def _kept_spans(text: str, keep: Iterable[str]) -> list[tuple[int, int]]:
    """Where the references the caller named sit in `text`, left to right, longest first where
    two start together."""
    references = sorted({str(reference) for reference in keep if reference}, key=len, reverse=True)
    if not references:
        return []
    pattern = re.compile("|".join(re.escape(reference) for reference in references))
    return [match.span() for match in pattern.finditer(text)]


def _masked_outside(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` masked everywhere but inside `spans` (the kept references)."""
    if not spans:
        return _NUMBER_RE.sub(_mask_number, text)
    parts, position = [], 0
    for start, end in spans:
        parts += [_NUMBER_RE.sub(_mask_number, text[position:start]), text[start:end]]
        position = end
    parts.append(_NUMBER_RE.sub(_mask_number, text[position:]))
    return "".join(parts)


def _mask_number(match: re.Match[str]) -> str:
    lead = match.group("lead") or ""
    return lead + _masked_number(match.group()[len(lead) :], match.string, match.start() + len(lead))


def _masked_number(number: str, text: str, start: int) -> str:
    positions = _digit_positions(number)
    digits = _ascii_digits(number, positions)
    if len(positions) == len(number):  # no separators: one run
        if len(digits) == 10 and _labelled_uavt(text, start):
            return number
        if len(digits) == 11 or (len(digits) == 10 and _is_identity(digits)):
            return number[:3] + "*" * (len(number) - 5) + number[-2:]
        return number
    # Group boundaries, as indexes into `digits`: a stretch starts and ends on one.
    starts, ends = {0}, {len(digits)}
    for k in range(1, len(positions)):
        if positions[k] != positions[k - 1] + 1:
            starts.add(k)
            ends.add(k)
    hidden: set[int] = set()
    for start in sorted(starts):
        for width in (11, 10):
            end = start + width
            if end in ends and _is_identity(digits[start:end]):
                hidden.update(range(start + 3, end - 2))
    if not hidden:
        return number
    chars = list(number)
    for k in hidden:
        chars[positions[k]] = "*"
    return "".join(chars)


def _mask_edge_number(cut: str) -> str:
    """Mask the number that ends at the cut when it has 6 to 11 digits left, whether or not the
    text went on with more of it: a shorter fragment says no more than a masked identity shows,
    a longer one was a longer number."""
    tail = re.search(rf"(?:{_SEP_ESCAPED})?[0-9]+(?:{_SEP}[0-9]+)*{_SEP}?$", cut)
    if not tail:
        return cut
    number = tail.group()
    positions = _digit_positions(number)
    if not _EDGE_MIN_DIGITS <= len(positions) <= _EDGE_MAX_DIGITS:
        return cut
    chars = list(number)
    for i in positions:
        chars[i] = "*"
    return cut[: tail.start()] + "".join(chars)
