"""The issuance status and the policy document's state pushed to their pages (quotes/live.py;
static/insurehub/live-status.js).

The issuance is started server-side and no worker takes it: the test moves its state as the
worker would, so which way the status reached the page (the stream or the fallback poll) is
known, not raced against a real insurer.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from documents import services as document_services
from documents.models import PolicyDocument
from policies.models import Policy
from quotes import live
from quotes.models import Issuance
from quotes.services import issuance as svc
from quotes.services import quote_requests
from tests import samples
from tests.conftest import wait_until
from tests.documents.conftest import quick_document_policy  # noqa: F401 - a fixture
from tests.quotes.conftest import quick_issuance_policy  # noqa: F401 - a fixture
from tests.quotes.request_samples import tasks_not_sent
from tests.work.sends import hold_work_sends
from work.item import WorkState

from .test_quote_desk import log_in

pytestmark = [pytest.mark.browser]


@pytest.fixture
def waiting_issuance(desk_agent, sandbox, monkeypatch) -> Issuance:
    tasks_not_sent(monkeypatch)
    request = quote_requests.quote_request_create(user=desk_agent, product="trafik", data=samples.TRAFIK)
    row = request.insurer_quotes.get(insurer__code="anka")
    quote_requests.insurer_quote_fetch(row.id)
    return svc.issuance_start(user=desk_agent, insurer_quote_id=row.id, payment_token=samples.PAYMENT_TOKEN)


def issued(issuance: Issuance) -> None:
    Issuance.objects.filter(pk=issuance.pk).update(state=WorkState.SUBMITTED, policy_no="ANKA-P-4242")


def open_status(page: Page, issuance: Issuance, username: str) -> None:
    log_in(page, username)
    page.goto(f"/policelestirme/{issuance.pk}/")
    expect(page.locator("#issuance-status")).to_have_attribute("data-state", "QUEUED")
    page.evaluate("() => { window.sameDocument = true; }")


def test_the_status_arrives_through_the_stream_and_the_poll_stays_quiet(page, shot, desk_agent, waiting_issuance):
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if "/durum/" in request.url else None)
    open_status(page, waiting_issuance, desk_agent.username)
    status = page.locator("#issuance-status")
    expect(status).to_have_attribute("data-streaming", "1")
    page.wait_for_timeout(2500)  # two of the fallback poll's ticks: quiet while the stream is open
    shot(page, "streaming")

    issued(waiting_issuance)
    expect(status.locator(".policy-no")).to_have_text("ANKA-P-4242")
    shot(page, "issued")
    expect(status).to_have_attribute("data-via", "stream")
    expect(status).to_have_attribute("data-state", "SUBMITTED")
    assert page.evaluate("() => window.sameDocument") is True
    assert polls == []
    # The final fragment names no stream and no poll; the server let the stream's thread go.
    expect(status).not_to_have_attribute("data-live-stream", re.compile(".*"))
    expect(status).not_to_have_attribute("hx-trigger", re.compile(".*"))
    wait_until(lambda: not live.watcher._subscriptions)


def test_the_poll_takes_over_when_the_stream_is_unavailable(page, desk_agent, waiting_issuance):
    page.route(re.compile(r".*/akis/.*"), lambda route: route.abort())
    open_status(page, waiting_issuance, desk_agent.username)
    status = page.locator("#issuance-status")
    issued(waiting_issuance)
    expect(status.locator(".policy-no")).to_have_text("ANKA-P-4242")
    expect(status).not_to_have_attribute("data-via", re.compile(".*"))
    assert page.evaluate("() => window.sameDocument") is True


@pytest.fixture
def fetching_policy(
    desk_agent,
    sandbox,
    monkeypatch,
    quick_issuance_policy,  # noqa: F811 - the fixture imported above
    quick_document_policy,  # noqa: F811 - the fixture imported above
    settings,
    tmp_path,
):
    """A policy of the desk agent's, issued, whose PDF is asked for and not fetched yet."""
    settings.MEDIA_ROOT = tmp_path / "media"
    tasks_not_sent(monkeypatch)
    # Nor the document's fetch: a qcluster an earlier test of the session started would fetch it
    # before the page shows "Hazırlanıyor" (the test fetches it itself, below).
    hold_work_sends(monkeypatch, PolicyDocument)
    request = quote_requests.quote_request_create(
        user=desk_agent, product="trafik", data=samples.trafik_on_a_new_plate()
    )
    row = request.insurer_quotes.get(insurer__code="anka")
    quote_requests.insurer_quote_fetch(row.id)
    issuance = svc.issuance_start(user=desk_agent, insurer_quote_id=row.id, payment_token=samples.PAYMENT_TOKEN)
    assert svc.issuance_process(issuance.pk) == "SUBMITTED"
    policy = Policy.objects.get(issuance=issuance)
    assert PolicyDocument.objects.get(policy=policy).state == "QUEUED"
    return policy


def test_the_policy_document_arrives_through_the_stream(page, shot, desk_agent, fetching_policy):
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if "/belge/durum/" in request.url else None)
    log_in(page, desk_agent.username)
    page.goto(f"/policeler/{fetching_policy.pk}/")
    state = page.locator(f"#document-status-{fetching_policy.pk}")
    expect(state).to_contain_text("Hazırlanıyor")
    expect(state).to_have_attribute("data-streaming", "1")
    page.wait_for_timeout(2500)  # one of the fallback poll's ticks: quiet while the stream is open

    document = PolicyDocument.objects.get(policy=fetching_policy)
    assert document_services.document_process(document.pk) == "SUBMITTED"
    expect(state.get_by_role("link", name="İndir (PDF)")).to_be_visible()
    shot(page, "document-ready")
    expect(state).to_have_attribute("data-via", "stream")
    assert polls == []
