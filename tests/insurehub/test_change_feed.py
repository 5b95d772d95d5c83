"""The change feed (insurehub/change_feed.py) on the embedded default, and its failures.

The real servers (Redis pub/sub, PostgreSQL LISTEN/NOTIFY) are in tests/scaleout/test_change_feed.py.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import transaction
from django.urls import reverse

from insurehub import change_feed
from quotes import live
from quotes.models import QuoteRequest
from quotes.services.quote_requests import rows_changed
from tests.quotes.request_samples import quote_request_being_asked
from tests.quotes.test_views_live import chunk_text, events, store_quote

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def publish_not_paused(monkeypatch):
    """Each test starts with no pause left by an earlier test's failed publish."""
    monkeypatch.setattr(change_feed, "_publish_down_until", 0.0)


@pytest.fixture
def trafik_request(agents, monkeypatch) -> QuoteRequest:
    return quote_request_being_asked(agents["ACENTE1"], monkeypatch)


def test_sqlite_has_no_server_so_the_watcher_stays_the_bus(settings):
    settings.REDIS_URL = ""
    settings.CHANGE_FEED = "auto"
    assert change_feed.mode() == ""
    assert change_feed.listen("results", 1, lambda: None) is None
    assert live.Watcher().pause() == live.WATCH_INTERVAL


def test_the_choice_of_server(settings):
    settings.CHANGE_FEED = "auto"
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    assert change_feed.mode() == "redis"
    settings.CHANGE_FEED = "off"
    assert change_feed.mode() == ""
    settings.CHANGE_FEED = "postgres"
    assert change_feed.mode() == "postgres"
    # With a server the watcher's look is the slow guard against a lost message.
    assert live.Watcher().pause() == live.SAFETY_INTERVAL


def test_a_message_wakes_the_readers_of_its_key_and_no_other():
    listener = change_feed.Listener()
    mine, also_mine, theirs, other_topic = (threading.Event() for _ in range(4))
    listener._by_message = {}  # routing only: no thread, no server
    for topic, key, event in (
        ("results", 7, mine),
        ("results", 7, also_mine),
        ("results", 8, theirs),
        ("issuance", 7, other_topic),
    ):
        listener._by_message.setdefault(f"{topic}:{key}", set()).add(change_feed.Listening(f"{topic}:{key}", event.set))
    listener.dispatch("results:7")
    assert mine.is_set() and also_mine.is_set()
    assert not theirs.is_set() and not other_topic.is_set()


def test_a_reader_that_stopped_listening_is_not_woken():
    listener = change_feed.Listener()
    woken = threading.Event()
    listening = change_feed.Listening("results:3", woken.set)
    listener._by_message = {"results:3": {listening}}
    listener.unlisten(listening)
    listener.dispatch("results:3")
    assert not woken.is_set() and listener._by_message == {}


def test_a_poked_stream_sends_the_answer_without_waiting_for_the_watcher(trafik_request):
    """What a feed message does to a waiting stream: it renders at once, though the watcher
    (here looking once an hour) has not looked again."""
    watcher = live.Watcher(interval=3600, safety_interval=3600)
    version = live.results_versions([trafik_request.pk])[trafik_request.pk]
    rendered_versions = []

    def render(seen_at):
        current = live.results_versions([trafik_request.pk])[trafik_request.pk]
        rendered_versions.append(current)
        return live.Rendered(html=f"<section>{current}</section>", version=current, all_final=False)

    stream = live.results_events(
        request_id=trafik_request.pk,
        deadline_at_epoch=time.time() + 600,
        render=render,
        seen_version=version,
        watch=watcher,
        max_seconds=20,
    )
    assert next(stream).startswith("retry:")
    sent: list[str] = []
    reader = threading.Thread(target=lambda: sent.append(next(stream)), daemon=True)
    reader.start()
    # The watcher's first look tells the stream where it stands (nothing new): no event.
    time.sleep(0.3)
    assert not sent
    store_quote(trafik_request, "anka")
    [subscription] = watcher._subscriptions
    started = time.monotonic()
    subscription.poke()
    reader.join(timeout=5)
    assert time.monotonic() - started < 2
    [event] = events(sent)
    assert event["event"] == "results" and event["id"] != version
    stream.close()
    assert not watcher._subscriptions


