"""Two trafik policies for one vehicle and period never come from the desk: issuing over a policy
in force needs the agent's choice (the old one cancelled for the vehicle's sale, or a start after
it ends); kasko and DASK only warn. And the premium's installments are the agent's choice."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from insurehub.errors import Invalid
from policies import periods
from policies.models import Cancellation, Policy
from quotes import selectors
from quotes.models import Issuance
from quotes.services import issuance as svc
from quotes.services import quote_requests
from tests import samples
from tests.quotes.policy_samples import imported_policy
from work.item import WorkState

pytestmark = pytest.mark.django_db


def quoted(agents, code: str, product: str = "trafik", data: dict | None = None):
    request = quote_requests.quote_request_create(
        user=agents["ACENTE1"], product=product, data=data or (samples.TRAFIK if product == "trafik" else samples.KASKO)
    )
    row = request.insurer_quotes.get(insurer__code=code)
    quote_requests.insurer_quote_fetch(row.id)
    row.refresh_from_db()
    assert row.state == "SUCCEEDED", (row.provider_code, row.message)
    return row


@pytest.fixture
def in_force(seeded_accounts):
    today = periods.today()
    return imported_policy(
        "ACENTE1",
        "anka",
        "AK-P-IN-FORCE",
        plate="34ABC123",
        premium=Decimal("3650.00"),
        starts_on=today - timedelta(days=100),
        ends_on=today + timedelta(days=265),
    )


def test_issuing_a_trafik_quote_over_a_policy_in_force_is_refused_until_the_agent_chooses(
    agents, sandbox, quick_issuance_policy, in_force
):
    row = quoted(agents, "cinar")
    with pytest.raises(svc.IssuanceOverlaps) as refused:
        svc.issuance_start(user=agents["ACENTE1"], insurer_quote_id=row.pk, payment_token=samples.PAYMENT_TOKEN)
    assert "AK-P-IN-FORCE" in refused.value.message and "overlap" in refused.value.field_errors
    assert not Issuance.objects.exists()


def test_choosing_to_cancel_the_old_policy_issues_the_new_one_and_cancels_the_old_from_its_start(
    agents, sandbox, quick_issuance_policy, in_force
):
    row = quoted(agents, "cinar")
    issuance = svc.issuance_start(
        user=agents["ACENTE1"], insurer_quote_id=row.pk, payment_token=samples.PAYMENT_TOKEN, overlap="cancel_old"
    )
    assert svc.issuance_process(issuance.pk) == WorkState.SUBMITTED
    new = Policy.objects.get(issuance=issuance)
    cancellation = Cancellation.objects.get(policy=in_force)
    assert cancellation.reason == "vehicle_sold"
    assert cancellation.effective_on == (new.starts_on or row.request.starts_on)
    assert cancellation.requested_by == agents["ACENTE1"]


def test_a_kasko_policy_on_the_same_car_only_warns(agents, sandbox, quick_issuance_policy):
    today = periods.today()
    imported_policy(
        "ACENTE1",
        "anka",
        "AK-P-KASKO",
        product="kasko",
        starts_on=today - timedelta(days=10),
        ends_on=today + timedelta(days=355),
    )
    row = quoted(agents, "cinar", product="kasko")
    assert selectors.policy_overlapping_for(quote_request=row.request).policy_no == "AK-P-KASKO"
    issuance = svc.issuance_start(user=agents["ACENTE1"], insurer_quote_id=row.pk, payment_token=samples.PAYMENT_TOKEN)
    assert svc.issuance_process(issuance.pk) == WorkState.SUBMITTED


def test_the_confirm_page_offers_the_choice_and_a_start_after_the_old_one_ends(agents, sandbox, desk, in_force):
    row = quoted(agents, "cinar")
    page = desk.get(f"/teklifler/{row.pk}/policelestir/").content.decode()
    assert "AK-P-IN-FORCE" in page and 'value="cancel_old"' in page
    assert "Eski poliçe bitince başlayan yeni teklif al" in page
    refused = desk.post(f"/teklifler/{row.pk}/policelestir/", {"payment_token": samples.PAYMENT_TOKEN})
    assert refused.status_code == 409 and "çakışıyor" in refused.content.decode()
    assert not Issuance.objects.exists()


def test_installments_are_one_of_the_counts_the_quote_offered(agents, sandbox, quick_issuance_policy):
    row = quoted(agents, "anka")
    offered = svc.offered_installments(row)
    assert offered, "the sandbox offers installments"
    with pytest.raises(Invalid) as refused:
        svc.issuance_start(
            user=agents["ACENTE1"], insurer_quote_id=row.pk, payment_token=samples.PAYMENT_TOKEN, installments=7
        )
    assert "installments" in refused.value.field_errors
    issuance = svc.issuance_start(
        user=agents["ACENTE1"], insurer_quote_id=row.pk, payment_token=samples.PAYMENT_TOKEN, installments=offered[0]
    )
    assert issuance.payload["installments"] == offered[0]
    assert svc.issuance_process(issuance.pk) == WorkState.SUBMITTED
    assert Policy.objects.get(issuance=issuance).installments == offered[0]
