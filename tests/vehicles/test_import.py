"""Importing the TSB kasko value list: the formats agencies save it in, all or nothing, editions kept."""

from __future__ import annotations

import io
from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from vehicles.models import KaskoValue, KaskoValueList
from vehicles.selectors import kasko_value_list_current
from vehicles.services import SAMPLE_FILE, ValueListInvalid, kasko_value_list_import, month_parse

from .conftest import HEADER, ROWS, csv_bytes, import_rows, xlsx_bytes

pytestmark = pytest.mark.django_db

DECEMBER, NOVEMBER = date(2026, 12, 1), date(2026, 11, 1)


def values_of(edition: KaskoValueList) -> dict[tuple[str, str, int], Decimal]:
    return {(v.brand_code, v.type_code, v.model_year): v.value for v in edition.values.all()}


def file_problems(caught: pytest.ExceptionInfo) -> list[str]:
    return caught.value.field_errors["file"]


def test_utf8_csv_with_turkish_amounts_is_imported_row_by_row_and_year_by_year():
    """One row per type, one value per year column; a blank cell is a year the type has no value for."""
    edition = import_rows([HEADER, *ROWS])
    values = values_of(edition)
    assert values[("012", "345", 2026)] == Decimal("1290000.00")
    assert values[("012", "346", 2025)] == Decimal("1292000.50")
    assert ("012", "345", 2024) not in values
    assert len(values) == 2 + 3 + 3 + 3
    togg = edition.values.get(type_code="011", model_year=2024)
    assert (togg.brand_name, togg.type_name) == ("TOGG", "T10X V1 RWD STANDART MENZİL")
    assert togg.type_key == "t10x v1 rwd standart menzil"
    assert edition.month == DECEMBER and edition.source_name == "liste.csv" and edition.imported_by is None


def test_windows_1254_csv_keeps_its_turkish_letters():
    """Excel's plain "CSV" on a Turkish Windows is Windows-1254: Ş, İ, Ğ and ı come through intact."""
    rows = [
        ["SIRA", "Marka Kodu", "Tip Kodu", "Marka Adı", "Tip Adı", "2025"],
        ["1", "090", "101", "TOFAŞ", "ŞAHİN 1.6 İE DOĞAN SLX ığüşöç", "250000"],
    ]
    content = csv_bytes(rows, encoding="cp1254")
    with pytest.raises(UnicodeDecodeError):
        content.decode("utf-8")  # the test means it: this file is not UTF-8
    edition = kasko_value_list_import(month=DECEMBER, source_name="tsb-aralik.csv", content=content)
    value = edition.values.get()
    assert value.brand_name == "TOFAŞ" and value.type_name == "ŞAHİN 1.6 İE DOĞAN SLX ığüşöç"
    assert (value.brand_code, value.type_code, value.model_year, value.value) == ("090", "101", 2025, Decimal("250000"))
    assert value.brand_key == "tofas"


def test_a_comma_separated_csv_with_a_bom_is_read_too():
    content = "\ufeff".encode() + csv_bytes([HEADER, *ROWS[3:]], delimiter=",")
    edition = kasko_value_list_import(month=DECEMBER, source_name="liste.csv", content=content)
    assert values_of(edition)[("038", "201", 2024)] == Decimal("1109000")


def test_xlsx_with_a_title_row_numeric_codes_and_year_headers_as_numbers():
    """TSB's sheet: a title above the header, and Excel's numbers: 12 is the code "012", 2026 a year."""
    content = xlsx_bytes(
        [
            ["TSB KASKO DEĞER LİSTESİ - ARALIK 2026"],
            [],
            ["MARKA KODU", "TİP KODU", "MARKA ADI", "TİP ADI", 2026, 2025],
            [12, 345, "FIAT", "EGEA 1.4 FIRE URBAN", 1290000, 1187000.5],
            ["006", "601", "BMW", "320I SEDAN M SPORT", 3950000, None],
        ]
    )
    edition = kasko_value_list_import(month=DECEMBER, source_name="Kasko_Deger_Listesi.xlsx", content=content)
    assert values_of(edition) == {
        ("012", "345", 2026): Decimal("1290000.00"),
        ("012", "345", 2025): Decimal("1187000.50"),
        ("006", "601", 2026): Decimal("3950000.00"),
    }


