"""The comparison PDF as the customer sees it: names printed as written, never read as markup, and
every text inside its cell and the page however long the insurer's or the cover's name.

The check reads the drawn PDF back (pypdf's text positions, widths from the embedded font's
metrics) against the table's column edges, and renders the pages to PNG with poppler's pdftoppm
under test-artifacts/comparison-pdf/ for a person to look at; the page's outer margins, rendered,
must stay blank.
"""

from __future__ import annotations

import io
import shutil
import subprocess
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from pypdf import PdfReader
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics

from agencies.models import Agency
from customers.models import Customer
from integrations.models import Insurer
from quotes.models import InsurerQuote, QuoteRequest
from quotes.services.comparison import Column, Comparison, Row
from quotes.services.comparison_pdf import (
    FONT,
    FONT_BOLD,
    MARGIN,
    PAGE,
    TEXT_LIMIT,
    column_edges,
    comparison_pdf,
    pdf_text,
)
from tests import samples
from tests.conftest import ARTIFACTS_DIR, REPO_ROOT
from tests.quotes.test_comparison import quoted_request

pytestmark = pytest.mark.django_db

PDF_ARTIFACTS = Path(ARTIFACTS_DIR) / "comparison-pdf"
# A real image in the repository: were names read as markup, ReportLab would embed it.
REAL_IMAGE = REPO_ROOT / "bench" / "results" / "s1_rate_ceiling.png"

LONG_INSURER = "Anadolu Boğaziçi Karadeniz Marmara Ege Akdeniz Birleşik Sigorta ve Reasürans Anonim Şirketi"
LONG_COVER = "Kiralık araç, ikame araç, yol yardımı ve çekici hizmeti dahil genişletilmiş ek teminat paketi " * 2
UNBROKEN = "Ferdikazalarvefinansalkayıplarvehukuksalkorumaekteminatı" * 2
LONG_QUOTE_NO = "TKL-2026-" + "7" * 48


@dataclass(frozen=True)
class TextRun:
    """One line of text as drawn: where it starts and ends (points from the page's lower left)."""

    page: int
    text: str
    x0: float
    x1: float
    y: float
    size: float

    def box(self) -> tuple[float, float, float, float]:
        return self.x0, self.y - 0.2 * self.size, self.x1, self.y + 0.75 * self.size


def text_runs(pdf: bytes) -> list[TextRun]:
    runs: list[TextRun] = []
    for number, page in enumerate(PdfReader(io.BytesIO(pdf)).pages):

        def visit(text, cm, tm, font, size, number=number) -> None:
            text = text.rstrip("\n")
            if not text.strip():
                return
            x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            drawn = size * tm[0] * cm[0]
            name = FONT_BOLD if "Bold" in str(font.get("/BaseFont", "")) else FONT
            width = pdfmetrics.stringWidth(text, name, drawn)
            runs.append(TextRun(number, text, x, x + width, y, drawn))

        page.extract_text(visitor_text=visit)
    return runs


def pdftoppm() -> str:
    found = shutil.which("pdftoppm")
    if found is None:
        pytest.fail("pdftoppm is missing: run scripts/install-services.sh (Debian's poppler-utils)")
    return found


def render_png(pdf: bytes, name: str) -> list[Path]:
    """The pages as a person sees them, kept under test-artifacts/comparison-pdf/."""
    PDF_ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for stale in PDF_ARTIFACTS.glob(f"{name}*"):
        stale.unlink()
    source = PDF_ARTIFACTS / f"{name}.pdf"
    source.write_bytes(pdf)
    subprocess.run([pdftoppm(), "-png", "-r", "80", str(source), str(PDF_ARTIFACTS / name)], check=True, timeout=60)
    return sorted(PDF_ARTIFACTS.glob(f"{name}-*.png"))


