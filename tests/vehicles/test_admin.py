"""The kasko value list in the admin: "add" is the upload, through the same import as the command."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from vehicles.models import KaskoValue, KaskoValueList

from .conftest import HEADER, ROWS, csv_bytes, xlsx_bytes

pytestmark = pytest.mark.django_db

UPLOAD = reverse("admin:vehicles_kaskovaluelist_add")


class StaffClient(Client):
    """A test client logged in as a staff user, who it keeps (to compare with what it made)."""

    def __init__(self, user: User) -> None:
        super().__init__()
        self.force_login(user)
        self.user = user


def staff(*codenames: str) -> StaffClient:
    user = get_user_model().objects.create_user("veri-sorumlusu", password="operator-pass-123", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="vehicles", codename__in=codenames))
    return StaffClient(user)


@pytest.fixture
def operator() -> StaffClient:
    return staff("add_kaskovaluelist", "view_kaskovaluelist", "view_kaskovalue")


def upload(client: Client, content: bytes, *, name: str = "liste.xlsx", month: str = "2026-12", replace: bool = False):
    data = {"month": month, "file": SimpleUploadedFile(name, content)}
    if replace:
        data["replace"] = "on"
    return client.post(UPLOAD, data)


def test_an_upload_becomes_the_months_edition_recording_who_did_it(operator):
    response = upload(operator, xlsx_bytes([HEADER, *ROWS]))
    edition = KaskoValueList.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:vehicles_kaskovaluelist_change", args=[edition.pk])
    assert edition.imported_by == operator.user and edition.source_name == "liste.xlsx"
    assert edition.values.count() == 11
    page = operator.get(response["Location"]).content.decode()
    assert "Aralık 2026 listesi yüklendi: 11 değer." in page
    assert "Listenin değerleri" in page and "veri-sorumlusu" in page


def test_a_bad_row_is_shown_on_the_file_field_and_nothing_is_stored(operator):
    response = upload(
        operator, csv_bytes([HEADER, ROWS[0], ["012", "346", "FIAT", "EGEA", "12x", "", ""]]), name="a.csv"
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "Satır 3, 2026 sütunu: “12x” bir tutar değil" in page
    assert KaskoValueList.objects.count() == 0 and KaskoValue.objects.count() == 0


def test_a_loaded_month_is_refused_on_the_month_field_until_replace_is_ticked(operator):
    upload(operator, xlsx_bytes([HEADER, ROWS[0]]))
    refused = upload(operator, xlsx_bytes([HEADER, ROWS[3]])).content.decode()
    assert "Aralık 2026 listesi zaten yüklü" in refused
    assert upload(operator, xlsx_bytes([HEADER, ROWS[3]]), replace=True).status_code == 302
    assert set(KaskoValueList.objects.get().values.values_list("brand_name", flat=True)) == {"RENAULT"}


def test_a_month_in_another_form_is_refused_on_its_field(operator):
    page = upload(operator, xlsx_bytes([HEADER, ROWS[0]]), month="12/2026").content.decode()
    assert "Ay YYYY-AA biçiminde olmalı" in page and KaskoValueList.objects.count() == 0


def test_without_the_add_permission_there_is_no_upload():
    viewer = staff("view_kaskovaluelist")
    assert viewer.get(UPLOAD).status_code == 403
    assert upload(viewer, xlsx_bytes([HEADER, *ROWS])).status_code == 403
    assert KaskoValueList.objects.count() == 0


def test_editions_and_their_values_are_read_only_in_the_admin(operator):
    upload(operator, xlsx_bytes([HEADER, *ROWS]))
    edition = KaskoValueList.objects.get()
    superuser = Client()
    superuser.force_login(get_user_model().objects.create_superuser("kok", password="root-pass-123"))
    change = superuser.get(reverse("admin:vehicles_kaskovaluelist_change", args=[edition.pk])).content.decode()
    assert 'name="_save"' not in change
    values = superuser.get(reverse("admin:vehicles_kaskovalue_changelist"), {"edition__id__exact": edition.pk})
    assert "1.290.000,00 TL" in values.content.decode()
    assert superuser.get(reverse("admin:vehicles_kaskovalue_add")).status_code == 403
