"""The issuance status pushed to its page (quotes/live.py, the `issuance` topic): access, events, caps."""

from __future__ import annotations

import re
import threading
import time

import pytest
from django.test import Client
from django.urls import reverse

from quotes import live
from quotes.models import InsurerQuote, Issuance
from quotes.services import issuance as svc
from quotes.services import quote_requests
from tests import samples
from tests.quotes.request_samples import tasks_not_sent
from tests.quotes.test_views_live import chunk_text, events
from work.item import WorkState

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def issuance(agents, sandbox, monkeypatch) -> Issuance:
    """ACENTE1's issuance of an anka quote, queued: no worker takes it, the test moves it."""
    tasks_not_sent(monkeypatch)
    request = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    row: InsurerQuote = request.insurer_quotes.get(insurer__code="anka")
    quote_requests.insurer_quote_fetch(row.id)
    return svc.issuance_start(user=agents["ACENTE1"], insurer_quote_id=row.id, payment_token=samples.PAYMENT_TOKEN)


def stream_url(issuance: Issuance) -> str:
    return reverse("issuance_stream", args=[issuance.pk])


def test_another_agency_gets_not_found_before_the_first_byte(other_desk, issuance):
    response = other_desk.get(stream_url(issuance))
    assert response.status_code == 404
    assert not response.streaming


def test_logged_out_stream_goes_to_login(issuance):
    response = Client().get(stream_url(issuance))
    assert response.status_code == 302 and "/giris/" in response["Location"]


def test_the_page_names_its_stream_and_keeps_the_poll_as_fallback(desk, issuance):
    html = desk.get(reverse("issuance_detail", args=[issuance.pk])).content.decode()
    version = live.issuance_versions([issuance.pk])[issuance.pk]
    assert f'data-live-stream="{stream_url(issuance)}?v={version}"' in html
    assert 'hx-trigger="every 1s"' in html
    assert re.search(r'<script src="[^"]*insurehub/live-status\.[^"]*js"', html)


def test_a_final_issuance_names_no_stream(desk, issuance):
    Issuance.objects.filter(pk=issuance.pk).update(state=WorkState.SUBMITTED, policy_no="ANKA-P-1")
    html = desk.get(reverse("issuance_detail", args=[issuance.pk])).content.decode()
    assert "data-live-stream" not in html and "hx-trigger" not in html


def test_the_outcome_stored_while_the_stream_waits_is_pushed_and_ends_it(desk, issuance):
    version = live.issuance_versions([issuance.pk])[issuance.pk]
    response = desk.get(f"{stream_url(issuance)}?v={version}")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/event-stream")
    body = iter(response.streaming_content)
    assert chunk_text(next(body)).startswith("retry:")

    def issued() -> None:
        time.sleep(0.4)
        Issuance.objects.filter(pk=issuance.pk).update(state=WorkState.SUBMITTED, policy_no="ANKA-P-77")

    threading.Thread(target=issued, daemon=True).start()
    started = time.monotonic()
    sent = events(chunk_text(chunk) for chunk in body)  # the stream ends after its `done`
    assert time.monotonic() - started < 5
    assert [event["event"] for event in sent] == ["done"]
    assert "ANKA-P-77" in sent[0]["data"] and 'data-state="SUBMITTED"' in sent[0]["data"]
    assert "data-live-stream" not in sent[0]["data"]  # the final fragment polls and streams no more


def test_an_unknown_outcome_is_pushed_as_it_happens(desk, issuance):
    """A send that may have gone out changes what the agent reads ("Sonuç bilinmiyor"): a `status` event."""
    version = live.issuance_versions([issuance.pk])[issuance.pk]
    response = desk.get(f"{stream_url(issuance)}?v={version}")
    body = iter(response.streaming_content)
    next(body)
    Issuance.objects.filter(pk=issuance.pk).update(maybe_sent=True, attempts=1, state=WorkState.PENDING)
    chunk = chunk_text(next(body))
    while chunk.startswith(":"):
        chunk = chunk_text(next(body))
    [event] = events([chunk])
    assert event["event"] == "status" and "Sonuç bilinmiyor" in event["data"]
    response.close()


def test_issuance_streams_count_against_the_same_caps(settings, desk, issuance):
    settings.QUOTE_LIVE_STREAMS_PER_SESSION = 1
    first = desk.get(stream_url(issuance))
    assert first.status_code == 200
    second = desk.get(stream_url(issuance))
    assert second.status_code == 429 and second["Retry-After"]
    first.close()
    third = desk.get(stream_url(issuance))
    assert third.status_code == 200
    third.close()
