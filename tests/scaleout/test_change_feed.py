"""The change feed on the real servers (insurehub/change_feed.py): Redis pub/sub, PostgreSQL LISTEN/NOTIFY.

Each test runs once per server (`CHANGE_FEED` forces it: the scale-out setup has both). The
stream tests turn the watcher's safety look down to once every 30 s, so an answer reaching
the browser within a second can only have come through the feed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse

from insurehub import change_feed
from quotes import live
from quotes.models import QuoteRequest
from quotes.services.quote_requests import rows_changed
from tests.conftest import wait_until
from tests.quotes.request_samples import quote_request_being_asked
from tests.quotes.test_live_stream_caps import open_raw_stream
from tests.quotes.test_views_live import store_quote

pytestmark = [pytest.mark.scaleout, pytest.mark.django_db(transaction=True)]


@pytest.fixture(params=["redis", "postgres"])
def feed(request, engines, settings, monkeypatch) -> Iterator[change_feed.Listener]:
    """The feed on one server, with a listener of this test's own."""
    settings.CHANGE_FEED = request.param
    listener = change_feed.Listener()
    monkeypatch.setattr(change_feed, "listener", listener)
    yield listener
    # Hand the LISTEN connection back before the test database goes: no reader, no subscription.
    with listener._lock:
        listener._by_message.clear()
    wait_until(lambda: not listener.connected.is_set(), timeout=10)
    wait_until(lambda: not live.watcher._subscriptions, timeout=10)


@pytest.fixture
def trafik_request(agents, monkeypatch) -> QuoteRequest:
    return quote_request_being_asked(agents["ACENTE1"], monkeypatch)


def subscribed(listener: change_feed.Listener, *events: threading.Event) -> None:
    """Wait until the listener holds its subscription, then forget its first wake-up of everybody."""
    assert listener.connected.wait(5), "the listener did not subscribe"
    time.sleep(0.2)
    for event in events:
        event.clear()


def test_a_publish_wakes_the_reader_of_its_key_after_the_commit_and_no_other(feed, trafik_request):
    mine, theirs = threading.Event(), threading.Event()
    change_feed.listen(live.RESULTS_TOPIC, trafik_request.pk, mine.set)
    change_feed.listen(live.RESULTS_TOPIC, trafik_request.pk + 1, theirs.set)
    subscribed(feed, mine, theirs)
    with transaction.atomic():
        store_quote(trafik_request, "anka")
        rows_changed(trafik_request.pk)
        time.sleep(0.3)
        assert not mine.is_set()  # not before the commit: the reader would read the old rows
    assert mine.wait(2)
    assert not theirs.wait(0.5)


def test_a_rolled_back_change_sends_nothing(feed, trafik_request):
    woken = threading.Event()
    change_feed.listen(live.RESULTS_TOPIC, trafik_request.pk, woken.set)
    subscribed(feed, woken)
    with pytest.raises(RuntimeError), transaction.atomic():
        rows_changed(trafik_request.pk)
        raise RuntimeError("the write failed")
    assert not woken.wait(1)


def read_until(sock, marker: bytes, timeout: float) -> bytes:
    sock.settimeout(timeout)
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        chunk = sock.recv(65536)
        if not chunk:
            break
        seen += chunk
    return seen


def test_an_answer_reaches_the_open_stream_over_http_through_the_feed(
    feed, agents, trafik_request, live_server, monkeypatch
):
    monkeypatch.setattr(live.watcher, "safety_interval", 30.0)
    monkeypatch.setattr(live, "KEEPALIVE_SECONDS", 0.3)  # a gone browser is noticed at once
    client = Client()
    client.force_login(agents["ACENTE1"])
    cookie = "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())
    version = live.results_versions([trafik_request.pk])[trafik_request.pk]
    path = f"{reverse('quote_request_stream', args=[trafik_request.public_id])}?v={version}"
    sock, status = open_raw_stream(live_server.url, path, cookie)
    try:
        assert status == 200
        assert feed.connected.wait(5)
        # Any look the watcher had under way (a shorter pause of an earlier test) is over: its
        # next is 30 s away.
        time.sleep(1.2)
        received = change_feed.stats()["received"]
        with transaction.atomic():
            store_quote(trafik_request, "anka")
            rows_changed(trafik_request.pk)
        stored = time.monotonic()
        body = read_until(sock, b"event: results", timeout=5)
        assert b"event: results" in body
        assert time.monotonic() - stored < 1.0
        assert b'data-insurer="anka"' in body or b"ANKA-Q-1" in body
        assert change_feed.stats()["received"] > received
    finally:
        sock.close()
