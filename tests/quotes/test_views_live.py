"""The results stream (quotes/live.py) through Django's test client: access, events, its end."""

from __future__ import annotations

import re
import threading
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from integrations.adapters.registry import registered_codes
from quotes import live
from quotes.models import InsurerQuote, QuoteRequest
from tests.quotes.request_samples import quote_request_being_asked

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def trafik_request(agents, monkeypatch) -> QuoteRequest:
    """ACENTE1's trafik request, every insurer still waiting; nothing is dispatched to insurers."""
    return quote_request_being_asked(agents["ACENTE1"], monkeypatch)


def store_quote(request: QuoteRequest, code: str, premium: str = "4312.50") -> None:
    """An insurer's answer stored on its row, as the worker stores it."""
    InsurerQuote.objects.filter(request=request, insurer__code=code).update(
        state="SUCCEEDED",
        premium=Decimal(premium),
        currency="TRY",
        quote_no=f"{code.upper()}-Q-1",
        valid_until=timezone.now() + timedelta(minutes=15),
        finished_at=timezone.now(),
    )


def stream_url(request: QuoteRequest) -> str:
    return reverse("quote_request_stream", args=[request.public_id])


def events(chunks) -> list[dict[str, str]]:
    """Server-sent events parsed from the chunks a stream sent (comments and `retry:` skipped)."""
    parsed = []
    for block in "".join(chunks).split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            if name == "data":
                fields["data"] = fields["data"] + "\n" + value if "data" in fields else value
            elif name in ("event", "id"):
                fields[name] = value
        if "event" in fields:
            parsed.append(fields)
    return parsed


def chunk_text(chunk: bytes | str) -> str:
    return chunk.decode() if isinstance(chunk, bytes) else chunk


def test_another_agency_gets_not_found_on_the_stream(other_desk, trafik_request):
    assert other_desk.get(stream_url(trafik_request)).status_code == 404


def test_logged_out_stream_goes_to_login(trafik_request):
    response = Client().get(stream_url(trafik_request))
    assert response.status_code == 302 and "/giris/" in response["Location"]


def test_detail_page_names_its_stream_and_keeps_the_poll_as_fallback(desk, trafik_request):
    html = desk.get(reverse("quote_request_detail", args=[trafik_request.public_id])).content.decode()
    version = re.search(r'data-version="([0-9a-f]+)"', html).group(1)
    assert f'data-stream-url="{stream_url(trafik_request)}?v={version}"' in html
    assert 'hx-trigger="every 1s"' in html  # live-results.js cancels it while the stream is open
    # The page's own script, from a static file (the Content-Security-Policy runs no inline one).
    assert '<script src="/static/insurehub/live-results.js"></script>' in html
    script = (settings.BASE_DIR / "static" / "insurehub" / "live-results.js").read_text()
    assert "new EventSource(" in script and "htmx:beforeRequest" in script


def test_stream_of_a_finished_request_sends_done_and_ends(desk, trafik_request):
    """Every insurer final: one `done` event with the whole table, then the stream ends."""
    for code in registered_codes():
        store_quote(trafik_request, code)
    response = desk.get(stream_url(trafik_request))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/event-stream")
    sent = events(chunk_text(chunk) for chunk in response.streaming_content)
    assert [event["event"] for event in sent] == ["done"]
    assert 'data-complete="true"' in sent[0]["data"] and "data-stream-url" not in sent[0]["data"]
    assert sent[0]["data"].count("data-stored-at=") == len(registered_codes())
    assert not live.watcher._subscriptions  # the stream let go of its subscription


def test_an_answer_stored_while_the_stream_waits_is_pushed(desk, trafik_request):
    """The page's own version is not sent again; an answer stored later wakes the stream through
    the process's watcher, and the last answer ends it with `done`."""
    page = desk.get(reverse("quote_request_detail", args=[trafik_request.public_id])).content.decode()
    version = re.search(r'data-version="([0-9a-f]+)"', page).group(1)
    response = desk.get(stream_url(trafik_request), {"v": version})
    chunks = iter(response.streaming_content)
    assert chunk_text(next(chunks)).startswith("retry:")
    codes = sorted(registered_codes())

    def answer_later(code_list: list[str]) -> None:
        time.sleep(0.3)  # the stream is waiting by then (nothing here measures how long it takes)
        try:
            for code in code_list:
                store_quote(trafik_request, code)
        finally:
            connections.close_all()

    worker = threading.Thread(target=answer_later, args=(codes[:1],))
    worker.start()
    first = events([chunk_text(next(chunks))])
    worker.join()
    assert [event["event"] for event in first] == ["results"]
    assert f'data-insurer="{codes[0]}" data-state="SUCCEEDED"' in first[0]["data"]
    assert first[0]["id"] != version and 'data-complete="false"' in first[0]["data"]

    worker = threading.Thread(target=answer_later, args=(codes[1:],))
    worker.start()
    rest = events(chunk_text(chunk) for chunk in chunks)
    worker.join()
    assert rest[-1]["event"] == "done" and 'data-complete="true"' in rest[-1]["data"]
    assert not live.watcher._subscriptions


def test_a_reconnect_gets_what_it_missed(desk, trafik_request):
    """`Last-Event-ID` (the browser's reconnect) wins over the page's version: a stream that
    starts behind the rows sends them at once."""
    page = desk.get(reverse("quote_request_detail", args=[trafik_request.public_id])).content.decode()
    version = re.search(r'data-version="([0-9a-f]+)"', page).group(1)
    store_quote(trafik_request, sorted(registered_codes())[0])
    response = desk.get(stream_url(trafik_request), {"v": "0"}, headers={"Last-Event-ID": version})
    chunks = iter(response.streaming_content)
    next(chunks)  # retry:
    sent = events([chunk_text(next(chunks))])
    response.close()
    assert sent[0]["event"] == "results" and sent[0]["id"] != version


def test_past_the_deadline_the_stream_closes_the_open_rows_and_ends(desk, trafik_request):
    QuoteRequest.objects.filter(pk=trafik_request.pk).update(deadline_at=timezone.now() - timedelta(seconds=1))
    sent = events(chunk_text(chunk) for chunk in desk.get(stream_url(trafik_request)).streaming_content)
    assert [event["event"] for event in sent] == ["done"]
    assert sent[0]["data"].count('data-state="NO_ANSWER"') == len(registered_codes())


def test_the_watcher_looks_at_every_watched_request_in_one_query(
    agents, trafik_request, django_assert_num_queries, monkeypatch
):
    """One query per look for all the streams of a process, and only a changed request is woken."""
    other = quote_request_being_asked(agents["ACENTE1"], monkeypatch)
    watcher = live.Watcher()
    mine, theirs, also_mine = (live.Subscription(r.pk) for r in (trafik_request, other, trafik_request))
    with django_assert_num_queries(1):
        watcher.look([mine, theirs, also_mine])
    for subscription in (mine, theirs, also_mine):
        assert subscription.changed.is_set()  # the first look tells every stream where it stands
        subscription.changed.clear()
    store_quote(trafik_request, sorted(registered_codes())[0])
    with django_assert_num_queries(1):
        watcher.look([mine, theirs, also_mine])
    assert mine.changed.is_set() and also_mine.changed.is_set() and not theirs.changed.is_set()
    assert mine.version == live.results_versions([trafik_request.pk])[trafik_request.pk]
