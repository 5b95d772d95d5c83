"""Renewals in a real browser: the list, one click, and every insurer's answer to the same risk."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from playwright.sync_api import expect

from policies import periods
from quotes.models import QuoteRequest
from tests import samples
from tests.quotes.policy_samples import imported_policy, issued_policy
from tests.quotes.request_samples import tasks_not_sent

from .test_quote_desk import log_in, wait_for_every_answer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("qcluster")]


def test_agent_requotes_a_policy_ending_soon_at_every_insurer(page, shot, sandbox, desk_agent, monkeypatch):
    """Yenilemeler lists a policy ending in 12 days; one click asks every insurer for the same risk."""
    # The policy is history: its request and issuance are stored without calling any insurer.
    with monkeypatch.context() as quiet:
        tasks_not_sent(quiet)
        policy = issued_policy(
            desk_agent,
            "ANK-RENEW-1",
            data={**samples.TRAFIK, "plate": "06BYZ42"},
            ends_on=periods.today() + timedelta(days=12),
        )
    imported_policy("ACENTE1", "deniz", "DNZ-IMPORTED", ends_on=periods.today() + timedelta(days=3))
    imported_policy("ACENTE2", "anka", "ANK-OTHER-AGENCY", ends_on=periods.today() + timedelta(days=1))

    log_in(page, desk_agent.username)
    page.goto("/yenilemeler/")
    expect(page.get_by_role("heading", name="Yenilemesi yaklaşanlar")).to_be_visible()
    rows = page.locator("tr.renewal")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_have_attribute("data-policy-no", "DNZ-IMPORTED")
    expect(rows.nth(1)).to_contain_text("06 BYZ 42")
    expect(rows.nth(1)).to_contain_text("12 gün")
    shot(page, "renewals")

    # An imported policy has no risk details to quote from: a clear message, no request.
    rows.nth(0).get_by_role("button", name="Yeniden teklif al").click()
    expect(page.get_by_role("alert")).to_contain_text("platform dışından aktarıldı")
    shot(page, "imported-refused")

    page.locator('tr.renewal[data-policy-no="ANK-RENEW-1"]').get_by_role("button", name="Yeniden teklif al").click()
    expect(page).to_have_url(re.compile(r"/talepler/[0-9a-f-]{36}/$"))
    wait_for_every_answer(page)
    shot(page, "requoted")

    new = QuoteRequest.objects.exclude(pk=policy.issuance.quote_request_id).get()
    assert page.url.rstrip("/").endswith(str(new.public_id))
    # The same risk; only the start moves: the renewal starts the day the old policy ends.
    assert new.input_data == {**policy.issuance.quote_request.input_data, "starts_on": policy.ends_on.isoformat()}
    assert new.starts_on == policy.ends_on and new.plate == "06BYZ42"
    insurers = sorted(new.insurer_quotes.values_list("insurer__code", flat=True))
    assert insurers == sorted(sandbox)  # every insurer was asked again
    assert page.locator("tr.result").count() == len(insurers)
    assert new.insurer_quotes.filter(state="SUCCEEDED").count() == len(insurers)
