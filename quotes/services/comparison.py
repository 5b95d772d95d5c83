"""Quotes side by side: rows are coverages, columns are insurers, the cheapest marked.

An agent advises a customer with this, so it compares like with like: each adapter has already
mapped its insurer's coverage codes onto the platform's vocabulary (`integrations.answers.coverages`),
and a cover one insurer lists and another does not shows as "not covered" in that column,
never as a blank an agent might read as "included".

A kasko's options (muafiyet, ikame araç, İMM, servis) are rows of their own, each cell what that
insurer's answer says its price includes (the deductible, the car's days and the İMM limit it
lists among its covers), beside what the request asked: an insurer that priced something else
than asked shows it, never the request's wish in its place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone

from insurehub.money import turkish_amount
from integrations.answers.coverages import coverage_entry, coverage_sort_key
from integrations.operations import KASKO_OPTION_FIELDS
from quotes.models import InsurerQuote, QuoteRequest
from quotes.validation import REPAIR_SHOP_LABELS_TR, option_given

# A cell whose insurer does not list the cover at all (a limit of None means "unlimited").
NOT_COVERED = object()


@dataclass(frozen=True)
class Column:
    insurer_quote_id: int
    insurer_code: str
    insurer_name: str
    quote_no: str
    premium: Decimal
    valid_until: datetime | None
    installments: list[dict[str, Any]]
    cheapest: bool = False

    @property
    def expired(self) -> bool:
        return self.valid_until is not None and self.valid_until <= timezone.now()


@dataclass(frozen=True)
class Row:
    code: str
    name: str
    # One per column, in column order: a limit (decimal string), None (unlimited) or NOT_COVERED.
    cells: list[Any] = field(default_factory=list)


# The cover each option is priced as (`integrations.answers.coverages`); the repair shop is no
# cover: an answer never lists it, and an insurer that does not sell the one asked refuses.
OPTION_COVER_CODES = {
    "deductible": "deductible",
    "replacement_car_days": "replacement_car",
    "liability_limit": "liability",
}
OPTION_NAMES_TR = {
    "deductible": "Muafiyet",
    "replacement_car_days": "İkame araç",
    "liability_limit": "İMM limiti",
    "repair_shop": "Servis",
}
NOT_LISTED_TEXT = "Belirtilmedi"
STANDARD_TEXT = "Şirketin standardı"


@dataclass(frozen=True)
class OptionCell:
    """What one insurer's price includes of an option: `listed` False when its answer does not
    say; `value` in the platform's terms (a TRY decimal string, days, a repair shop word, None
    for an unlimited İMM); `text` as the agent reads it."""

    listed: bool
    value: Any
    text: str


@dataclass(frozen=True)
class OptionRow:
    code: str  # the option's field name in the request's input
    name: str
    asked: str  # what the request asked, in words ("Şirketin standardı" when nothing)
    cells: list[OptionCell] = field(default_factory=list)


@dataclass(frozen=True)
class Comparison:
    request: QuoteRequest
    columns: list[Column]
    rows: list[Row]
    options: list[OptionRow] = field(default_factory=list)

    @property
    def installment_counts(self) -> list[int]:
        return sorted({plan["count"] for column in self.columns for plan in column.installments})


def _coverages_of(quote: InsurerQuote) -> dict[str, dict[str, Any]]:
    """The quote's coverages by platform code. Rows stored before coverages were read carry
    bare codes; they are read through the same vocabulary."""
    found: dict[str, dict[str, Any]] = {}
    for entry in (quote.details or {}).get("coverages") or []:
        try:
            if isinstance(entry, str):
                entry = coverage_entry(entry)
            elif isinstance(entry, dict):
                entry = coverage_entry(entry.get("code"), entry.get("name"), entry.get("limit"), days=entry.get("days"))
            else:
                continue
        except (ValueError, ArithmeticError):
            continue
        found.setdefault(entry["code"], entry)
    sum_insured = (quote.details or {}).get("sum_insured")
    if sum_insured and "earthquake" not in found and quote.request.product == "dask":
        found["earthquake"] = coverage_entry("earthquake", limit=sum_insured)
    return found


def comparison_build(*, request: QuoteRequest) -> Comparison:
    """Every insurer that quoted, cheapest first; the cheapest still valid quote is marked."""
    quotes = sorted(
        request.insurer_quotes.filter(state=InsurerQuote.State.SUCCEEDED, premium__isnull=False).select_related(
            "insurer", "request"
        ),
        key=lambda quote: (quote.premium, quote.insurer.name),
    )
    now = timezone.now()
    valid = [quote for quote in quotes if quote.valid_until is None or quote.valid_until > now]
    cheapest_id = valid[0].pk if valid else None
    covers = {quote.pk: _coverages_of(quote) for quote in quotes}
    columns = [
        Column(
            insurer_quote_id=quote.pk,
            insurer_code=quote.insurer.code,
            insurer_name=quote.insurer.name,
            quote_no=quote.quote_no,
            premium=quote.premium,
            valid_until=quote.valid_until,
            installments=[plan for plan in (quote.details or {}).get("installments") or [] if isinstance(plan, dict)],
            cheapest=quote.pk == cheapest_id,
        )
        for quote in quotes
        if quote.premium is not None  # every one: the query asks for a premium
    ]
    options = _option_rows(request, [covers[column.insurer_quote_id] for column in columns])
    # A kasko's options are read as options, not as limits (a car's days are no lira amount).
    shown_as_options = set(OPTION_COVER_CODES.values()) if request.product == "kasko" else set()
    codes = sorted(
        {code for found in covers.values() for code in found if code not in shown_as_options}, key=coverage_sort_key
    )
    rows = []
    for code in codes:
        entries = [covers[column.insurer_quote_id].get(code) for column in columns]
        name = next(entry["name"] for entry in entries if entry is not None)
        rows.append(Row(code, name, [NOT_COVERED if entry is None else entry.get("limit") for entry in entries]))
    return Comparison(request=request, columns=columns, rows=rows, options=options)


def _lira(value: Any) -> str:
    """As the desk's `try_money` writes it (that tag module reads this one: no import back)."""
    return f"{turkish_amount(value)} ₺"


