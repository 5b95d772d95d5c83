"""The offer PDF as the customer reads it: the agency's letterhead and contact, the agent, each
insurer's premium and main covers, the plate as written on the car, DASK's address, times and
the file name on Türkiye's clock, and every line inside its column and the page (read back with
pypdf, rendered with poppler's pdftoppm under test-artifacts/offer-pdf/)."""

from __future__ import annotations

import io
import subprocess
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from pathlib import Path

import pytest
from django.utils import timezone
from pypdf import PdfReader
from reportlab.lib.units import mm

from integrations.models import Insurer
from outreach.selectors import agency_contact
from outreach.services.offer_pdf import COLUMN_WIDTHS, MARGIN, PAGE, offer_filename, offer_pdf
from quotes.models import InsurerQuote
from tests.conftest import ARTIFACTS_DIR
from tests.outreach.conftest import offered_request
from tests.quotes.test_comparison_pdf import pdftoppm, rendered_gray, text_runs

pytestmark = pytest.mark.django_db

ARTIFACTS = Path(ARTIFACTS_DIR) / "offer-pdf"
LONG_INSURER = "Anadolu Boğaziçi Karadeniz Marmara Ege Akdeniz Birleşik Sigorta ve Reasürans Anonim Şirketi"
LONG_COVER = "Kiralık araç, ikame araç, yol yardımı ve çekici hizmeti dahil genişletilmiş ek teminat paketi"


def drawn_text(pdf: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


def render(pdf: bytes, name: str) -> list[Path]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for stale in ARTIFACTS.glob(f"{name}*"):
        stale.unlink()
    (ARTIFACTS / f"{name}.pdf").write_bytes(pdf)
    subprocess.run(
        [pdftoppm(), "-png", "-r", "80", str(ARTIFACTS / f"{name}.pdf"), str(ARTIFACTS / name)], check=True, timeout=60
    )
    return sorted(ARTIFACTS.glob(f"{name}-*.png"))


def test_the_offer_names_agency_agent_offers_and_plate_on_turkiye_time(agents, customer):
    agent = agents["ACENTE1"]
    agent.first_name, agent.last_name = "Mehmet", "Öztürk"
    agent.save()
    request = offered_request(customer)
    # 21:30 UTC tomorrow is 00:30 the day after in Türkiye (UTC+3): the PDF says the latter.
    tomorrow = (timezone.now() + timedelta(days=1)).date()
    valid_until = datetime(tomorrow.year, tomorrow.month, tomorrow.day, 21, 30, tzinfo=UTC)
    InsurerQuote.objects.filter(request=request).update(valid_until=valid_until)
    made_at = datetime(2026, 12, 2, 22, 15, tzinfo=UTC)  # 3 December, 01:15 in Türkiye
    with timezone.override("America/New_York"):  # whatever zone the request runs in
        document = offer_pdf(
            quote_request=request, contact=agency_contact(agency_id=customer.agency_id), agent=agent, now=made_at
        )
    text = drawn_text(document.content)
    for expected in (
        customer.agency.name,
        "0212 555 01 02",
        "iletisim@acente1.example",
        "Beşiktaş / İstanbul",
        "Trafik sigorta teklifi",
        "Sayın: Ayşe Yılmaz",
        "Plaka: 34 ABC 123",
        "Teklif tarihi: 03.12.2026 01:15",
        "Hazırlayan: Mehmet Öztürk",
        "4.312,50 ₺",
        "4.412,50 ₺",
        "Araç başı maddi hasar: 200.000,00 ₺",
        f"{valid_until + timedelta(hours=3):%d.%m.%Y} 00:30",
    ):
        assert expected in text, expected
    for insurer in request.insurer_quotes.values_list("insurer__name", flat=True):
        assert insurer in text
    assert "21:30" not in text and customer.identity_no not in text
    assert document.filename == "teklif-trafik-20261203.pdf"
    assert offer_filename(request, now=datetime(2026, 12, 2, 20, 59, tzinfo=UTC)) == "teklif-trafik-20261202.pdf"


def test_dask_offer_prints_the_confirmed_address(agents, customer):
    request = offered_request(customer, product="dask")
    document = offer_pdf(
        quote_request=request, contact=agency_contact(agency_id=customer.agency_id), agent=agents["ACENTE1"]
    )
    text = drawn_text(document.content)
    assert "DASK sigorta teklifi" in text and "Caferağa Mah. Moda Cad. No:12 D:3 Kadıköy / İstanbul" in text
    assert "UAVT adres kodu: 1234567890" in text and "Plaka" not in text
    assert document.filename.startswith("teklif-dask-")


def test_long_names_stay_inside_their_columns_and_the_page(agents, customer):
    request = offered_request(customer)
    first = request.insurer_quotes.order_by("premium").first()
    Insurer.objects.filter(pk=first.insurer_id).update(name=LONG_INSURER[:120])
    first.details = {
        "coverages": [{"code": f"extra_{n}", "name": f"{LONG_COVER} {n}", "limit": "150000"} for n in range(5)]
    }
    first.save()
    document = offer_pdf(
        quote_request=request, contact=agency_contact(agency_id=customer.agency_id), agent=agents["ACENTE1"]
    )
    runs = text_runs(document.content)
    width, height = PAGE
    for run in runs:
        assert MARGIN - 0.5 <= run.x0 and run.x1 <= width - MARGIN + 0.5, run
        assert 0 < run.y < height, run
    edges = [MARGIN, *accumulate(COLUMN_WIDTHS, initial=MARGIN)][1:]
    header_y = next(run.y for run in runs if run.text.startswith("Sigorta şirketi"))
    below_y = next(run.y for run in runs if run.text.startswith("Teklifler en erken"))
    table = [run for run in runs if below_y < run.y <= header_y + 1]
    outside = []
    for run in table:
        column = max(i for i, edge in enumerate(edges[:-1]) if edge <= run.x0 + 0.5)
        if run.x1 > edges[column + 1] + 0.5:
            outside.append(run)
    assert table and outside == []
    assert "".join(LONG_INSURER[:120].split()) in "".join("".join(run.text.split()) for run in runs)

    pngs = render(document.content, "long-names")
    assert pngs and all(path.stat().st_size > 10_000 for path in pngs)
    for page_width, page_height, pixels in rendered_gray(document.content):
        edge = round(10 * mm / width * page_width)
        for row in range(page_height):
            line = pixels[row * page_width : (row + 1) * page_width]
            assert min(line[:edge]) > 240 and min(line[-edge:]) > 240, f"ink in the margin at row {row}"


def test_expired_quotes_are_left_out(agents, customer):
    request = offered_request(customer, valid_for=timedelta(hours=-1))
    document = offer_pdf(
        quote_request=request, contact=agency_contact(agency_id=customer.agency_id), agent=agents["ACENTE1"]
    )
    assert "geçerliliği süren teklif kalmadı" in drawn_text(document.content)
