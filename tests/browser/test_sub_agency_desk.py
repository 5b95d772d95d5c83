"""A sub-agency (tali acente) user in a real browser: they quote and issue a policy for their own
customer, and the rest of the agency does not exist for them.

The agency's head office has a customer and a policy in force on the same plate, and another
sub-agency has a customer of its own: the lists show the sub-agency's records only, the request
page warns of no policy of theirs, and a direct URL to the head office's policy is the Turkish
404 page, exactly as an unknown id. The worker is the real django-q2 cluster (`qcluster`).
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from agencies.models import Agency, AgentProfile, SubAgency
from customers.models import Customer
from integrations.models import InsurerAccount
from policies.models import Policy
from quotes.models import QuoteRequest
from tests import samples

from .conftest import AGENT_PASSWORD
from .test_quote_desk import log_in, open_cheapest_confirm, wait_for_every_answer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]

CUSTOMER_NAME = "Selin Aydın"


@pytest.fixture
def sub_agency_desk(seeded_accounts, transactional_db) -> dict:
    """ACENTE1 with sub-agencies Kadıköy (whose user logs in) and Moda; a customer of each, and
    the head office's own customer with a trafik policy in force on the plate Kadıköy will quote."""
    agency = Agency.objects.get(code="ACENTE1")
    kadikoy = SubAgency.objects.create(agency=agency, code="kadikoy", name="Kadıköy Tali")
    moda = SubAgency.objects.create(agency=agency, code="moda", name="Moda Tali")
    user = get_user_model().objects.create_user("tali-tarayici", password=AGENT_PASSWORD)
    AgentProfile.objects.create(user=user, agency=agency, sub_agency=kadikoy)
    own = Customer.objects.create(
        agency=agency, sub_agency=kadikoy, name=CUSTOMER_NAME, identity_no=samples.TRAFIK["owner_id"]
    )
    Customer.objects.create(agency=agency, sub_agency=moda, name="Moda Müşterisi", identity_no="12345678950")
    head_office = Customer.objects.create(agency=agency, name="Merkez Müşterisi", identity_no="17291716060")
    account = InsurerAccount.objects.select_related("insurer").filter(agency=agency, insurer__code="cinar").get()
    today = timezone.localdate()
    head_office_policy = Policy.objects.create(
        agency=agency,
        insurer=account.insurer,
        account=account,
        product="trafik",
        policy_no="MERKEZ-0001",
        plate=samples.TRAFIK["plate"],
        owner_id=head_office.identity_no,
        premium=Decimal("2500.00"),
        customer=head_office,
        starts_on=today - timedelta(days=100),
        ends_on=today + timedelta(days=265),
    )
    return {"user": user, "sub_agency": kadikoy, "customer": own, "head_office_policy": head_office_policy}


def test_sub_agency_user_issues_for_their_customer_and_sees_nothing_else(page, shot, sandbox, sub_agency_desk):
    """Customers and policies lists show the sub-agency's only; issuing credits the sub-agency;
    the head office's policy by URL is the Turkish 404 page, like an unknown policy."""
    user, customer = sub_agency_desk["user"], sub_agency_desk["customer"]
    head_office_policy = sub_agency_desk["head_office_policy"]
    log_in(page, user.username)

    # The customer list: their customer only.
    page.get_by_role("link", name="Müşteriler").first.click()
    expect(page.locator("table tbody tr")).to_have_count(1)
    expect(page.locator("table tbody tr")).to_contain_text(CUSTOMER_NAME)
    expect(page.get_by_text("Moda Müşterisi")).to_have_count(0)
    expect(page.get_by_text("Merkez Müşterisi")).to_have_count(0)
    shot(page, "customers")

    # A trafik quote for them, from their page: no warning of the head office's policy on the plate.
    page.locator("table tbody tr").get_by_role("link", name="Aç").click()
    expect(page.get_by_role("heading", name=CUSTOMER_NAME)).to_be_visible()
    page.get_by_role("link", name="Trafik teklifi al").click()
    expect(page.locator("#id_customer")).to_have_value(str(customer.pk))
    box = page.get_by_label("Müşteri", exact=True)
    # The search box offers the sub-agency's customers only, however the others are named.
    # (Both are the head office's and the other sub-agency's "… Müşterisi": the box answers that
    # nothing matches, where another scope's customers would be listed.)
    for term in ("Müşteri", "Moda", "Merkez"):
        box.fill("")  # the status empties, so each term's answer is its own
        expect(page.locator("#customer-pick-status")).to_have_text("")
        box.fill(term)
        expect(page.locator("#customer-pick-status")).to_have_text("Eşleşen müşteri yok.")
        expect(page.locator("#customer-matches [role=option]")).to_have_count(0)
    box.fill(CUSTOMER_NAME.split()[0])
    expect(page.locator("#customer-matches [role=option]").first).to_contain_text(CUSTOMER_NAME)
    page.locator("#customer-matches [role=option]").first.click()
    expect(page.locator("#id_customer")).to_have_value(str(customer.pk))
    page.get_by_label("Plaka").fill("34 ABC 123")
    page.get_by_label("Ruhsat seri no").fill("AB123456")
    page.get_by_label("Kullanım tarzı").select_option(label="Hususi")
    page.get_by_role("button", name="Teklif al").click()
    expect(page).to_have_url(re.compile(r"/talepler/[0-9a-f-]{36}/$"))
    wait_for_every_answer(page)
    expect(page.get_by_text(head_office_policy.policy_no)).to_have_count(0)
    request = QuoteRequest.objects.get(public_id=page.url.rstrip("/").rsplit("/", 1)[-1])
    assert request.sub_agency == sub_agency_desk["sub_agency"] and request.customer == customer
    shot(page, "results")

    # Issue the cheapest: the policy is the sub-agency's, sold by this user.
    open_cheapest_confirm(page)
    page.get_by_role("button", name="Onayla ve poliçeleştir").click()
    policy_no_shown = page.locator(".policy-no")
    expect(policy_no_shown).to_have_text(re.compile(r"\S+"))
    policy_no = policy_no_shown.inner_text().strip()
    policy = Policy.objects.get(policy_no=policy_no)
    assert policy.sub_agency == sub_agency_desk["sub_agency"] and policy.sold_by == user
    assert Policy.objects.get(pk=head_office_policy.pk).status == Policy.Status.ACTIVE  # nothing cancelled
    shot(page, "issued")

    # The policy list: theirs, not the head office's.
    page.get_by_role("link", name="Poliçeler").first.click()
    expect(page.get_by_role("link", name=policy_no)).to_be_visible()
    expect(page.get_by_text(head_office_policy.policy_no)).to_have_count(0)
    shot(page, "policies")

    # The head office's policy by its URL: the Turkish 404, the same as an unknown id's.
    response = page.goto(f"/policeler/{head_office_policy.pk}/")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", name="Sayfa bulunamadı")).to_be_visible()
    expect(page.get_by_text(head_office_policy.policy_no)).to_have_count(0)
    shot(page, "head-office-policy-404")
    unknown = page.goto("/policeler/987654321/")
    assert unknown is not None and unknown.status == 404
    expect(page.get_by_role("heading", name="Sayfa bulunamadı")).to_be_visible()
