"""A quote's validity countdown reads the same as the server renders it and as desk.js updates it
each second, on the results and on the comparison: the page is swapped in again while insurers
answer, so two formats would flip back and forth."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from quotes.models import InsurerQuote, QuoteRequest
from quotes.services import quote_requests
from quotes.templatetags.desk import validity_left
from tests import samples
from tests.quotes.request_samples import tasks_not_sent

from .conftest import AGENT_PASSWORD

pytestmark = pytest.mark.browser

COUNTDOWN_FORMAT = re.compile(r"\((\d+ sa \d+ dk|\d+ dk \d\d sn) kaldı\)")
# Remaining seconds on either side of every change of form: seconds, minutes, an hour.
REMAINING = [5, 59, 65, 605, 3599, 3600, 3661, 9030]


def log_in(page: Page, username: str) -> None:
    page.goto("/giris/")
    page.get_by_label("Kullanıcı adı").fill(username)
    page.get_by_label("Parola").fill(AGENT_PASSWORD)
    page.get_by_role("button", name="Giriş yap").click()
    expect(page.get_by_role("heading", name="Yeni teklif")).to_be_visible()


@pytest.fixture
def answered(desk_agent, sandbox, monkeypatch) -> QuoteRequest:
    """A trafik request every insurer has answered, valid for two and a half hours (and a bit)."""
    tasks_not_sent(monkeypatch)
    request = quote_requests.quote_request_create(user=desk_agent, product="trafik", data=samples.TRAFIK)
    valid_until = timezone.now().replace(microsecond=0) + timedelta(hours=2, minutes=30, seconds=30)
    for n, row in enumerate(request.insurer_quotes.all()):
        InsurerQuote.objects.filter(pk=row.pk).update(
            state=InsurerQuote.State.SUCCEEDED,
            premium=Decimal("4000.00") + n,
            currency="TRY",
            quote_no=f"Q-{n}",
            valid_until=valid_until,
            finished_at=timezone.now(),
        )
    return request


def countdowns(page: Page) -> list[str]:
    return page.locator(".countdown").evaluate_all("spans => spans.map(s => s.textContent.trim())")


@pytest.mark.parametrize("where", ["results", "comparison"])
def test_the_server_and_the_script_write_the_countdown_the_same_way(page, desk_agent, answered, where):
    log_in(page, desk_agent.username)
    path = f"/talepler/{answered.public_id}/" + ("karsilastir/" if where == "comparison" else "")
    # As the server sends it (what every swap of the results puts on screen again) ...
    html = page.request.get(path).text()
    rendered = [" ".join(text.split()) for text in re.findall(r'class="muted countdown"[^>]*>([^<]*)<', html)]
    assert rendered and all(text == "(2 sa 30 dk kaldı)" for text in rendered), rendered
    # ... and as the script writes it a second later: the same words.
    page.goto(path)
    expect(page.locator(".countdown").first).to_have_text(re.compile(r"\S"))
    assert countdowns(page) == rendered


def test_every_remaining_time_reads_the_same_in_python_and_in_the_script(page, desk_agent, answered):
    """The browser's clock set to moments before the end: desk.js's text is the server's for that moment."""
    log_in(page, desk_agent.username)
    ends = answered.insurer_quotes.first().valid_until  # every row's: `answered` set them alike
    for seconds in REMAINING:
        moment = ends - timedelta(seconds=seconds)
        page.clock.set_fixed_time(moment)
        page.goto(f"/talepler/{answered.public_id}/")
        expected = validity_left(ends, moment)
        assert COUNTDOWN_FORMAT.fullmatch(expected), expected
        expect(page.locator(".countdown").first).to_have_text(expected)
        assert set(countdowns(page)) == {expected}, seconds
