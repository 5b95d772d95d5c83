"""The comparison as a PDF the agent sends the customer.

ReportLab (BSD, maintained since 2000, pure Python with no system libraries to install) draws
it; its built-in fonts have no ğ, ş or İ, so DejaVu Sans (shipped in `quotes/fonts/`, Bitstream
Vera licence) is embedded: the customer's name and every coverage name print as written.
"""

from __future__ import annotations

import io
import re
import threading
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from xml.sax.saxutils import escape

from django.utils import timezone
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from insurehub.masking import mask_identity
from quotes.services.comparison import NOT_COVERED, Comparison, installment_total
from quotes.templatetags.desk import product_label, try_money

FONT_DIR = Path(__file__).resolve().parent.parent / "fonts"
FONT, FONT_BOLD = "DejaVuSans", "DejaVuSans-Bold"
_fonts_lock = threading.Lock()
_fonts_registered = False


def fonts_register() -> None:
    """DejaVu Sans under FONT and FONT_BOLD, once per process: every PDF of the desk prints in it."""
    global _fonts_registered
    with _fonts_lock:
        if not _fonts_registered:
            pdfmetrics.registerFont(TTFont(FONT, str(FONT_DIR / "DejaVuSans.ttf")))
            pdfmetrics.registerFont(TTFont(FONT_BOLD, str(FONT_DIR / "DejaVuSans-Bold.ttf")))
            _fonts_registered = True


# Longer than this, a name is cut with "…": an insurer's answer decides what a cover is called, and
# a name a page long helps no customer (a row taller than a page still goes on over the next one).
TEXT_LIMIT = 300
# The header row repeats on every page, so it must fit on one: an insurer's name is cut at the
# length the admin allows for it (Insurer.name).
HEADER_LIMIT = 120
# C0 controls but tab and newline (so a CR of a CRLF too), DEL, C1 controls: nothing a person
# reads, and ReportLab's parser chokes on some.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

PAGE = landscape(A4)
MARGIN = 15 * mm
LABEL_WIDTH = 62 * mm


def column_edges(count: int) -> list[float]:
    """The table's vertical edges in points from the page's left, label column first: the cells
    each text must stay inside (tests read the drawn PDF against these)."""
    width = (PAGE[0] - 2 * MARGIN - LABEL_WIDTH) / max(count, 1)
    return [MARGIN, MARGIN + LABEL_WIDTH, *(MARGIN + LABEL_WIDTH + width * i for i in range(1, count + 1))]


def pdf_text(value: object, *, limit: int = TEXT_LIMIT) -> str:
    """Any value as text a Paragraph prints as written.

    A Paragraph reads its text as markup: `<b>`, `<font size=40>`, `<img src=…>` (which opens a
    file on the server) and `&` entities. Names come from agents and from insurers' answers, so
    they are data, never markup: escaped, control characters dropped, line breaks kept, cut at
    `limit` characters.
    """
    text = _CONTROL.sub("", "" if value is None else str(value)).replace("\t", " ")
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return escape(text).replace("\n", "<br/>")


def _cell_text(value: object) -> str:
    if value is NOT_COVERED:
        return "Yok"
    if value is None:
        return "Limitsiz"
    return try_money(value)


def _local_time(value: datetime | None) -> str:
    return timezone.localtime(value).strftime("%d.%m.%Y %H:%M") if value else "—"


