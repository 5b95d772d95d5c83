"""Agreements and a policy's commission over the API and on the desk: the owner's writes, the
Turkish field errors, and another agency's records answered like unknown ones."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from django.test import Client

from commissions.models import CommissionAgreement, PolicyCommission
from integrations.models import AdminChange
from tests.conftest import api_as
from tests.quotes.policy_samples import issued_policy

from .conftest import agreement

pytestmark = pytest.mark.django_db

BODY = {"insurer": "anka", "product": "kasko", "rate": "12.50", "base": "net", "effective_from": "2026-01-01"}


def test_the_owner_enters_an_agreement_and_reads_it_back(owner):
    created = api_as(owner).post("/api/commission-agreements/", BODY, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert {key: body[key] for key in BODY} == BODY
    assert (body["insurer_name"], body["in_force"], body["created_by"]) == ("Anka Sigorta", True, owner.username)
    stored = CommissionAgreement.objects.get(pk=body["id"])
    assert (stored.agency.code, stored.rate) == ("ACENTE1", Decimal("12.50"))
    entry = AdminChange.objects.get(model_name="commissionagreement", object_id=str(stored.pk))
    assert (entry.username, entry.action) == (owner.username, "add")
    again = api_as(owner).get(f"/api/commission-agreements/{stored.pk}/")
    assert again.status_code == 200 and again.json() == body


def test_a_plain_agent_reads_the_agreements_but_enters_none(agents, owner):
    agreement(rate="10.00")
    refused = api_as(agents["ACENTE1"]).post("/api/commission-agreements/", BODY, format="json")
    assert refused.status_code == 403
    assert refused.json() == {"detail": "Komisyon anlaşmalarını yalnızca acente yöneticisi girebilir."}
    listed = api_as(agents["ACENTE1"]).get("/api/commission-agreements/").json()
    assert [row["rate"] for row in listed["results"]] == ["10.00"]
    assert CommissionAgreement.objects.count() == 1


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"rate": "0"}, "rate", "Komisyon oranı 0'dan büyük, en fazla 100 olmalıdır."),
        ({"rate": "abc"}, "rate", "Komisyon oranını sayı olarak girin (ör. 12,5)."),
        ({"rate": "1000"}, "rate", "Komisyon oranı 0'dan büyük, en fazla 100 olmalıdır."),
        ({"rate": "10.125"}, "rate", "Komisyon oranı en fazla iki ondalık basamak içerebilir."),
        ({"rate": None}, "rate", "Bu alan boş bırakılmamalı."),
        ({"effective_from": "01.01.2026"}, "effective_from", None),
        ({"product": "saglik"}, "product", '"saglik" geçerli bir seçim değil.'),
        ({"insurer": "yok"}, "insurer", "Böyle bir sigorta şirketi yok."),
    ],
)
def test_a_bad_agreement_answers_400_naming_the_field_in_turkish(owner, change, field, message):
    response = api_as(owner).post("/api/commission-agreements/", {**BODY, **change}, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert list(errors) == [field]
    if message is not None:
        assert errors[field] == [message]
    else:  # DRF's own date message: Turkish, and names the format expected
        assert "Tarih" in errors[field][0] and "YYYY-MM-DD" in errors[field][0]
    assert not CommissionAgreement.objects.exists()


def test_a_missing_field_is_named(owner):
    body = {key: value for key, value in BODY.items() if key != "effective_from"}
    response = api_as(owner).post("/api/commission-agreements/", body, format="json")
    assert response.status_code == 400 and response.json() == {"effective_from": ["Bu alan zorunlu."]}


def test_another_agencys_agreement_is_an_unknown_one(agents):
    theirs = agreement(agency="ACENTE2")
    ours = agreement(agency="ACENTE1")
    client = api_as(agents["ACENTE1"])
    unknown = client.get("/api/commission-agreements/999999/")
    other = client.get(f"/api/commission-agreements/{theirs.pk}/")
    assert other.status_code == unknown.status_code == 404 and other.json() == unknown.json()
    assert client.get(f"/api/commission-agreements/{ours.pk}/").status_code == 200
    assert [row["id"] for row in client.get("/api/commission-agreements/").json()["results"]] == [ours.pk]


def test_a_policys_commission_is_read_by_its_own_agency_only(agents):
    agreement(insurer="anka", rate="10.00")
    ours = issued_policy(agents["ACENTE1"], "ANK-COM-1")
    theirs = issued_policy(agents["ACENTE2"], "ANK-COM-2")
    # Stored directly: these fixtures make no call to an insurer, so no signal fired.
    from commissions.services import policy_commission_accrue

    policy_commission_accrue(policy=ours)
    client = api_as(agents["ACENTE1"])
    body = client.get(f"/api/policies/{ours.pk}/commission/").json()
    assert (body["state"], body["message"], body["accrual"]["amount"]) == ("computed", "", "431.25")
    assert body["net_amount"] == "431.25" and body["reversal"] is None
    other = client.get(f"/api/policies/{theirs.pk}/commission/")
    unknown = client.get("/api/policies/999999/commission/")
    assert other.status_code == unknown.status_code == 404 and other.json() == unknown.json()
    no_agreement = api_as(agents["ACENTE2"]).get(f"/api/policies/{theirs.pk}/commission/").json()
    assert (no_agreement["state"], no_agreement["message"]) == ("no_agreement", "Komisyon anlaşması yok")
    assert no_agreement["accrual"] is None and no_agreement["net_amount"] is None
    assert PolicyCommission.objects.count() == 1


def desk_as(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_owner_enters_an_agreement_on_the_desk(owner):
    desk = desk_as(owner)
    page = desk.get("/acente/komisyonlar/")
    assert page.status_code == 200 and "Henüz komisyon anlaşması girilmemiş." in page.content.decode()
    form = {**BODY, "rate": "12,50"}  # typed the Turkish way
    response = desk.post("/acente/komisyonlar/", form)
    assert response.status_code == 302 and response["Location"] == "/acente/komisyonlar/"
    stored = CommissionAgreement.objects.get()
    assert (stored.rate, stored.base, stored.effective_from) == (Decimal("12.50"), "net", date(2026, 1, 1))
    listed = desk.get("/acente/komisyonlar/").content.decode()
    assert f'data-agreement-id="{stored.pk}"' in listed and "Yürürlükte" in listed


def test_the_desk_puts_the_services_message_on_the_field(owner):
    desk = desk_as(owner)
    agreement(insurer="anka", product="kasko", effective_from=date(2026, 1, 1))
    response = desk.post("/acente/komisyonlar/", {**BODY, "rate": "12,50"})
    assert response.status_code == 400
    assert response.context["form"].errors == {
        "effective_from": ["Bu şirket ve ürün için bu tarihte başlayan bir anlaşma zaten var."]
    }


def test_a_plain_agent_has_no_agreement_page(agents, owner):
    assert desk_as(agents["ACENTE1"]).get("/acente/komisyonlar/").status_code == 403
    assert desk_as(agents["ACENTE1"]).post("/acente/komisyonlar/", BODY).status_code == 403
    assert not CommissionAgreement.objects.exists()
