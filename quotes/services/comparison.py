"""Quotes side by side: rows are coverages, columns are insurers, the cheapest marked.

An agent advises a customer with this, so it compares like with like: each adapter has already
mapped its insurer's coverage codes onto the platform's vocabulary (`integrations.answers.coverages`),
and a cover one insurer lists and another does not shows as "not covered" in that column,
never as a blank an agent might read as "included".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone

from integrations.answers.coverages import coverage_entry, coverage_sort_key
from quotes.models import InsurerQuote, QuoteRequest

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


@dataclass(frozen=True)
class Comparison:
    request: QuoteRequest
    columns: list[Column]
    rows: list[Row]

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
                entry = coverage_entry(entry.get("code"), entry.get("name"), entry.get("limit"))
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
    ]
    codes = sorted({code for found in covers.values() for code in found}, key=coverage_sort_key)
    rows = []
    for code in codes:
        entries = [covers[column.insurer_quote_id].get(code) for column in columns]
        name = next(entry["name"] for entry in entries if entry is not None)
        rows.append(Row(code, name, [NOT_COVERED if entry is None else entry.get("limit") for entry in entries]))
    return Comparison(request=request, columns=columns, rows=rows)


def installment_total(column: Column, count: int) -> str | None:
    """The whole premium paid in `count` parts at this insurer, or None if it does not offer it."""
    return next((plan["total"] for plan in column.installments if plan.get("count") == count), None)