def comparison_pdf(comparison: Comparison, *, agency_name: str) -> bytes:
    """One landscape A4 page per ~12 coverages; the cheapest column shaded.

    Every cell is a Paragraph of escaped text: it wraps inside its column (a word longer than the
    column is split), so a long insurer or cover name makes its row taller, never wider.
    """
    fonts_register()
    request = comparison.request
    columns = comparison.columns
    text = ParagraphStyle("text", fontName=FONT, fontSize=9, leading=12)
    title = ParagraphStyle("title", fontName=FONT_BOLD, fontSize=15, leading=19, spaceAfter=4)
    small = ParagraphStyle("small", parent=text, fontSize=7.5, textColor=colors.HexColor("#5f6b7a"))
    label = ParagraphStyle("label", fontName=FONT, fontSize=8.5, leading=10.5)
    value = ParagraphStyle("value", parent=label, alignment=TA_RIGHT)
    head = ParagraphStyle("head", fontName=FONT_BOLD, fontSize=9, leading=11)
    head_value = ParagraphStyle("head_value", parent=head, alignment=TA_RIGHT)
    premium = ParagraphStyle("premium", parent=head_value, fontSize=9.5, leading=11.5)

    def row(name: str, cells: list[object], *, name_style=label, cell_style=value) -> list[Paragraph]:
        return [Paragraph(pdf_text(name), name_style), *(Paragraph(pdf_text(cell), cell_style) for cell in cells)]

    header = [Paragraph("Teminat", head)] + [
        Paragraph(
            pdf_text(column.insurer_name, limit=HEADER_LIMIT) + ("<br/>(en uygun)" if column.cheapest else ""),
            head_value,
        )
        for column in columns
    ]
    body = [row("Prim (peşin)", [try_money(column.premium) for column in columns], name_style=head, cell_style=premium)]
    for count in comparison.installment_counts:
        if count == 1:
            continue
        body.append(
            row(
                f"{count} taksit (toplam)",
                [try_money(installment_total(column, count) or "") or "—" for column in columns],
            )
        )
    body += [
        row(f"{option.name} (istenen: {option.asked})", [cell.text for cell in option.cells])
        for option in comparison.options
    ]
    body += [row(coverage.name, [_cell_text(cell) for cell in coverage.cells]) for coverage in comparison.rows]
    body.append(row("Geçerlilik", [_local_time(column.valid_until) for column in columns]))
    body.append(row("Teklif no", [column.quote_no for column in columns]))

    edges = column_edges(len(columns))
    widths = [right - left for left, right in pairwise(edges)]
    # splitInRow: a row taller than what is left of the page goes on over the next one instead of
    # stopping the PDF; the header row repeats on each page.
    table = Table([header, *body], colWidths=widths, repeatRows=1, splitInRow=1)
    style = TableStyle(
        [
            ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
            ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.HexColor("#dde3ea")),
            ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eef2f6")),
        ]
    )
    for index, column in enumerate(columns, start=1):
        if column.cheapest:
            style.add("BACKGROUND", (index, 1), (index, -1), colors.HexColor("#e8f5ec"))
    table.setStyle(style)

    facts = [f"Ürün: {product_label(request.product)}"]
    if request.plate:
        facts.append(f"Plaka: {request.plate}")
    if request.customer is not None:
        facts.append(f"Müşteri: {request.customer.name}")
    facts.append(f"Kimlik: {mask_identity(request.owner_id)}")
    facts.append(f"Tarih: {timezone.localtime(request.created_at):%d.%m.%Y %H:%M}")

    out = io.BytesIO()
    document = SimpleDocTemplate(
        out,
        pagesize=PAGE,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=12 * mm,
        bottomMargin=12 * mm,
        title=f"{product_label(request.product)} teklif karşılaştırması",
        author=agency_name,
        # A fixed creation date keeps the PDF the same bytes for the same quotes (ReportLab's
        # `invariant`): a customer who gets it twice gets the same file.
        invariant=True,
    )
    document.build(
        [
            Paragraph(pdf_text(f"{product_label(request.product)} teklif karşılaştırması"), title),
            Paragraph(" · ".join(pdf_text(fact) for fact in facts), text),
            Paragraph(pdf_text(agency_name), small),
            Spacer(1, 5 * mm),
            table,
            Spacer(1, 4 * mm),
            Paragraph(
                "Teklifler geçerlilik süreleri içinde ve şirketlerin poliçe genel şartlarına göre geçerlidir. "
                "“Yok”: şirket bu teminatı teklifinde belirtmedi; “Limitsiz”: teminat limiti yok ya da uygulanmaz.",
                small,
            ),
        ]
    )
    return out.getvalue()
