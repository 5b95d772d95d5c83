"""Agreements: the one in force on a day, who may enter one, the rules, and the audit trail."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from agencies.models import Agency
from commissions.models import CommissionAgreement
from commissions.selectors import commission_agreement_in_force, commission_agreement_list
from commissions.services import commission_agreement_create
from insurehub.errors import Forbidden, Invalid
from integrations.models import AdminChange, Insurer, InsurerAccount

from .conftest import agreement

pytestmark = pytest.mark.django_db


def in_force_on(day: date) -> CommissionAgreement | None:
    agency, anka = Agency.objects.get(code="ACENTE1"), Insurer.objects.get(code="anka")
    return commission_agreement_in_force(agency_id=agency.pk, insurer_id=anka.pk, product="trafik", on=day)


def test_the_agreement_in_force_is_the_latest_started_on_or_before_the_day(agents):
    first = agreement(rate="10.00", effective_from=date(2026, 1, 1))
    second = agreement(rate="12.00", effective_from=date(2026, 6, 1))
    agreement(rate="15.00", effective_from=date(2027, 1, 1))
    agreement(product="kasko", rate="20.00", effective_from=date(2026, 3, 1))  # another product
    agreement(agency="ACENTE2", rate="30.00", effective_from=date(2026, 4, 1))  # another agency
    assert in_force_on(date(2025, 12, 31)) is None
    assert in_force_on(date(2026, 1, 1)) == first
    assert in_force_on(date(2026, 5, 31)) == first
    assert in_force_on(date(2026, 6, 1)) == second
    assert in_force_on(date(2026, 12, 31)) == second


def test_the_list_marks_only_todays_agreement_in_force(agents, owner):
    agreement(rate="10.00", effective_from=date(2020, 1, 1))
    today = agreement(rate="12.00", effective_from=date(2021, 1, 1))
    agreement(rate="15.00", effective_from=date(2099, 1, 1))
    agreement(agency="ACENTE2", rate="30.00")
    shown = {row.rate: row.in_force for row in commission_agreement_list(user=owner)}
    assert shown == {Decimal("10.00"): False, Decimal("12.00"): True, Decimal("15.00"): False}
    assert [row for row in commission_agreement_list(user=owner) if row.in_force] == [today]


def create(user, **fields):
    values = {"insurer_code": "anka", "product": "trafik", "rate": Decimal("10.00"), "base": "gross"}
    values["effective_from"] = date(2026, 1, 1)
    values.update(fields)
    return commission_agreement_create(user=user, **values)


def test_only_the_agencys_admin_enters_an_agreement(agents, owner):
    with pytest.raises(Forbidden):
        create(agents["ACENTE1"])
    created = create(owner)
    assert (created.agency.code, created.created_by) == ("ACENTE1", owner)


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"rate": Decimal("0")}, "rate", "Komisyon oranı 0'dan büyük, en fazla 100 olmalıdır."),
        ({"rate": Decimal("100.01")}, "rate", "Komisyon oranı 0'dan büyük, en fazla 100 olmalıdır."),
        ({"rate": Decimal("10.125")}, "rate", "Komisyon oranı en fazla iki ondalık basamak içerebilir."),
        ({"insurer_code": "yok"}, "insurer", "Böyle bir sigorta şirketi yok."),
        ({"product": "saglik"}, "product", "Ürün trafik, kasko veya dask olmalıdır."),
        ({"base": "brut"}, "base", "Hesap tabanı brüt (gross) ya da net olmalıdır."),
        ({"effective_from": None}, "effective_from", "Geçerlilik başlangıcını girin."),
    ],
)
def test_a_bad_agreement_is_refused_naming_the_field_in_turkish(agents, owner, fields, field, message):
    with pytest.raises(Invalid) as refused:
        create(owner, **fields)
    assert refused.value.field_errors == {field: [message]}
    assert not CommissionAgreement.objects.exists()


def test_an_insurer_the_agency_has_no_account_at_is_refused(agents, owner):
    InsurerAccount.objects.filter(agency=owner.agent_profile.agency, insurer__code="cinar").delete()
    with pytest.raises(Invalid) as refused:
        create(owner, insurer_code="cinar")
    assert refused.value.field_errors == {"insurer": ["Acentenin bu şirkette hesabı yok."]}


def test_two_agreements_cannot_start_on_the_same_day(agents, owner):
    create(owner)
    with pytest.raises(Invalid) as refused:
        create(owner, rate=Decimal("11.00"))
    assert list(refused.value.field_errors) == ["effective_from"]
    assert CommissionAgreement.objects.count() == 1


def trail(obj) -> list[AdminChange]:
    return list(AdminChange.objects.filter(model_name="commissionagreement", object_id=str(obj.pk)).order_by("id"))


def test_entering_an_agreement_is_audited_as_its_owner(agents, owner):
    created = create(owner, rate=Decimal("12.50"), base="net")
    (entry,) = trail(created)
    assert (entry.user, entry.username, entry.action, entry.insurer_code) == (owner, owner.username, "add", "anka")
    changed = {change["field"]: change["to"] for change in entry.changes}
    assert changed == {
        "agency": str(created.agency),
        "insurer": "Anka Sigorta",
        "product": "trafik",
        "rate": "12.50",
        "base": "net",
        "effective_from": "2026-01-01",
    }


def test_a_correction_in_the_admin_is_audited_field_by_field(agents, admin_client, admin_user):
    stored = agreement(rate="10.00", effective_from=date(2026, 1, 1))
    url = reverse("admin:commissions_commissionagreement_change", args=[stored.pk])
    form = {
        "agency": stored.agency_id,
        "insurer": stored.insurer_id,
        "product": "trafik",
        "rate": "11.50",
        "base": "gross",
        "effective_from": "2026-01-01",
        "_save": "Kaydet",
    }
    assert admin_client.post(url, form).status_code == 302
    entry = trail(stored)[-1]
    assert (entry.user, entry.action) == (admin_user, "change")
    assert entry.changes == [{"field": "rate", "label": "komisyon oranı (%)", "from": "10.00", "to": "11.50"}]
    page = admin_client.get(url).content.decode()
    assert f"?model_name=commissionagreement&amp;object_id={stored.pk}" in page  # the trail's link


def test_the_admin_refuses_what_the_desk_refuses(agents, admin_client):
    stored = agreement(effective_from=date(2026, 1, 1))
    form = {
        "agency": stored.agency_id,
        "insurer": stored.insurer_id,
        "product": "trafik",
        "rate": "0",
        "base": "gross",
        "effective_from": "2026-01-01",
    }
    response = admin_client.post(reverse("admin:commissions_commissionagreement_add"), form)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert set(errors) == {"rate", "effective_from"}
    assert CommissionAgreement.objects.count() == 1


def test_deleting_an_agreement_is_audited(agents, admin_client, admin_user):
    stored = agreement()
    url = reverse("admin:commissions_commissionagreement_delete", args=[stored.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    entry = trail(stored)[-1]
    assert (entry.user, entry.action) == (admin_user, "delete")
