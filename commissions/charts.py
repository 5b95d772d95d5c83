"""Bar charts drawn on the server as inline SVG: no script, no CDN, nothing the strict CSP refuses
(colours come from classes in `static/insurehub/desk.css`, never a style attribute).

Every label is escaped by `format_html`; the numbers are the report's own, printed the Turkish
way, so a chart can be read without hovering.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from insurehub.money import turkish_amount

BAR_HEIGHT = 22
BAR_GAP = 8
LABEL_WIDTH = 140
CHART_WIDTH = 460
COLUMN_WIDTH = 46
COLUMN_AREA_HEIGHT = 180


def _share(value: Decimal, largest: Decimal, room: float) -> float:
    if largest <= 0 or value <= 0:
        return 0.0
    return round(float(value / largest) * room, 1)


def _cut(label: str, length: int = 20) -> str:
    return label if len(label) <= length else label[: length - 1] + "…"


def horizontal_bars_svg(*, title: str, items: Sequence[tuple[str, Decimal]]) -> SafeString:
    """One bar per item, longest for the largest amount, the amount written after each bar."""
    largest = max((value for _, value in items), default=Decimal(0))
    room = CHART_WIDTH - LABEL_WIDTH - 100  # the amount is written after the longest bar
    height = max(len(items), 1) * (BAR_HEIGHT + BAR_GAP) + BAR_GAP
    bars = format_html_join(
        "",
        '<g class="chart-row"><text class="chart-label" x="{}" y="{}" text-anchor="end">{}</text>'
        '<rect class="chart-bar" x="{}" y="{}" width="{}" height="{}"><title>{}: {} ₺</title></rect>'
        '<text class="chart-value" x="{}" y="{}">{} ₺</text></g>',
        (
            (
                LABEL_WIDTH - 8,
                BAR_GAP + index * (BAR_HEIGHT + BAR_GAP) + 15,
                _cut(label),
                LABEL_WIDTH,
                BAR_GAP + index * (BAR_HEIGHT + BAR_GAP),
                _share(value, largest, room),
                BAR_HEIGHT,
                label,
                turkish_amount(value),
                LABEL_WIDTH + _share(value, largest, room) + 6,
                BAR_GAP + index * (BAR_HEIGHT + BAR_GAP) + 15,
                turkish_amount(value),
            )
            for index, (label, value) in enumerate(items)
        ),
    )
    return format_html(
        '<svg class="chart" role="img" aria-label="{}" viewBox="0 0 {} {}" width="{}" height="{}" '
        'xmlns="http://www.w3.org/2000/svg">{}</svg>',
        title,
        CHART_WIDTH,
        height,
        CHART_WIDTH,
        height,
        bars,
    )


def columns_svg(*, title: str, items: Sequence[tuple[str, Decimal]]) -> SafeString:
    """One column per item (months, in order), the amount above each and the label below."""
    largest = max((value for _, value in items), default=Decimal(0))
    step = COLUMN_WIDTH + 18
    width = max(len(items), 1) * step + 20
    base = 24 + COLUMN_AREA_HEIGHT  # the axis; amounts are written in the 24 px above the tallest
    columns = format_html_join(
        "",
        '<g class="chart-column"><rect class="chart-bar" x="{}" y="{}" width="{}" height="{}">'
        "<title>{}: {} ₺</title></rect>"
        '<text class="chart-value" x="{}" y="{}" text-anchor="middle">{}</text>'
        '<text class="chart-label" x="{}" y="{}" text-anchor="middle">{}</text></g>',
        (
            (
                20 + index * step,
                base - _share(value, largest, COLUMN_AREA_HEIGHT),
                COLUMN_WIDTH,
                _share(value, largest, COLUMN_AREA_HEIGHT),
                label,
                turkish_amount(value),
                20 + index * step + COLUMN_WIDTH / 2,
                base - _share(value, largest, COLUMN_AREA_HEIGHT) - 6,
                _short_amount(value),
                20 + index * step + COLUMN_WIDTH / 2,
                base + 18,
                _cut(label, 10),
            )
            for index, (label, value) in enumerate(items)
        ),
    )
    height = base + 30
    return format_html(
        '<svg class="chart" role="img" aria-label="{}" viewBox="0 0 {} {}" width="{}" height="{}" '
        'xmlns="http://www.w3.org/2000/svg"><line class="chart-axis" x1="10" y1="{}" x2="{}" y2="{}"/>{}</svg>',
        title,
        width,
        height,
        width,
        height,
        base,
        width - 10,
        base,
        columns,
    )


def _short_amount(value: Decimal) -> str:
    """A column's caption: whole lira, thousands as "12,5 bin", so it fits above the column."""
    if value >= 1000:
        return f"{(value / 1000).quantize(Decimal('0.1'))} bin".replace(".", ",")
    return turkish_amount(value).split(",")[0]
