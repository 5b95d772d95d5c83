"""Which durable tries are free of the retry budget: the insurer asked for the wait, or nothing
was tried. A document "not ready yet" is such a wait; a failure is not."""

from __future__ import annotations

import pytest

from documents.models import PolicyDocument
from integrations.answers.taxonomy import ErrorKind
from work.services import retry_permit


@pytest.mark.parametrize(
    ("kind", "code", "free"),
    [
        (ErrorKind.THROTTLED, "RATE_LIMITED", True),
        (ErrorKind.NOT_READY, "DOCUMENT_NOT_READY", True),
        (ErrorKind.UNAVAILABLE, "HTTP_503", False),
    ],
)
def test_a_wait_the_insurer_asked_for_is_free_a_failure_is_paid(db, kind, code, free):
    item = PolicyDocument(attempts=1, error_kind=kind.value, provider_code=code)
    permit = retry_permit(item, insurer_code="anka")
    assert (permit == "free") is free
    assert permit in ("free", "spent", "denied")
