"""What every name of a person (or a company) must be, wherever one is typed: a customer's name on
the desk, the quote form and the API, an agent's first and last name.

A name is printed on a policy and read back by people, so it must hold at least one letter (a
name of emoji or symbols alone names nobody), and no character that changes how the text around
it is shown: the Unicode bidirectional controls make "Ayşe‮ zılıY" display as something else than
what is stored and searched (the "Trojan Source" trick), and none of them has a place in a
Turkish name. Messages are Turkish and name the field, as every field error here does.
"""

from __future__ import annotations

import unicodedata

__all__ = ["BIDI_CONTROLS", "person_name_problem"]

# Embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069), the left-to-right and
# right-to-left marks (U+200E, U+200F) and the Arabic letter mark (U+061C).
BIDI_CONTROLS = frozenset(
    [*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)), "\u200e", "\u200f", "\u061c"]
)


def person_name_problem(text: str, *, label: str) -> str:
    """Why `text` can not be a name, in Turkish, naming the field by its `label` ("Ad soyad /
    unvan", "Ad"); "" when it can. Blank text is the caller's to allow or refuse."""
    if any(ch in BIDI_CONTROLS for ch in text):
        return f"{label} yazının yönünü değiştiren görünmez karakterler (U+202E gibi) içeremez."
    if text.strip() and not any(unicodedata.category(ch).startswith("L") for ch in text):
        return f"{label} en az bir harf içermelidir; yalnız emoji, simge ya da rakamdan oluşamaz."
    return ""
