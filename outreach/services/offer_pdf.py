"""The offer as a PDF the customer keeps: the agency's letterhead, the agent, each insurer's
premium and main covers, how long the offers hold, the vehicle or the DASK address.

Drawn with the comparison PDF's machinery (`quotes.services.comparison_pdf`: ReportLab, DejaVu
Sans for ğ ş İ, every text escaped and cut by `pdf_text`), on a portrait A4 page that reads
as a letter. Times are Türkiye's (Europe/Istanbul) whatever zone the server or the request runs
in: the customer reads the validity on their own clock.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.utils import timezone
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from outreach.models import AgencyContact
from quotes.models import QuoteRequest
from quotes.services.comparison import NOT_COVERED, Comparison, comparison_build
from quotes.services.comparison_pdf import FONT, FONT_BOLD, fonts_register, pdf_text
from quotes.services.policies import plate_display
from quotes.templatetags.desk import product_label, try_money

TURKIYE = ZoneInfo("Europe/Istanbul")
PAGE = A4
MARGIN = 15 * mm
# Insurer, premium, main covers, validity: the covers column takes what is left.
COLUMN_WIDTHS = (42 * mm, 30 * mm, PAGE[0] - 2 * MARGIN - 42 * mm - 30 * mm - 34 * mm, 34 * mm)
# The covers a customer compares first; the full list is the comparison's.
KEY_COVERS = 5
# A cover's name and limit past this many characters is cut with "…".
COVER_LIMIT = 140


@dataclass(frozen=True)
class OfferPdf:
    content: bytes
    filename: str


def turkiye_time(value: datetime | None) -> str:
    return value.astimezone(TURKIYE).strftime("%d.%m.%Y %H:%M") if value else "—"


def offer_filename(quote_request: QuoteRequest, *, now: datetime | None = None) -> str:
    """ "teklif-trafik-20261202.pdf": the day in Türkiye it was made (not the server's UTC day)."""
    day = (now or timezone.now()).astimezone(TURKIYE)
    return f"teklif-{quote_request.product}-{day:%Y%m%d}.pdf"


def dask_address(comparison: Comparison) -> str:
    """The address the insurers confirmed for the UAVT code (stored with each DASK quote)."""
    for row in comparison.request.insurer_quotes.all():
        address = (row.details or {}).get("address")
        if address:
            return " ".join(str(address).split())
    return ""


def _key_covers(comparison: Comparison, index: int) -> str:
    """The column's first covers, one line each (each cut on its own: one long name never
    hides the others), as Paragraph markup of escaped text."""
    lines = []
    for row in comparison.rows:
        cell = row.cells[index]
        if cell is NOT_COVERED:
            continue
        lines.append(pdf_text(f"{row.name}: {'Limitsiz' if cell is None else try_money(cell)}", limit=COVER_LIMIT))
        if len(lines) == KEY_COVERS:
            break
    return "<br/>".join(lines) or "—"


def agent_name(user: object) -> str:
    full = (getattr(user, "get_full_name", lambda: "")() or "").strip()
    return full or getattr(user, "get_username", lambda: "")()


def offer_pdf(
    *, quote_request: QuoteRequest, contact: AgencyContact, agent: object, now: datetime | None = None
) -> OfferPdf:
    """The offer for `quote_request`'s quotes still standing, from `agent` of the agency."""
    fonts_register()
    now = now or timezone.now()
    comparison = comparison_build(request=quote_request)
    text = ParagraphStyle("text", fontName=FONT, fontSize=9.5, leading=13)
    small = ParagraphStyle("small", parent=text, fontSize=8, leading=10.5, textColor=colors.HexColor("#5f6b7a"))
    letterhead = ParagraphStyle("letterhead", fontName=FONT_BOLD, fontSize=16, leading=20)
    title = ParagraphStyle("title", fontName=FONT_BOLD, fontSize=13, leading=17, spaceBefore=6, spaceAfter=4)
    head = ParagraphStyle("head", fontName=FONT_BOLD, fontSize=9, leading=11)
    head_right = ParagraphStyle("head_right", parent=head, alignment=TA_RIGHT)
    cell = ParagraphStyle("cell", fontName=FONT, fontSize=8.5, leading=11)
    cell_right = ParagraphStyle("cell_right", parent=cell, alignment=TA_RIGHT)
    premium = ParagraphStyle("premium", parent=head_right, fontSize=9.5, leading=12)

    agency = quote_request.agency
    contact_line = " · ".join(part for part in (contact.phone, contact.email) if part)
    story: list = [Paragraph(pdf_text(agency.name, limit=200), letterhead)]
    if contact_line:
        story.append(Paragraph(pdf_text(contact_line), text))
    if contact.address:
        story.append(Paragraph(pdf_text(contact.address), small))
    story.append(Paragraph(pdf_text(f"{product_label(quote_request.product)} sigorta teklifi"), title))

    facts = []
    if quote_request.customer is not None:
        facts.append(("Sayın", quote_request.customer.name))
    if quote_request.plate:
        facts.append(("Plaka", plate_display(quote_request.plate)))
    if quote_request.product == "dask":
        address = dask_address(comparison)
        uavt = (quote_request.input_data or {}).get("uavt_code") or ""
        facts.append(("Adres", address or f"UAVT {uavt}"))
        if uavt and address:
            facts.append(("UAVT adres kodu", uavt))
    facts.append(("Teklif tarihi", turkiye_time(now)))
    facts.append(("Hazırlayan", agent_name(agent)))
    for label, value in facts:
        story.append(Paragraph(pdf_text(f"{label}: {value}"), text))
    story.append(Spacer(1, 5 * mm))

    columns = [column for column in comparison.columns if not column.expired]
    if columns:
        body = [
            [
                Paragraph("Sigorta şirketi", head),
                Paragraph("Prim (peşin)", head_right),
                Paragraph("Başlıca teminatlar", head),
                Paragraph("Geçerlilik", head_right),
            ]
        ]
        index_of = {column.insurer_quote_id: i for i, column in enumerate(comparison.columns)}
        for column in columns:
            body.append(
                [
                    Paragraph(pdf_text(column.insurer_name, limit=120), cell),
                    Paragraph(pdf_text(try_money(column.premium)), premium),
                    Paragraph(_key_covers(comparison, index_of[column.insurer_quote_id]), cell),
                    Paragraph(pdf_text(turkiye_time(column.valid_until)), cell_right),
                ]
            )
        table = Table(body, colWidths=COLUMN_WIDTHS, repeatRows=1, splitInRow=1)
        # ReportLab's stubs type each command's tuple narrowly; the commands are the comparison's.
        style: list[Any] = [
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.HexColor("#dde3ea")),
            ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eef2f6")),
        ]
        if columns[0].cheapest:
            style.append(("BACKGROUND", (0, 1), (-1, 1), colors.HexColor("#e8f5ec")))
        table.setStyle(TableStyle(style))
        story.append(table)
        valid = [column.valid_until for column in columns if column.valid_until]
        if valid:
            story.append(Spacer(1, 3 * mm))
            story.append(
                Paragraph(pdf_text(f"Teklifler en erken {turkiye_time(min(valid))} tarihine kadar geçerlidir."), text)
            )
    else:
        story.append(Paragraph("Bu talep için geçerliliği süren teklif kalmadı.", text))
    story.append(Spacer(1, 4 * mm))
    story.append(
        Paragraph(
            "Teklifler geçerlilik süreleri içinde ve sigorta şirketlerinin poliçe genel şartlarına göre geçerlidir. "
            "Poliçe, ödeme ve bilgilerin doğrulanmasının ardından düzenlenir.",
            small,
        )
    )

    out = io.BytesIO()
    SimpleDocTemplate(
        out,
        pagesize=PAGE,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=15 * mm,
        bottomMargin=15 * mm,
        title=f"{product_label(quote_request.product)} sigorta teklifi",
        author=agency.name,
        invariant=True,
    ).build(story)
    return OfferPdf(content=out.getvalue(), filename=offer_filename(quote_request, now=now))