def test_a_redis_that_does_not_answer_never_fails_the_write(settings, trafik_request, caplog):
    """Nothing listens on port 1: the publish fails after the commit, is logged and counted, and
    the stored answer stands (the streams' safety re-check finds it)."""
    settings.CHANGE_FEED = "redis"
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    before = change_feed.stats()["publish_failures"]
    with transaction.atomic():
        store_quote(trafik_request, "anka")
        change_feed.publish(live.RESULTS_TOPIC, trafik_request.pk)
    assert change_feed.stats()["publish_failures"] == before + 1
    assert trafik_request.insurer_quotes.filter(insurer__code="anka", state="SUCCEEDED").exists()
    assert "publishing results:" in caplog.text


def test_a_rolled_back_change_announces_nothing(settings, trafik_request):
    settings.CHANGE_FEED = "redis"
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    before = change_feed.stats()
    with pytest.raises(RuntimeError), transaction.atomic():
        change_feed.publish(live.RESULTS_TOPIC, trafik_request.pk)
        raise RuntimeError("the write failed")
    after = change_feed.stats()
    assert after["publish_failures"] == before["publish_failures"]
    assert after["published"] == before["published"]


def test_after_a_failed_publish_the_next_ones_skip_the_server_for_a_second(settings, monkeypatch):
    """A Redis that hangs must not cost every stored answer its timeout: one try, then a pause."""
    settings.CHANGE_FEED = "redis"
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    monkeypatch.setattr(change_feed, "_publish_down_until", 0.0)
    tries = []
    real = change_feed._redis_publisher

    def counted():
        tries.append(1)
        return real()

    monkeypatch.setattr(change_feed, "_redis_publisher", counted)
    before = change_feed.stats()["publish_failures"]
    for key in range(3):
        change_feed.publish(live.RESULTS_TOPIC, key)  # outside a transaction: sent at once
    assert len(tries) == 1
    assert change_feed.stats()["publish_failures"] == before + 3
    monkeypatch.setattr(change_feed, "_publish_down_until", 0.0)  # the pause is over
    change_feed.publish(live.RESULTS_TOPIC, 9)
    assert len(tries) == 2


def test_with_the_feed_down_the_safety_look_still_brings_the_answer(settings, monkeypatch, desk, trafik_request):
    """Redis gone: the publish fails (the write stands), the listener cannot subscribe, and the
    stream gets the answer from the watcher's one-second safety look all the same."""
    settings.CHANGE_FEED = "redis"
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    monkeypatch.setattr(change_feed, "listener", change_feed.Listener())
    monkeypatch.setattr(change_feed, "RECONNECT_SECONDS", 0.2)
    failures = change_feed.stats()["publish_failures"]
    version = live.results_versions([trafik_request.pk])[trafik_request.pk]
    url = reverse("quote_request_stream", args=[trafik_request.public_id])
    response = desk.get(f"{url}?v={version}")
    body = iter(response.streaming_content)
    assert chunk_text(next(body)).startswith("retry:")

    def answered() -> None:
        time.sleep(0.3)
        with transaction.atomic():
            store_quote(trafik_request, "anka")
            rows_changed(trafik_request.pk)

    threading.Thread(target=answered, daemon=True).start()
    started = time.monotonic()
    chunk = chunk_text(next(body))
    while chunk.startswith(":"):
        chunk = chunk_text(next(body))
    [event] = events([chunk])
    assert event["event"] == "results" and 'data-insurer="anka" data-state="SUCCEEDED"' in event["data"]
    assert time.monotonic() - started < live.SAFETY_INTERVAL + 2.5
    assert change_feed.stats()["publish_failures"] > failures
    response.close()
