"""Quote requests and issuances that the test works by hand, with no task sent for them.

Tests that commit (`transaction=True`, browser tests) share the session's qcluster: a task sent
for their records reaches it, a worker that could claim a quote row or an issuance first.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from quotes.models import InsurerQuote, Issuance, QuoteRequest
from quotes.services import quote_requests
from tests import samples
from tests.work.sends import hold_work_sends


def tasks_not_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    """No dispatch task for a new quote request and no task for a new issuance: the test's own
    calls work them, and no other worker of the session races it."""
    monkeypatch.setattr(quote_requests, "_enqueue_dispatch", lambda request_id: None)
    hold_work_sends(monkeypatch, Issuance)


def quote_request_being_asked(user: User, monkeypatch: pytest.MonkeyPatch) -> QuoteRequest:
    """A trafik request of the user's agency, every row claimed as a dispatch claims it (RUNNING),
    no insurer asked: the page tests store the answers themselves.

    Not left QUEUED: a request whose rows all stay queued for a few seconds is, to the work pump
    of a qcluster that an earlier test started, one whose dispatch was lost, and it sends it again
    (CI: a real Anka answer on the row the test was about to store).
    """
    tasks_not_sent(monkeypatch)
    request = quote_requests.quote_request_create(user=user, product="trafik", data=samples.TRAFIK)
    request.insurer_quotes.filter(state=InsurerQuote.State.QUEUED).update(
        state=InsurerQuote.State.RUNNING, attempt=1, started_at=timezone.now()
    )
    return request
