"""A quote request whose insurers are being asked, with no insurer asked: the page tests' answers
are stored by the test, so which way a row reached the page is known, not raced against insurers."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from quotes.models import InsurerQuote, QuoteRequest
from quotes.services import quote_requests
from tests import samples


def quote_request_being_asked(user: AbstractBaseUser, monkeypatch) -> QuoteRequest:
    """ACENTE1-style trafik request, every row claimed as a dispatch claims it (RUNNING), none sent.

    Not left QUEUED: a request whose rows all stay queued for a few seconds is, to the work pump
    of a qcluster that an earlier test started, one whose dispatch was lost, and it sends it again
    (CI: a real Anka answer on the row the test was about to store).
    """
    monkeypatch.setattr(quote_requests, "_enqueue_dispatch", lambda request_id: None)
    request = quote_requests.quote_request_create(user=user, product="trafik", data=samples.TRAFIK)
    request.insurer_quotes.filter(state=InsurerQuote.State.QUEUED).update(
        state=InsurerQuote.State.RUNNING, attempt=1, started_at=timezone.now()
    )
    return request
