"""An agency's portfolio imported from the desk: upload, preview with every row's errors, import."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from openpyxl import Workbook

from agencies.models import Agency, AgentProfile
from policies.models import Policy

pytestmark = pytest.mark.django_db

HEADER = "insurer,policy_no,product,plate,owner_id,status,starts_on,ends_on\n"
GOOD = [
    "anka,ANK-1001,trafik,34 ABC 123,10000000146,ACTIVE,01.12.2026,01.12.2027\n",
    "bogazici,BOG-2002,kasko,06 BYZ 42,10000000146,ACTIVE,2026-11-15,2027-11-15\n",
]
BAD = [
    "anka,ANK-1003,saglik,34 ABC 124,10000000146,ACTIVE,,\n",  # line 4: no such product
    "cinar,CIN-3004,trafik,34 ABC 125,12345,ACTIVE,,\n",  # line 5: a short identity number
]


@pytest.fixture
def admin_desk(agents) -> Client:
    user = get_user_model().objects.create_user("yonetici-aktarim", password="x-pass-12345")
    AgentProfile.objects.create(user=user, agency=Agency.objects.get(code="ACENTE1"), is_agency_admin=True)
    client = Client()
    client.force_login(user)
    return client


def upload(client: Client, content: bytes, name: str = "portfoy.csv"):
    return client.post(reverse("portfolio_upload"), {"file": SimpleUploadedFile(name, content)})


def token_of(html: str) -> str:
    match = re.search(r'name="token" value="([^"]+)"', html)
    assert match, html
    return match.group(1)


def row_errors(html: str) -> list[tuple[str, str, str]]:
    table = html.split('id="row-errors"', 1)[1].split("</table>", 1)[0] if 'id="row-errors"' in html else ""
    return re.findall(r"<tr><td>(\d+)</td><td>([^<]+)</td><td>([^<]+)</td></tr>", table)


def test_the_preview_names_every_bad_row_in_turkish_and_writes_nothing_then_the_good_rows_land(admin_desk):
    preview = upload(admin_desk, (HEADER + "".join(GOOD + BAD)).encode())
    html = preview.content.decode()
    assert preview.status_code == 200 and Policy.objects.count() == 0
    assert "data-good-rows>2<" in html and "data-bad-rows>2<" in html
    errors = row_errors(html)
    assert [(line, field) for line, field, _ in errors] == [("4", "ürün"), ("5", "T.C. kimlik / vergi no")]
    assert "Hatasız 2 satırı içe aktar" in html

    done = admin_desk.post(reverse("portfolio_upload"), {"token": token_of(html)}).content.decode()
    assert "2 poliçe aktarıldı; hatalı 2 satır aktarılmadı." in done
    policies = Policy.objects.order_by("policy_no")
    assert [(p.policy_no, p.agency.code, p.source) for p in policies] == [
        ("ANK-1001", "ACENTE1", "import"),
        ("BOG-2002", "ACENTE1", "import"),
    ]
    assert policies[0].plate == "34ABC123" and str(policies[1].ends_on) == "2027-11-15"
    # The same confirmation again: the file is gone, nothing more is written.
    again = admin_desk.post(reverse("portfolio_upload"), {"token": token_of(html)}).content.decode()
    assert "Önizlemenin süresi doldu" in again and Policy.objects.count() == 2


def test_an_excel_file_is_read_by_the_same_rules(admin_desk):
    book = Workbook()
    sheet = book.active
    sheet.append(HEADER.strip().split(","))
    sheet.append(["anka", "ANK-5001", "trafik", "34 ABC 123", 10000000146, "ACTIVE", None, None])
    sheet.append(["deniz", "DNZ-5002", "dask", "", "10000000146", "ACTIVE", None, None])
    raw = io.BytesIO()
    book.save(raw)
    html = upload(admin_desk, raw.getvalue(), "portfoy.xlsx").content.decode()
    assert "data-good-rows>2<" in html and row_errors(html) == []
    admin_desk.post(reverse("portfolio_upload"), {"token": token_of(html)})
    assert sorted(Policy.objects.values_list("policy_no", flat=True)) == ["ANK-5001", "DNZ-5002"]


def test_a_windows_1254_file_is_read(admin_desk):
    text = HEADER + GOOD[0] + "anka,ANK-1009,trafik,34 ABC 126,10000000146,GEÇERSİZ,,\n"
    html = upload(admin_desk, text.encode("windows-1254")).content.decode()
    assert "data-good-rows>1<" in html
    ((line, field, message),) = row_errors(html)
    assert (line, field) == ("3", "durum") and "geçersiz durum" in message


def test_another_agencys_rows_are_refused_on_their_field(admin_desk):
    text = "agency_code," + HEADER + "ACENTE1," + GOOD[0] + "ACENTE2," + GOOD[1]
    html = upload(admin_desk, text.encode()).content.decode()
    ((line, field, message),) = row_errors(html)
    assert (line, field) == ("3", "acente kodu") and "yalnızca kendi acentenizin" in message


def test_what_changed_since_the_preview_is_shown_again_and_nothing_is_written(admin_desk, tmp_path):
    content = HEADER + "".join(GOOD)
    html = upload(admin_desk, content.encode()).content.decode()
    portfolio = tmp_path / "portfolio.csv"
    portfolio.write_text("agency_code," + HEADER + "ACENTE1," + GOOD[0])
    call_command("import_policies", str(portfolio), stdout=io.StringIO())  # a colleague, meanwhile
    changed = admin_desk.post(reverse("portfolio_upload"), {"token": token_of(html)}).content.decode()
    assert "hiçbir şey aktarılmadı" in changed
    assert Policy.objects.count() == 1
    ((line, field, message),) = row_errors(changed)
    assert (line, field) == ("2", "poliçe no") and "zaten kayıtlı" in message
    admin_desk.post(reverse("portfolio_upload"), {"token": token_of(changed)})
    assert sorted(Policy.objects.values_list("policy_no", flat=True)) == ["ANK-1001", "BOG-2002"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"insurer,policy_no\nanka,X\n", "Dosyada şu sütunlar yok: product, plate, owner_id, status."),
        (b"   \n", "Dosya boş."),
        (b"\xff\xfe\x00\x81\x8d", "Dosya okunamadı"),
    ],
)
def test_a_file_that_cannot_be_read_is_an_error_on_the_file_field(admin_desk, content, message):
    html = upload(admin_desk, content).content.decode()
    assert message in html and Policy.objects.count() == 0


def test_a_token_is_its_uploaders_only(admin_desk, agents):
    html = upload(admin_desk, (HEADER + GOOD[0]).encode()).content.decode()
    other = get_user_model().objects.create_user("yonetici-baska", password="x-pass-12345")
    AgentProfile.objects.create(user=other, agency=Agency.objects.get(code="ACENTE2"), is_agency_admin=True)
    client = Client()
    client.force_login(other)
    answer = client.post(reverse("portfolio_upload"), {"token": token_of(html)}).content.decode()
    assert "Önizlemenin süresi doldu" in answer and Policy.objects.count() == 0


def test_a_plain_agent_may_not_import(agents):
    desk = Client()
    desk.force_login(agents["ACENTE1"])
    assert desk.get(reverse("portfolio_upload")).status_code == 403
    assert upload(desk, (HEADER + GOOD[0]).encode()).status_code == 403
    assert Policy.objects.count() == 0
