"""The on-call engineer in a real browser: opens the health dashboard and classifies an unknown code."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from integrations.answers.classification import clear_mapping_cache
from integrations.calling.calls import insurer_operation_run
from integrations.models import AdminChange, Attempt, ErrorMapping, Insurer
from tests import samples

pytestmark = [pytest.mark.browser]
ADMIN_PASSWORD = "nobetci-pass-123"


@pytest.fixture(autouse=True)
def fresh_mappings():
    """A mapping made here must not outlive this test's database in the process cache."""
    clear_mapping_cache()
    yield
    clear_mapping_cache()


@pytest.fixture
def unknown_code_seen(seeded_accounts, transactional_db, sandbox, endpoint_for):
    """Boğaziçi answered a trafik quote twice with BS-999, a code no table knows; Anka answered fine."""
    sandbox["bogazici"].state.add_faults(
        [{"operation": "trafik_quote", "fault": "error", "code": "BS-999", "times": 2}]
    )
    for code in ("bogazici", "anka"):
        insurer_operation_run(
            endpoint=endpoint_for(code), operation="trafik_quote", data=samples.TRAFIK, sleep=lambda seconds: None
        )
    assert Attempt.objects.filter(provider_code="BS-999", error_class="unknown").count() == 2


@pytest.fixture
def on_call(transactional_db):
    return get_user_model().objects.create_superuser("nobetci", password=ADMIN_PASSWORD)


def test_on_call_opens_the_dashboard_and_classifies_an_unknown_code(page, shot, unknown_code_seen, on_call):
    """Log in, see BS-999 with the insurer's raw answer, classify it as "unavailable" in one click, see it mapped."""
    page.goto("/admin/integrations/health/")
    page.get_by_label("Kullanıcı adı").fill("nobetci")
    page.get_by_label("Parola").fill(ADMIN_PASSWORD)
    page.get_by_role("button", name="Oturum aç").click()

    expect(page.get_by_role("heading", name="Sigorta şirketleri sağlık panosu")).to_be_visible()
    anka = page.locator('#insurer-health tr[data-insurer="anka"][data-product="trafik"]')
    expect(anka.locator('[data-field="attempts"]')).to_have_text("1")
    bogazici = page.locator('#insurer-health tr[data-insurer="bogazici"][data-product="trafik"]')
    expect(bogazici.locator('[data-field="unknown"]')).to_have_text("2")
    expect(page.locator("#minute-chart polyline.attempts")).to_be_attached()

    row = page.locator('#unknown-codes tr[data-insurer="bogazici"][data-code="BS-999"]')
    expect(row.locator('[data-field="count"]')).to_have_text("2")
    row.get_by_text("Ham yanıt örneği").click()
    expect(row.locator("pre.raw")).to_contain_text("<HataKodu>BS-999</HataKodu>")
    shot(page, "unknown-code")

    # Named as the dashboard names insurers (its display name), the code kept in data-insurer.
    bogazici_name = Insurer.objects.get(code="bogazici").name
    row.get_by_label(f"{bogazici_name} BS-999 için tür").select_option(label="geçici · hizmet kullanılamıyor")
    row.get_by_role("button", name="Olarak sınıflandır").click()

    expect(page.locator(".messagelist")).to_contain_text("BS-999 artık “geçici · hizmet kullanılamıyor”")
    row = page.locator('#unknown-codes tr[data-insurer="bogazici"][data-code="BS-999"]')
    expect(row).to_contain_text("Eşlendi: unavailable")
    expect(row.get_by_role("button", name="Olarak sınıflandır")).to_have_count(0)
    shot(page, "classified")

    mapping = ErrorMapping.objects.get(insurer__code="bogazici", provider_code="BS-999")
    assert mapping.kind == "unavailable"
    assert AdminChange.objects.get(model_name="errormapping", object_id=str(mapping.pk)).user == on_call


def test_window_choice_is_kept_in_the_address(page, unknown_code_seen, on_call):
    """Choosing "Son 15 dakika" and one insurer reloads the page for that window and insurer only."""
    page.goto("/admin/login/?next=/admin/integrations/health/")
    page.get_by_label("Kullanıcı adı").fill("nobetci")
    page.get_by_label("Parola").fill(ADMIN_PASSWORD)
    page.get_by_role("button", name="Oturum aç").click()

    page.get_by_label("Zaman aralığı").select_option(label="Son 15 dakika")
    page.get_by_label("Şirket").select_option(label="Anka Sigorta")
    page.get_by_role("button", name="Göster").click()
    expect(page).to_have_url(re.compile(r"window=15m&insurer=anka"))
    expect(page.locator('#insurer-health tr[data-insurer="anka"]')).to_have_count(1)
    expect(page.locator('#insurer-health tr[data-insurer="bogazici"]')).to_have_count(0)