def option_value_text(name: str, value: Any) -> str:
    """An option's value as the agent reads it: "5.000,00 ₺", "Muafiyetsiz", "7 gün", "Sınırsız"."""
    if name == "deductible":
        return "Muafiyetsiz" if value in (None, 0) or str(value) in ("0", "0.00") else _lira(value)
    if name == "replacement_car_days":
        return "İkame araç yok" if value in (0, None) else f"{value} gün"
    if name == "liability_limit":
        return "Sınırsız" if value is None else _lira(value)
    if name == "repair_shop":
        return REPAIR_SHOP_LABELS_TR.get(str(value), str(value))
    raise ValueError(f"not a kasko option: {name!r}")


def _option_cell(name: str, asked: dict[str, Any], found: dict[str, dict[str, Any]]) -> OptionCell:
    if name == "repair_shop":
        # The answer does not say; a quote priced at all was priced for the shop asked (one that
        # does not sell it refuses instead).
        if "repair_shop" not in asked:
            return OptionCell(False, None, STANDARD_TEXT)
        return OptionCell(True, asked["repair_shop"], option_value_text(name, asked["repair_shop"]))
    entry = found.get(OPTION_COVER_CODES[name])
    if entry is None:
        return OptionCell(False, None, NOT_LISTED_TEXT)
    if name == "replacement_car_days":
        days = entry.get("days")
        return OptionCell(True, days, "Var (gün belirtilmedi)" if days is None else option_value_text(name, days))
    return OptionCell(True, entry.get("limit"), option_value_text(name, entry.get("limit")))


def _option_rows(request: QuoteRequest, covers: list[dict[str, dict[str, Any]]]) -> list[OptionRow]:
    """A kasko's four options, one row each that the request asked for or some insurer listed."""
    if request.product != "kasko":
        return []
    data = request.input_data or {}
    asked = {name: data[name] for name in KASKO_OPTION_FIELDS if option_given(data, name)}
    rows = []
    for name in KASKO_OPTION_FIELDS:
        cells = [_option_cell(name, asked, found) for found in covers]
        if name not in asked and not any(cell.listed for cell in cells):
            continue
        wish = option_value_text(name, asked[name]) if name in asked else STANDARD_TEXT
        rows.append(OptionRow(code=name, name=OPTION_NAMES_TR[name], asked=wish, cells=cells))
    return rows


def installment_total(column: Column, count: int) -> str | None:
    """The whole premium paid in `count` parts at this insurer, or None if it does not offer it."""
    return next((plan["total"] for plan in column.installments if plan.get("count") == count), None)