def rendered_gray(pdf: bytes, *, dpi: int = 50) -> list[tuple[int, int, bytes]]:
    """Each page as (width, height, one byte per pixel), from pdftoppm's plain PGM output."""
    pages = []
    count = len(PdfReader(io.BytesIO(pdf)).pages)
    for number in range(1, count + 1):
        done = subprocess.run(
            [pdftoppm(), "-gray", "-r", str(dpi), "-f", str(number), "-l", str(number), "-"],
            input=pdf, capture_output=True, check=True, timeout=60,
        )  # fmt: skip
        magic, width, height, _, pixels = done.stdout.split(maxsplit=4)
        assert magic == b"P5"
        pages.append((int(width), int(height), pixels[: int(width) * int(height)]))
    return pages


def hostile_comparison(agents) -> QuoteRequest:
    """A kasko comparison whose every name an agent or an insurer could type is hostile or long."""
    request = quoted_request(agents["ACENTE1"], "kasko", samples.KASKO)
    Agency.objects.filter(pk=request.agency_id).update(name="<font size=40>Örnek</font> Acente")
    customer = Customer.objects.create(agency=request.agency, name="Yılmaz & Oğulları <Ltd>", identity_no="10000000146")
    QuoteRequest.objects.filter(pk=request.pk).update(customer=customer)
    quotes = list(request.insurer_quotes.filter(state=InsurerQuote.State.SUCCEEDED).order_by("premium"))
    Insurer.objects.filter(pk=quotes[0].insurer_id).update(name=LONG_INSURER)
    Insurer.objects.filter(pk=quotes[1].insurer_id).update(name="Ali <b>Veli")
    extra = [
        {"code": "x_image", "name": '<img src="/etc/hostname"> Cam', "limit": "1000"},
        {"code": "x_real_image", "name": f'<img src="{REAL_IMAGE}" width="300" height="300"/>Resim', "limit": "5"},
        {"code": "x_long", "name": LONG_COVER, "limit": "250000"},
        {"code": "x_unbroken", "name": UNBROKEN, "limit": None},
        {"code": "x_entity", "name": "Deprem &amp; sel &nbsp; &#60;script&#62;", "limit": "10"},
    ]
    details = dict(quotes[0].details)
    details["coverages"] = [*details.get("coverages", []), *extra]
    InsurerQuote.objects.filter(pk=quotes[0].pk).update(details=details, quote_no=LONG_QUOTE_NO)
    return request


def download(user, request: QuoteRequest):
    client = Client()
    client.force_login(user)
    return client.get(reverse("comparison_download", args=[request.public_id]))


def test_names_print_as_written_never_as_markup(agents, sandbox):
    """`&` and `<…>` print as typed, `Ali <b>Veli` is no 500, no image is opened, no text grows."""
    request = hostile_comparison(agents)
    response = download(agents["ACENTE1"], request)
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    reader = PdfReader(io.BytesIO(response.content))
    # Lines wrap inside their cells: compare with the whitespace evened out.
    text = " ".join("".join(page.extract_text() for page in reader.pages).split())
    for written in (
        "Yılmaz & Oğulları <Ltd>",
        "Ali <b>Veli",
        '<img src="/etc/hostname"> Cam',
        "<font size=40>Örnek</font> Acente",
        "Deprem &amp; sel &nbsp; &#60;script&#62;",
    ):
        assert written in text
    # No picture in the file: an <img> in a name opened nothing on the server.
    for page in reader.pages:
        assert "/XObject" not in page["/Resources"]
    # The agency's name in small print, like any other line: nothing above the title's 15 pt.
    runs = text_runs(response.content)
    assert max(run.size for run in runs) <= 15.01
    agency = next(run for run in runs if "Örnek" in run.text)
    assert agency.size == pytest.approx(7.5)