def test_the_shipped_sample_is_in_the_lists_layout_and_imports_whole():
    """The demo's file: every brand the docs name is on it, and the tests' kasko sample vehicle too."""
    edition = kasko_value_list_import(month=DECEMBER, source_name=SAMPLE_FILE.name, content=SAMPLE_FILE.read_bytes())
    brands = set(edition.values.values_list("brand_name", flat=True))
    assert {"FIAT", "RENAULT", "TOYOTA", "VOLKSWAGEN", "FORD", "HYUNDAI", "BMW"} <= brands
    types = edition.values.values("brand_code", "type_code").distinct().count()
    assert 40 <= types <= 80
    assert edition.values.filter(brand_code="012", type_code="345", model_year=2021).exists()
    assert set(edition.values.values_list("model_year", flat=True)) == set(range(2015, 2027))


@pytest.mark.parametrize(
    ("row", "where"),
    [
        (["12A", "345", "FIAT", "EGEA", "1000", "", ""], "Satır 4, MARKA KODU"),
        (["012", "3456", "FIAT", "EGEA", "1000", "", ""], "Satır 4, TİP KODU"),
        (["012", "399", "", "EGEA", "1000", "", ""], "Satır 4, MARKA ADI"),
        (["012", "399", "FIAT", "", "1000", "", ""], "Satır 4, TİP ADI"),
        (["012", "399", "FIAT", "EGEA", "1,234,567", "", ""], "Satır 4, 2026 sütunu"),
        (["012", "399", "FIAT", "EGEA", "", "-5", ""], "Satır 4, 2025 sütunu"),
        (["012", "399", "FIAT", "EGEA", "", "", "0"], "Satır 4, 2024 sütunu"),
        (["012", "399", "FIAT", "EGEA", "", "", ""], "Satır 4: hiçbir model yılı"),
        (["012", "345", "FIAT", "EGEA", "1000", "", ""], "Satır 4: MARKA KODU 012 / TİP KODU 345 satır 2"),
        (["012", "399", "FİAT OTO", "EGEA", "1000", "", ""], "Satır 4, MARKA ADI: 012 kodu satır 2"),
    ],
)
def test_a_bad_row_is_named_by_row_and_column_and_nothing_is_written(row, where):
    """The third data row (the file's fourth line) is wrong: the error says where, and no edition exists."""
    with pytest.raises(ValueListInvalid) as caught:
        import_rows([HEADER, ROWS[0], ROWS[3], row])
    assert any(problem.startswith(where) for problem in file_problems(caught)), file_problems(caught)
    assert KaskoValueList.objects.count() == 0 and KaskoValue.objects.count() == 0


def test_every_bad_row_is_listed_at_once():
    """A month's list is thousands of rows: the importer lists each problem, not only the first."""
    bad = [["01X", "345", "FIAT", "EGEA", "1000", "", ""], ["012", "399", "FIAT", "EGEA", "abc", "", ""]]
    with pytest.raises(ValueListInvalid) as caught:
        import_rows([HEADER, *bad, ROWS[3]])
    problems = file_problems(caught)
    assert problems[0].startswith("Satır 2, MARKA KODU") and problems[1].startswith("Satır 3, 2026 sütunu")


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([["MARKA KODU", "MARKA ADI", "TİP ADI", "2026"], ["012", "FIAT", "EGEA", "1000"]], "TİP KODU"),
        ([HEADER[:4], ROWS[0][:4]], "model yılı sütunu yok"),
        ([HEADER], "araç satırı yok"),
        ([["bir", "başka", "tablo"], ["1", "2", "3"]], "Başlık satırı bulunamadı"),
    ],
)
def test_a_file_that_is_not_the_list_is_refused_with_what_is_missing(rows, message):
    with pytest.raises(ValueListInvalid) as caught:
        import_rows(rows)
    assert message in " ".join(file_problems(caught))
    assert KaskoValueList.objects.count() == 0


def test_an_old_xls_is_refused_with_what_to_do():
    with pytest.raises(ValueListInvalid) as caught:
        kasko_value_list_import(month=DECEMBER, source_name="liste.xls", content=b"\xd0\xcf\x11\xe0rest")
    assert ".xlsx ya da CSV" in file_problems(caught)[0]


def test_editions_are_kept_and_the_latest_month_is_current_whatever_the_import_order():
    """December imported before November: December stays current, November is kept as history."""
    december = import_rows([HEADER, ROWS[0]], month=DECEMBER)
    november = import_rows([HEADER, ROWS[3]], month=NOVEMBER)
    assert kasko_value_list_current() == december
    assert set(KaskoValueList.objects.all()) == {december, november}
    assert november.values.count() == 3 and december.values.count() == 2


def test_a_month_already_loaded_is_refused_unless_replaced():
    first = import_rows([HEADER, ROWS[0]])
    with pytest.raises(ValueListInvalid) as caught:
        import_rows([HEADER, ROWS[3]])
    assert "Aralık 2026 listesi zaten yüklü" in caught.value.field_errors["month"][0]
    user = get_user_model().objects.create_user("operator")
    second = import_rows([HEADER, ROWS[3]], replace=True, imported_by=user)
    assert not KaskoValueList.objects.filter(pk=first.pk).exists()
    assert kasko_value_list_current() == second and second.imported_by == user
    assert set(second.values.values_list("brand_name", flat=True)) == {"RENAULT"}


