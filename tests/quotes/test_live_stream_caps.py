"""Open live-results streams are capped per session and per user, in the shared cache (issue 21)."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from django.core.cache import caches
from django.test import Client, override_settings
from django.urls import reverse

from insurehub import cache_slots
from integrations.adapters.registry import registered_codes
from quotes import live
from quotes.models import QuoteRequest
from tests.conftest import wait_until
from tests.quotes.request_samples import quote_request_being_asked
from tests.quotes.test_views_live import store_quote

pytestmark = pytest.mark.django_db(transaction=True)

PER_SESSION = 2
PER_USER = 3


@pytest.fixture(autouse=True)
def small_caps(settings):
    settings.QUOTE_LIVE_STREAMS_PER_SESSION = PER_SESSION
    settings.QUOTE_LIVE_STREAMS_PER_USER = PER_USER


@pytest.fixture
def trafik_request(agents, monkeypatch) -> QuoteRequest:
    return quote_request_being_asked(agents["ACENTE1"], monkeypatch)


def stream_url(request: QuoteRequest) -> str:
    return reverse("quote_request_stream", args=[request.public_id])


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def user_slots_held(user) -> int:
    return cache_slots.slots_in_use(scope=f"live-stream:user:{user.pk}", limit=PER_USER)


def test_a_session_past_its_cap_gets_429_in_turkish_and_the_poll_takes_over(desk, trafik_request):
    """N streams open in one session; the N+1-th is refused with a Turkish sentence and Retry-After."""
    held = [desk.get(stream_url(trafik_request)) for _ in range(PER_SESSION)]
    assert all(r.status_code == 200 for r in held)

    refused = desk.get(stream_url(trafik_request))

    assert refused.status_code == 429
    assert refused["Retry-After"] == str(int(live.STREAM_MAX_SECONDS))
    assert "canlı sonuç bağlantısı sınırına ulaşıldı" in refused.content.decode()
    # The fallback the page switches to is not capped.
    fragment = desk.get(reverse("quote_request_results", args=[trafik_request.public_id]))
    assert fragment.status_code == 200
    for response in held:
        response.close()


def test_a_user_past_the_cap_over_several_sessions_is_refused(agents, trafik_request):
    """Two browsers of one agent share the user's cap; another agent is not affected."""
    user = agents["ACENTE1"]
    first, second = logged_in(user), logged_in(user)
    held = [first.get(stream_url(trafik_request)) for _ in range(PER_SESSION)]
    held.append(second.get(stream_url(trafik_request)))
    assert [r.status_code for r in held] == [200] * PER_USER

    assert second.get(stream_url(trafik_request)).status_code == 429
    other = logged_in(agents["ACENTE2"]).get(stream_url(trafik_request))
    assert other.status_code == 404  # another agency's request: checked before any slot is taken
    for response in held:
        response.close()


def test_a_stream_closed_before_its_first_event_gives_its_slot_back(desk, agents, trafik_request):
    """The browser went away before the body started: the server's close() releases the slot."""
    user = agents["ACENTE1"]
    responses = [desk.get(stream_url(trafik_request)) for _ in range(PER_SESSION)]
    assert user_slots_held(user) == PER_SESSION
    responses[0].close()
    assert user_slots_held(user) == PER_SESSION - 1
    again = desk.get(stream_url(trafik_request))
    assert again.status_code == 200
    for response in (*responses, again):
        response.close()
    assert user_slots_held(user) == 0


def test_a_stream_that_ends_by_itself_gives_its_slot_back(desk, agents, trafik_request):
    """Every insurer final: the stream sends `done` and ends; its slot is free with its last chunk."""
    for code in registered_codes():
        store_quote(trafik_request, code)
    response = desk.get(stream_url(trafik_request))
    chunks = list(response.streaming_content)
    assert chunks and user_slots_held(agents["ACENTE1"]) == 0


