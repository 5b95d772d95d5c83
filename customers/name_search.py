"""Name search that treats Turkish letters the way agents type them: the one name search of every
list (customers, policies, quote requests; the desk, the API and the admin alike).

Agents search "isik" for "IŞIK Ltd.", "cagri" for "Çağrı", often without the Turkish keyboard.
Databases disagree on case: SQLite's LIKE and lower() fold ASCII only, PostgreSQL's follow the
cluster's locale, and no locale but Turkish maps "I" to "ı". So both sides of the comparison are
folded here, the same way on every engine: Turkish letters (and the circumflexed vowels of loan
words) to their plain Latin base, then lower case, which is then ASCII for Turkish text.
"""

from __future__ import annotations

from django.db.models import Expression, F, Q, Value
from django.db.models.expressions import Combinable
from django.db.models.functions import Lower, Replace
from django.db.models.lookups import Contains

# Every letter that is not plain ASCII in Turkish names, and what it folds to.
_FOLDS = {
    "İ": "i",
    "I": "i",
    "ı": "i",
    "Ş": "s",
    "ş": "s",
    "Ğ": "g",
    "ğ": "g",
    "Ü": "u",
    "ü": "u",
    "Ö": "o",
    "ö": "o",
    "Ç": "c",
    "ç": "c",
    "Â": "a",
    "â": "a",
    "Î": "i",
    "î": "i",
    "Û": "u",
    "û": "u",
}
_TABLE = str.maketrans(_FOLDS)


def name_fold(text: str) -> str:
    """`text` as the database side is folded by `name_folded`: "IŞIK Çağrı" -> "isik cagri"."""
    return text.translate(_TABLE).lower()


def name_folded(field: str) -> Expression:
    """The SQL twin of `name_fold` on a column: nested REPLACEs, then LOWER (ASCII is all that is left)."""
    expression: Combinable = F(field)
    for letter, plain in _FOLDS.items():
        expression = Replace(expression, Value(letter), Value(plain))
    return Lower(expression)


def name_contains(field: str, term: str) -> Q:
    """Rows whose `field` (a name column, or one across a relation: "customer__name") holds `term`,
    folded on both sides; runs of spaces in the term count as one. An empty term matches nothing
    here: callers decide what a blank search means."""
    folded = name_fold(" ".join(term.split()))
    if not folded:
        return Q(pk__in=[])
    return Q(Contains(name_folded(field), folded))
