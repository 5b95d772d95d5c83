"""The policy document's state pushed to the policy page while its PDF is fetched (quotes/live.py,
the `document` topic): access, the page's stream, the event that ends it."""

from __future__ import annotations

import threading
import time

import pytest
from django.test import Client
from django.urls import reverse

from documents import services
from documents.models import PolicyDocument
from tests.quotes.request_samples import tasks_not_sent
from tests.quotes.test_views_live import chunk_text, events
from tests.work.sends import hold_work_sends

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fetching(issue, monkeypatch):
    """An anka policy of ACENTE1 whose PDF is asked for and not fetched yet (no worker takes it)."""
    tasks_not_sent(monkeypatch)
    # Nor the document's fetch: a qcluster an earlier test of the session started would fetch it
    # before the test looks (the tests fetch it themselves).
    hold_work_sends(monkeypatch, PolicyDocument)
    policy = issue("anka")
    document = services.document_request(policy=policy)
    assert document.state == "QUEUED"
    return policy


def stream_url(policy) -> str:
    return reverse("policy_document_stream", args=[policy.pk])


def test_another_agency_gets_not_found_before_the_first_byte(client, agents, fetching):
    client.force_login(agents["ACENTE2"])
    response = client.get(stream_url(fetching))
    assert response.status_code == 404 and not response.streaming


def test_logged_out_stream_goes_to_login(fetching):
    response = Client().get(stream_url(fetching))
    assert response.status_code == 302 and "/giris/" in response["Location"]


def test_a_policy_without_a_document_has_no_stream(client, agents, issue):
    client.force_login(agents["ACENTE1"])
    assert client.get(stream_url(issue("anka"))).status_code == 404


def test_the_policy_page_names_the_stream_while_the_pdf_is_fetched(client, agents, fetching):
    client.force_login(agents["ACENTE1"])
    html = client.get(reverse("policy_detail", args=[fetching.pk])).content.decode()
    document = PolicyDocument.objects.get(policy=fetching)
    version = services.document_versions([document.pk])[document.pk]
    assert f'data-live-stream="{stream_url(fetching)}?v={version}"' in html
    assert 'hx-trigger="every 2s"' in html  # the fallback
    assert "insurehub/live-status" in html


def test_the_fetched_pdf_is_pushed_and_ends_the_stream(client, agents, fetching):
    client.force_login(agents["ACENTE1"])
    document = PolicyDocument.objects.get(policy=fetching)
    version = services.document_versions([document.pk])[document.pk]
    response = client.get(f"{stream_url(fetching)}?v={version}")
    assert response.status_code == 200
    body = iter(response.streaming_content)
    assert chunk_text(next(body)).startswith("retry:")

    def fetched() -> None:
        time.sleep(0.3)
        assert services.document_process(document.pk) == "SUBMITTED"

    worker = threading.Thread(target=fetched, daemon=True)
    worker.start()
    sent = events(chunk_text(chunk) for chunk in body)
    worker.join(timeout=10)
    # The fetch's claim (in flight) may be seen on the way: a "status" still reading "Hazırlanıyor";
    # the stream ends with the fetched document.
    kinds = [event["event"] for event in sent]
    assert kinds[-1] == "done" and set(kinds[:-1]) <= {"status"}, kinds
    done = sent[-1]["data"]
    assert "İndir (PDF)" in done and "data-live-stream" not in done
    # A re-fetch without htmx from the pushed fragment returns to the policy page, not to the stream.
    assert f'name="next" value="{reverse("policy_detail", args=[fetching.pk])}"' in done
