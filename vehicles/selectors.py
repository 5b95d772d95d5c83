"""Reading the current kasko value list: the desk's picker and the check of a quote's codes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Q, QuerySet

from customers.name_search import name_fold
from vehicles.models import KaskoValue, KaskoValueList

# Every brand TSB lists fits (about 120); a brand's types are many more for some (hundreds for
# the large makers): past the limit the agent is asked to type more of the name.
BRAND_LIMIT = 200
TYPE_LIMIT = 100


@dataclass(frozen=True)
class Found:
    """A code and its name in the list (a brand, or a type of one brand)."""

    code: str
    name: str


@dataclass(frozen=True)
class YearValue:
    year: int
    value: Decimal


def kasko_value_list_current() -> KaskoValueList | None:
    """The edition for the latest month: what the insurers price this month's kasko on."""
    return KaskoValueList.objects.order_by("-month").first()


def kasko_value_list_for(*, month: date) -> KaskoValueList | None:
    return KaskoValueList.objects.filter(month=month).first()


def _matching(values: QuerySet[KaskoValue], query: str, *, code: str, key: str) -> QuerySet[KaskoValue]:
    """Rows whose folded name holds every word typed; a word of digits may also start the code."""
    for word in name_fold(query).split()[:8]:
        words = Q(**{f"{key}__contains": word})
        if word.isascii() and word.isdigit():
            words |= Q(**{f"{code}__startswith": word})
        values = values.filter(words)
    return values


def vehicle_brand_search(*, edition: KaskoValueList, query: str = "", limit: int = BRAND_LIMIT) -> list[Found]:
    """Brands matching what the agent typed, Turkish-insensitively ("fıat", "FİAT", "fiat" all
    find FIAT), by name. Up to `limit` + 1: one more than `limit` means "type more"."""
    values = _matching(KaskoValue.objects.filter(edition=edition), query, code="brand_code", key="brand_key")
    rows = values.values_list("brand_code", "brand_name").distinct().order_by("brand_name", "brand_code")
    return [Found(code, name) for code, name in rows[: limit + 1]]


def vehicle_type_search(
    *, edition: KaskoValueList, brand_code: str, query: str = "", limit: int = TYPE_LIMIT
) -> list[Found]:
    """One brand's types matching what the agent typed ("egea 1.4"), by name; up to `limit` + 1."""
    values = KaskoValue.objects.filter(edition=edition, brand_code=brand_code)
    values = _matching(values, query, code="type_code", key="type_key")
    rows = values.values_list("type_code", "type_name").distinct().order_by("type_name", "type_code")
    return [Found(code, name) for code, name in rows[: limit + 1]]


def vehicle_year_values(*, edition: KaskoValueList, brand_code: str, type_code: str) -> list[YearValue]:
    """The type's value for each model year the list has, newest first."""
    rows = (
        KaskoValue.objects.filter(edition=edition, brand_code=brand_code, type_code=type_code)
        .order_by("-model_year")
        .values_list("model_year", "value")
    )
    return [YearValue(year, value) for year, value in rows]


def vehicle_code_errors(*, brand_code: str | None, model_code: str | None, model_year: int | None) -> dict[str, str]:
    """Codes the insurers would not know, by field, in Turkish: a brand not in the current list,
    a type the brand does not have, a model year the type has no value for.

    Each is judged only once the fields it depends on are known good (None: missing, or
    malformed and already reported). With no list loaded at all, nothing is reported: the
    codes then go to the insurers checked for their form only (docs/vehicles.md).
    """
    edition = kasko_value_list_current()
    if edition is None or not brand_code:
        return {}
    values = KaskoValue.objects.filter(edition=edition)
    brand = values.filter(brand_code=brand_code).values_list("brand_name", flat=True).first()
    if brand is None:
        return {"brand_code": f"Marka kodu {brand_code} kasko değer listesinde ({edition.label}) yok."}
    if not model_code:
        return {}
    vehicle_type = (
        values.filter(brand_code=brand_code, type_code=model_code).values_list("type_name", flat=True).first()
    )
    if vehicle_type is None:
        return {"model_code": f"Tip kodu {model_code}, {brand} markasında yok (kasko değer listesi, {edition.label})."}
    if model_year is None:
        return {}
    years = sorted(values.filter(brand_code=brand_code, type_code=model_code).values_list("model_year", flat=True))
    if model_year not in years:
        return {
            "model_year": (
                f"{brand} {vehicle_type} için {model_year} model yılının kasko değeri listede yok "
                f"(listede {years[0]}–{years[-1]} arası var)."
            )
        }
    return {}