def test_long_names_stay_inside_their_cells_and_the_page(agents, sandbox):
    """Each line of the table lies inside its column; no two lines overlap; nothing is cut
    but a name past the limit; the rendered page keeps its margins blank."""
    request = hostile_comparison(agents)
    pdf = download(agents["ACENTE1"], request).content
    runs = text_runs(pdf)
    columns = request.insurer_quotes.filter(state=InsurerQuote.State.SUCCEEDED).count()
    edges = column_edges(columns)
    width, height = PAGE

    for run in runs:
        assert MARGIN - 0.5 <= run.x0 and run.x1 <= width - MARGIN + 0.5, run
        assert 0 < run.y < height, run
    table = [run for run in runs if run.y < next(r.y for r in runs if r.text == "Teminat") + 12 and run.page == 0]
    table += [run for run in runs if run.page > 0]
    table = [run for run in table if not run.text.startswith(("Teklifler geçerlilik", "“Yok”", "uygulanmaz"))]
    outside = []
    for run in table:
        cell = max(i for i, edge in enumerate(edges[:-1]) if edge <= run.x0 + 0.5)
        if run.x1 > edges[cell + 1] + 0.5:
            outside.append(run)
    assert outside == []
    for index, run in enumerate(runs):
        for other in runs[index + 1 :]:
            if run.page != other.page:
                continue
            a, b = run.box(), other.box()
            assert not (a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5), (
                run,
                other,
            )

    drawn = "".join("".join(run.text.split()) for run in runs)
    for name in (LONG_INSURER, UNBROKEN, LONG_QUOTE_NO, LONG_COVER[: TEXT_LIMIT - 1].rstrip()):
        assert "".join(name.split()) in drawn

    pngs = render_png(pdf, "hostile-names")
    assert pngs and all(path.stat().st_size > 10_000 for path in pngs)
    # As a person looks: the outer 10 mm of every rendered page is white paper.
    for page_width, page_height, pixels in rendered_gray(pdf):
        edge = round(10 * mm / width * page_width)
        for row in range(page_height):
            line = pixels[row * page_width : (row + 1) * page_width]
            assert min(line[:edge]) > 240 and min(line[-edge:]) > 240, f"ink in the margin at row {row}"


@pytest.mark.parametrize(
    "name", ["Ali <b>Veli", '<img src="/etc/hostname">', f'<img src="{REAL_IMAGE}"/>', "<para>Ayşe</para> & Co."]
)
def test_a_customer_named_like_markup_gets_the_pdf_with_the_name_as_typed(agents, sandbox, name):
    """The issue's cases on the line above the table: no 500, no file opened, the name as typed."""
    request = quoted_request(agents["ACENTE1"], "trafik", samples.TRAFIK)
    customer = Customer.objects.create(agency=request.agency, name=name, identity_no="10000000146")
    QuoteRequest.objects.filter(pk=request.pk).update(customer=customer)
    response = download(agents["ACENTE1"], request)
    assert response.status_code == 200
    reader = PdfReader(io.BytesIO(response.content))
    assert f"Müşteri: {name}" in " ".join(reader.pages[0].extract_text().split())
    assert all("/XObject" not in page["/Resources"] for page in reader.pages)


def test_a_dozen_insurers_with_names_at_the_limit_still_make_a_pdf_inside_the_page():
    """Narrow columns and very tall rows: a row too tall for a page goes on over the next one
    instead of failing the download."""
    request = QuoteRequest(product="kasko", plate="34ABC123", owner_id="10000000146", created_at=timezone.now())
    columns = [
        Column(i, f"s{i}", "Sigorta " * 40, "Q" * 400, Decimal("1000.50"), None, [], cheapest=i == 0) for i in range(12)
    ]
    rows = [Row(f"r{i}", "Teminat adı " * 40, ["12345678.90"] * 12) for i in range(10)]
    pdf = comparison_pdf(Comparison(request=request, columns=columns, rows=rows), agency_name="Acente")
    runs = text_runs(pdf)
    assert len(PdfReader(io.BytesIO(pdf)).pages) > 1
    assert all(MARGIN - 0.5 <= run.x0 and run.x1 <= PAGE[0] - MARGIN + 0.5 for run in runs)
    assert all(0 < run.y < PAGE[1] for run in runs)


def test_pdf_text_escapes_markup_and_drops_control_characters():
    assert pdf_text("Ali <b>Veli & Oğlu") == "Ali &lt;b&gt;Veli &amp; Oğlu"
    assert pdf_text("satır\r\nikinci\x00\x1b\tson") == "satır<br/>ikinci son"
    assert pdf_text(None) == ""
    cut = pdf_text("a" * (TEXT_LIMIT + 50))
    assert len(cut) == TEXT_LIMIT and cut.endswith("…")