def test_a_bad_replacement_leaves_the_month_as_it_was():
    """A correction with a bad row rolls back whole: the month's old rows are all still there."""
    old = import_rows([HEADER, *ROWS])
    before = values_of(old)
    with pytest.raises(ValueListInvalid):
        import_rows([HEADER, ROWS[0], ["012", "346", "FIAT", "EGEA CROSS", "yok", "", ""]], replace=True)
    assert kasko_value_list_current() == old and values_of(old) == before


def test_a_failure_while_writing_rolls_the_whole_import_back(monkeypatch):
    """Past the checks, a write that fails midway (here the second batch) leaves no edition and no rows."""
    import vehicles.services

    monkeypatch.setattr(vehicles.services, "_BATCH", 2)
    real_bulk_create = KaskoValue.objects.bulk_create
    calls = []

    def failing_bulk_create(objs, batch_size=None):
        objs = list(objs)
        real_bulk_create(objs[:batch_size], batch_size=batch_size)
        calls.append(len(objs))
        raise RuntimeError("disk full")

    monkeypatch.setattr(KaskoValue.objects, "bulk_create", failing_bulk_create)
    with pytest.raises(RuntimeError):
        import_rows([HEADER, *ROWS])
    assert calls and KaskoValueList.objects.count() == 0 and KaskoValue.objects.count() == 0


@pytest.mark.parametrize(("text", "month"), [("2026-12", DECEMBER), (" 2026-01 ", date(2026, 1, 1))])
def test_month_is_written_year_dash_month(text, month):
    assert month_parse(text) == month


@pytest.mark.parametrize("text", ["2026-13", "12-2026", "2026/12", "Aralık 2026", ""])
def test_a_month_in_another_form_is_refused(text):
    with pytest.raises(ValueListInvalid) as caught:
        month_parse(text)
    assert "YYYY-AA" in caught.value.field_errors["month"][0]


# --- the command ----------------------------------------------------------------------------------


def test_the_command_imports_a_file_and_says_what_it_loaded(tmp_path):
    path = tmp_path / "kasko-2026-12.xlsx"
    path.write_bytes(xlsx_bytes([HEADER, *ROWS]))
    out = io.StringIO()
    call_command("import_kasko_values", str(path), "--month", "2026-12", stdout=out)
    assert "Aralık 2026 listesi yüklendi: 4 tip, 11 değer" in out.getvalue()
    assert kasko_value_list_current().source_name == "kasko-2026-12.xlsx"


def test_the_command_fails_naming_the_row_and_writes_nothing(tmp_path):
    path = tmp_path / "liste.csv"
    path.write_bytes(csv_bytes([HEADER, ROWS[0], ["012", "3A5", "FIAT", "EGEA", "1000", "", ""]]))
    with pytest.raises(CommandError) as caught:
        call_command("import_kasko_values", str(path), "--month", "2026-12", stdout=io.StringIO())
    assert "hiçbir satır yazılmadı" in str(caught.value) and "Satır 3, TİP KODU" in str(caught.value)
    assert KaskoValueList.objects.count() == 0


def test_the_command_skips_a_loaded_month_when_asked(tmp_path):
    """The demo script loads the sample at every start: the second time it leaves the month alone."""
    first = import_rows([HEADER, ROWS[0]])
    out = io.StringIO()
    call_command("import_kasko_values", str(SAMPLE_FILE), "--month", "2026-12", "--skip-loaded", stdout=out)
    assert "zaten yüklü" in out.getvalue()
    assert kasko_value_list_current() == first and first.values.count() == 2
    with pytest.raises(CommandError, match="zaten yüklü"):
        call_command("import_kasko_values", str(SAMPLE_FILE), "--month", "2026-12", stdout=io.StringIO())


def test_the_command_records_the_user_it_is_told(tmp_path):
    user = get_user_model().objects.create_user("veri-sorumlusu")
    call_command(
        "import_kasko_values", str(SAMPLE_FILE), "--month", "2026-11", "--user", user.username, stdout=io.StringIO()
    )
    assert KaskoValueList.objects.get(month=NOVEMBER).imported_by == user
    with pytest.raises(CommandError, match="kullanıcı yok"):
        call_command(
            "import_kasko_values", str(SAMPLE_FILE), "--month", "2026-10", "--user", "yok", stdout=io.StringIO()
        )
