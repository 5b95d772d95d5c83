"""Renewals: the policies ending within 30 / 60 days, and quoting the same risk again at every insurer."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from customers.models import Customer
from integrations.models import InsurerAccount
from policies import periods
from policies.models import Policy
from quotes import selectors
from quotes.models import QuoteRequest
from quotes.services import quote_requests
from quotes.services.renewals import NO_SOURCE_MESSAGE, RenewalNotPossible, renewal_quote_create
from tests import samples

from .policy_samples import imported_policy, issued_policy

pytestmark = pytest.mark.django_db


@pytest.fixture
def ending(agents) -> dict[str, Policy]:
    today = periods.today()
    kasko_customer = Customer.objects.create(
        agency=agents["ACENTE1"].agent_profile.agency, name="Mehmet Kaya", identity_no="10000000146"
    )
    return {
        "in_20": issued_policy(
            agents["ACENTE1"],
            "CNR-20",
            product="kasko",
            insurer_code="cinar",
            ends_on=today + timedelta(days=20),
            customer=kasko_customer,
        ),
        "today": imported_policy("ACENTE1", "anka", "ANK-TODAY", ends_on=today),
        "in_45": issued_policy(agents["ACENTE1"], "ANK-45", ends_on=today + timedelta(days=45)),
        "in_90": imported_policy("ACENTE1", "deniz", "DNZ-90", ends_on=today + timedelta(days=90)),
        "ended": imported_policy("ACENTE1", "deniz", "DNZ-ENDED", ends_on=today - timedelta(days=1)),
        "cancelled": imported_policy(
            "ACENTE1", "bogazici", "BGZ-CANCELLED", ends_on=today + timedelta(days=5), status=Policy.Status.CANCELLED
        ),
        "no_dates": imported_policy("ACENTE1", "bogazici", "BGZ-NODATES"),
        "other_agency": imported_policy("ACENTE2", "anka", "ANK-OTHER", ends_on=today + timedelta(days=3)),
    }


def listed(html: str) -> list[str]:
    return re.findall(r'<tr class="renewal" data-policy-no="([^"]+)"', html)


def test_list_shows_active_policies_ending_within_30_days_soonest_first(desk, ending):
    html = desk.get(reverse("renewal_list")).content.decode()
    assert listed(html) == ["ANK-TODAY", "CNR-20"]
    assert "bugün" in html and "20 gün" in html and "Mehmet Kaya" in html and "100******46" in html


def test_60_day_toggle_widens_the_window(desk, ending):
    html = desk.get(reverse("renewal_list"), {"gun": "60"}).content.decode()
    assert listed(html) == ["ANK-TODAY", "CNR-20", "ANK-45"]
    # Any other value is the 30-day list, not an error.
    assert listed(desk.get(reverse("renewal_list"), {"gun": "365"}).content.decode()) == ["ANK-TODAY", "CNR-20"]


def test_another_agency_sees_only_its_own_renewals(agents, ending):
    client = Client()
    client.force_login(agents["ACENTE2"])
    assert listed(client.get(reverse("renewal_list")).content.decode()) == ["ANK-OTHER"]


def test_requote_creates_the_same_risk_at_every_insurer_for_the_same_customer(
    desk, ending, django_capture_on_commit_callbacks
):
    """One click: a new kasko request from the original input, a row per insurer, the same customer."""
    policy = ending["in_20"]
    source = policy.issuance.quote_request
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = desk.post(reverse("renewal_quote", args=[policy.pk]), {"gun": "30"})
    new = QuoteRequest.objects.exclude(pk__in=[source.pk, ending["in_45"].issuance.quote_request_id]).get()
    assert response.status_code == 302
    assert response["Location"] == reverse("quote_request_detail", args=[new.public_id])
    assert new.product == "kasko" and new.plate == source.plate
    # The same risk, starting the day the old policy ends (no day of overlap, none uncovered).
    assert new.input_data == {**source.input_data, "starts_on": policy.ends_on.isoformat()}
    assert new.starts_on == policy.ends_on
    assert new.customer == policy.customer
    accounts = InsurerAccount.objects.filter(agency=policy.agency, is_active=True, insurer__is_active=True)
    assert sorted(new.insurer_quotes.values_list("insurer__code", flat=True)) == sorted(
        a.insurer.code for a in accounts if a.insurer.sells("kasko")
    )
    assert set(new.insurer_quotes.values_list("state", flat=True)) == {"QUEUED"}
    assert len(callbacks) == 1  # the calls start once the request (and its customer) is committed


def test_requote_of_an_imported_policy_says_why_and_creates_nothing(desk, ending):
    before = QuoteRequest.objects.count()
    response = desk.post(reverse("renewal_quote", args=[ending["today"].pk]), {"gun": "60"}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("renewal_list") + "?gun=60"
    assert NO_SOURCE_MESSAGE in response.content.decode()
    assert QuoteRequest.objects.count() == before


def test_requote_of_another_agencys_policy_is_not_found(desk, agents, ending):
    before = QuoteRequest.objects.count()
    assert desk.post(reverse("renewal_quote", args=[ending["other_agency"].pk])).status_code == 404
    other_issued = issued_policy(agents["ACENTE2"], "ANK-OTHER-ISSUED", ends_on=periods.today())
    assert desk.post(reverse("renewal_quote", args=[other_issued.pk])).status_code == 404
    assert QuoteRequest.objects.count() == before + 1  # only the fixture's own request


def test_requote_needs_post_and_login(desk, ending):
    url = reverse("renewal_quote", args=[ending["in_20"].pk])
    assert desk.get(url).status_code == 405
    assert Client().post(url).status_code == 302


def test_service_refuses_an_imported_policy(agents, ending):
    with pytest.raises(RenewalNotPossible, match="platform dışından"):
        renewal_quote_create(user=agents["ACENTE1"], policy_id=ending["today"].pk)


def test_view_all_agencies_reader_may_list_but_not_requote(agents, ending):
    """A head-office reader sees every agency's renewals but gets no button and cannot post one."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    reader = get_user_model().objects.create_user("merkez", password="x")
    reader.user_permissions.add(Permission.objects.get(codename="view_all_agencies"))
    client = Client()
    client.force_login(reader)
    html = client.get(reverse("renewal_list")).content.decode()
    assert "ANK-OTHER" in listed(html) and "CNR-20" in listed(html)
    assert "Yeniden teklif al" not in html
    assert client.post(reverse("renewal_quote", args=[ending["in_20"].pk])).status_code == 404


