"""Raw insurer code -> error kind: admin overrides first, then the adapter's own table.

Admins fix a misclassified or new code in the database without a deploy; the override is read
through a short cache so every worker picks it up within seconds.
"""

from __future__ import annotations

from collections.abc import Mapping

from integrations.answers.taxonomy import ErrorKind
from integrations.ttlcache import TtlCache

MAPPING_CACHE_SECONDS = 5.0

_cache: TtlCache[str, dict[str, ErrorKind]] = TtlCache(MAPPING_CACHE_SECONDS)


def lookup_table(table: Mapping[str, ErrorKind], code: str) -> ErrorKind | None:
    """Exact match first, then the longest `PREFIX*` pattern (Çınar's `VAL_*`)."""
    if code in table:
        return table[code]
    best: tuple[int, ErrorKind] | None = None
    for pattern, kind in table.items():
        if pattern.endswith("*") and code.startswith(pattern[:-1]):
            if best is None or len(pattern) > best[0]:
                best = (len(pattern), kind)
    return best[1] if best else None


def admin_mappings(insurer_code: str) -> dict[str, ErrorKind]:
    return _cache.get(insurer_code, lambda: _load_mappings(insurer_code))


def _load_mappings(insurer_code: str) -> dict[str, ErrorKind]:
    from integrations.models import ErrorMapping

    rows = ErrorMapping.objects.filter(insurer__code=insurer_code).values_list("provider_code", "kind")
    return {code: ErrorKind(kind) for code, kind in rows}


def clear_mapping_cache() -> None:
    _cache.clear()


def classify(
    insurer_code: str, code: str, *, table: Mapping[str, ErrorKind], fallback: ErrorKind | None = None
) -> ErrorKind:
    """The kind for one raw code; `fallback` is the adapter's reading of a code-less answer."""
    return admin_mappings(insurer_code).get(code) or lookup_table(table, code) or fallback or ErrorKind.UNCLASSIFIED
