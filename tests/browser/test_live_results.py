"""Answers pushed to the results page as they are stored (quotes/live.py, templates/quotes/_live_script.html).

The request is created server-side, its rows claimed and no insurer asked: the test stores each
insurer's answer on its row as the worker would, so which way a row reached the page (the stream
or the fallback poll) is known, not raced against real insurers. The real flow, desk form to insurers through a
qcluster, is tests/browser/test_quote_desk.py's.
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from integrations.adapters.registry import registered_codes
from quotes import live
from quotes.models import InsurerQuote, QuoteRequest
from tests.conftest import wait_until
from tests.quotes.request_samples import quote_request_being_asked

from .test_quote_desk import log_in

pytestmark = [pytest.mark.browser]


@pytest.fixture
def waiting_request(desk_agent, monkeypatch) -> QuoteRequest:
    return quote_request_being_asked(desk_agent, monkeypatch)


def store_quote(request: QuoteRequest, code: str, premium: str) -> None:
    InsurerQuote.objects.filter(request=request, insurer__code=code).update(
        state="SUCCEEDED",
        premium=Decimal(premium),
        currency="TRY",
        quote_no=f"{code.upper()}-Q-1",
        valid_until=timezone.now() + timedelta(minutes=15),
        finished_at=timezone.now(),
    )


def rows_seen(page: Page) -> dict[str, dict]:
    return page.evaluate("() => window.insurehubRowsSeen")


def open_results(page: Page, request: QuoteRequest, username: str) -> None:
    log_in(page, username)
    page.goto(f"/talepler/{request.public_id}/")
    expect(page.locator("#results")).to_have_attribute("data-complete", "false")
    # Set once on this document: a reload would lose it.
    page.evaluate("() => { window.sameDocument = true; }")


def test_answers_arrive_through_the_stream_without_reload_and_the_stream_ends(page, shot, desk_agent, waiting_request):
    open_results(page, waiting_request, desk_agent.username)
    results = page.locator("#results")
    expect(results).to_have_attribute("data-streaming", "1")
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if "/sonuclar/" in request.url else None)
    page.wait_for_timeout(2500)  # two of the fallback poll's ticks: it must stay quiet while the stream is open
    shot(page, "streaming")

    codes = sorted(registered_codes())
    store_quote(waiting_request, codes[0], "3999.90")
    first = page.locator(f'tr[data-insurer="{codes[0]}"]')
    expect(first).to_have_attribute("data-state", "SUCCEEDED")
    expect(first).to_contain_text("3.999,90 ₺")
    shot(page, "first-answer")
    for index, code in enumerate(codes[1:], start=1):
        store_quote(waiting_request, code, f"{4000 + index}.00")
    expect(results).to_have_attribute("data-complete", "true")
    shot(page, "all-answers")

    assert page.evaluate("() => window.sameDocument") is True
    seen = rows_seen(page)
    assert sorted(entry["insurer"] for entry in seen.values()) == codes
    assert {entry["via"] for entry in seen.values()} == {"stream"}
    assert polls == []
    # The last event ended the stream: the page closed it and the server let its thread go.
    expect(results).not_to_have_attribute("data-stream-url", re.compile(".*"))
    wait_until(lambda: not live.watcher._subscriptions)


def test_the_poll_takes_over_when_the_stream_is_unavailable(page, desk_agent, waiting_request):
    page.route(re.compile(r".*/akis/.*"), lambda route: route.abort())
    open_results(page, waiting_request, desk_agent.username)
    results = page.locator("#results")

    for code in registered_codes():
        store_quote(waiting_request, code, "4312.50")
    expect(results).to_have_attribute("data-complete", "true")
    assert page.evaluate("() => window.sameDocument") is True
    seen = rows_seen(page)
    assert len(seen) == len(registered_codes())
    assert {entry["via"] for entry in seen.values()} == {"poll"}


def test_another_agency_gets_not_found_on_the_stream(browser_context, agents, waiting_request):
    from .conftest import AGENT_PASSWORD

    other = agents["ACENTE2"]
    other.set_password(AGENT_PASSWORD)
    other.save()
    page = browser_context.new_page()
    log_in(page, other.username)
    answer = page.request.get(f"/talepler/{waiting_request.public_id}/akis/")
    assert answer.status == 404
    assert "data-insurer" not in answer.text()