def test_requote_input_checked_again(desk, agents, ending):
    """A stored input that today's rules refuse is reported, not sent (the agent uses the form)."""
    source = ending["in_20"].issuance.quote_request
    QuoteRequest.objects.filter(pk=source.pk).update(input_data={**samples.KASKO, "usage": "tractor"})
    response = desk.post(reverse("renewal_quote", args=[ending["in_20"].pk]), follow=True)
    assert "bugünkü kurallara uymuyor" in response.content.decode()


def test_a_renewal_starts_the_day_the_old_policy_ends_and_does_not_overlap_it(agents):
    """The issue's day of use: a trafik policy ending in ten days, quoted again. The renewal
    starts the day the old one ends, so it does not overlap it; a request that starts tomorrow
    on the same plate does, and its issue is refused until the agent chooses."""
    today = periods.today()
    old = issued_policy(
        agents["ACENTE1"], "ANK-T-OLD", starts_on=today - timedelta(days=355), ends_on=today + timedelta(days=10)
    )
    renewal = renewal_quote_create(user=agents["ACENTE1"], policy_id=old.pk)
    assert renewal.starts_on == old.ends_on
    assert selectors.policy_overlapping_for(quote_request=renewal) is None
    tomorrow = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    assert selectors.policy_overlapping_for(quote_request=tomorrow) == old


def test_a_renewal_asked_more_than_30_days_before_the_end_is_refused_with_the_day(agents, ending):
    from quotes.services.renewals import renewal_starts_on

    policy = ending["in_45"]
    with pytest.raises(RenewalNotPossible, match=policy.ends_on.strftime("%d.%m.%Y")):
        renewal_starts_on(policy)
