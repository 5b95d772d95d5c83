"""The comparison as a PDF the agent sends the customer.

ReportLab (BSD, maintained since 2000, pure Python with no system libraries to install) draws
it; its built-in fonts have no ğ, ş or İ, so DejaVu Sans (shipped in `quotes/fonts/`, Bitstream
Vera licence) is embedded: the customer's name and every coverage name print as written.
"""

from __future__ import annotations

import io
import threading
from datetime import datetime
from pathlib import Path

from django.utils import timezone
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from integrations.masking import mask_identity
from quotes.services.comparison import NOT_COVERED, Comparison, installment_total
from quotes.templatetags.desk import product_label, try_money

FONT_DIR = Path(__file__).resolve().parent.parent / "fonts"
FONT, FONT_BOLD = "DejaVuSans", "DejaVuSans-Bold"
_fonts_lock = threading.Lock()
_fonts_registered = False


def _register_fonts() -> None:
    global _fonts_registered
    with _fonts_lock:
        if not _fonts_registered:
            pdfmetrics.registerFont(TTFont(FONT, str(FONT_DIR / "DejaVuSans.ttf")))
            pdfmetrics.registerFont(TTFont(FONT_BOLD, str(FONT_DIR / "DejaVuSans-Bold.ttf")))
            _fonts_registered = True


def _cell_text(value: object) -> str:
    if value is NOT_COVERED:
        return "Yok"
    if value is None:
        return "Limitsiz"
    return try_money(value)


def _local_time(value: datetime | None) -> str:
    return timezone.localtime(value).strftime("%d.%m.%Y %H:%M") if value else "—"


def comparison_pdf(comparison: Comparison, *, agency_name: str) -> bytes:
    """One landscape A4 page per ~12 coverages; the cheapest column shaded."""
    _register_fonts()
    request = comparison.request
    text = ParagraphStyle("text", fontName=FONT, fontSize=9, leading=12)
    title = ParagraphStyle("title", fontName=FONT_BOLD, fontSize=15, leading=19, spaceAfter=4)
    small = ParagraphStyle("small", parent=text, fontSize=7.5, textColor=colors.HexColor("#5f6b7a"))

    header = ["Teminat"] + [
        column.insurer_name + ("\n(en uygun)" if column.cheapest else "") for column in comparison.columns
    ]
    body = [["Prim (peşin)"] + [try_money(column.premium) for column in comparison.columns]]
    for count in comparison.installment_counts:
        if count == 1:
            continue
        body.append(
            [f"{count} taksit (toplam)"]
            + [try_money(installment_total(column, count) or "") or "—" for column in comparison.columns]
        )
    body += [[row.name] + [_cell_text(cell) for cell in row.cells] for row in comparison.rows]
    body.append(
        ["Geçerlilik"]
        + [
            timezone.localtime(column.valid_until).strftime("%d.%m.%Y %H:%M") if column.valid_until else "—"
            for column in comparison.columns
        ]
    )
    body.append(["Teklif no"] + [column.quote_no for column in comparison.columns])

    data = [header, *body]
    label_width = 62 * mm
    column_width = (landscape(A4)[0] - 30 * mm - label_width) / max(len(comparison.columns), 1)
    table = Table(data, colWidths=[label_width] + [column_width] * len(comparison.columns), repeatRows=1)
    style = [
        ("FONT", (0, 0), (-1, -1), FONT, 8.5),
        ("FONT", (0, 0), (-1, 0), FONT_BOLD, 9),
        ("FONT", (0, 1), (-1, 1), FONT_BOLD, 9.5),
        ("ALIGN", (1, 1), (-1, -1), "RIGHT"),
        ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
        ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.HexColor("#dde3ea")),
        ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eef2f6")),
    ]
    for index, column in enumerate(comparison.columns, start=1):
        if column.cheapest:
            style.append(("BACKGROUND", (index, 1), (index, -1), colors.HexColor("#e8f5ec")))
    table.setStyle(TableStyle(style))

    facts = [f"Ürün: {product_label(request.product)}"]
    if request.plate:
        facts.append(f"Plaka: {request.plate}")
    if request.customer_id:
        facts.append(f"Müşteri: {request.customer.name}")
    facts.append(f"Kimlik: {mask_identity(request.owner_id)}")
    facts.append(f"Tarih: {timezone.localtime(request.created_at):%d.%m.%Y %H:%M}")

    out = io.BytesIO()
    document = SimpleDocTemplate(
        out,
        pagesize=landscape(A4),
        leftMargin=15 * mm,
        rightMargin=15 * mm,
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
            Paragraph(f"{product_label(request.product)} teklif karşılaştırması", title),
            Paragraph(" · ".join(facts), text),
            Paragraph(agency_name, small),
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