def test_a_slot_of_a_killed_process_expires_by_itself(desk, agents, trafik_request, monkeypatch):
    """No close() ever comes from a SIGKILLed worker: the slot's TTL frees it."""
    monkeypatch.setattr(live, "STREAM_SLOT_TTL_SECONDS", 1)
    abandoned = [desk.get(stream_url(trafik_request)) for _ in range(PER_SESSION)]  # never closed
    assert desk.get(stream_url(trafik_request)).status_code == 429
    time.sleep(1.2)
    fresh = desk.get(stream_url(trafik_request))
    assert fresh.status_code == 200
    fresh.close()
    del abandoned


def test_a_cache_that_does_not_answer_refuses_the_stream_with_503(desk, trafik_request, monkeypatch):
    """No count, no stream: the poll serves the agent meanwhile, never a 500."""

    def down(**kwargs):
        raise cache_slots.SlotsUnavailable("connection refused")

    monkeypatch.setattr(live, "slots_acquire", down)
    response = desk.get(stream_url(trafik_request))
    assert response.status_code == 503
    assert "şu an açılamıyor" in response.content.decode()


def test_slots_are_shared_through_the_database_cache_as_between_processes(agents):
    """Two cache objects on the database table (as two web processes have) meet one count."""
    from django.core.management import call_command

    table = {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "insurehub_cache_test",
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    }
    with override_settings(CACHES={"default": table, "other": table}):
        call_command("createcachetable", verbosity=0)
        caches["default"].clear()
        try:
            scopes = [("live-stream:user:7", 2)]
            one, _ = cache_slots.slots_acquire(scopes=scopes, ttl=60, cache_alias="default")
            two, _ = cache_slots.slots_acquire(scopes=scopes, ttl=60, cache_alias="other")
            three, full = cache_slots.slots_acquire(scopes=scopes, ttl=60, cache_alias="other")
            assert one and two and three is None and full == "live-stream:user:7"
            one.release()
            four, _ = cache_slots.slots_acquire(scopes=scopes, ttl=60, cache_alias="other")
            assert four is not None
        finally:
            caches["default"].clear()


def open_raw_stream(base_url: str, path: str, cookie: str) -> tuple[socket.socket, int]:
    """A browser's stream on a socket of its own: the status line read, the body left waiting."""
    host, port = base_url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5)
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return sock, int(head.split(b" ", 2)[1])


def test_real_connections_past_the_cap_and_a_dropped_one_freed(agents, trafik_request, live_server, monkeypatch):
    """Over HTTP, N+1 streams of one session: the last is refused; a browser that disconnects
    is noticed at the next keep-alive and its slot serves the next stream."""
    monkeypatch.setattr(live, "KEEPALIVE_SECONDS", 0.2)
    client = logged_in(agents["ACENTE1"])
    cookie = "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())
    path = stream_url(trafik_request)
    opened = []
    try:
        for _ in range(PER_SESSION):
            sock, status = open_raw_stream(live_server.url, path, cookie)
            opened.append(sock)
            assert status == 200
        sock, status = open_raw_stream(live_server.url, path, cookie)
        sock.close()
        assert status == 429

        opened.pop(0).close()  # the browser goes away; the server notices on its next write
        wait_until(lambda: user_slots_held(agents["ACENTE1"]) < PER_SESSION, timeout=10)
        sock, status = open_raw_stream(live_server.url, path, cookie)
        opened.append(sock)
        assert status == 200
    finally:
        for sock in opened:
            sock.close()


def test_many_threads_opening_at_once_never_exceed_the_cap(agents, trafik_request):
    """Twenty parallel opens of one user: exactly the cap gets through (cache.add is atomic)."""
    user = agents["ACENTE1"]
    statuses: list[int] = []
    held = []
    lock = threading.Lock()

    def open_stream() -> None:
        response = logged_in(user).get(stream_url(trafik_request))
        with lock:
            statuses.append(response.status_code)
            held.append(response)

    threads = [threading.Thread(target=open_stream) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses.count(200) == PER_USER and statuses.count(429) == 20 - PER_USER
    for response in held:
        response.close()
