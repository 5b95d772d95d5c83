"""A quote is compared as lira only when it is in lira (CONTRACTS.md: money is TRY)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from integrations.answers.results import Quote
from integrations.calling.engine import Outcome
from quotes.models import InsurerQuote
from quotes.services import quote_requests
from tests import samples
from tests.quotes.request_samples import tasks_not_sent

pytestmark = pytest.mark.django_db


def test_a_quote_in_another_currency_is_refused_never_compared_as_lira(agents, sandbox, monkeypatch):
    """An insurer answers in USD: the row is FAILED with a Turkish reason, no premium to sort by;
    what it said is kept for support."""
    tasks_not_sent(monkeypatch)
    request = quote_requests.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    row = request.insurer_quotes.get(insurer__code="anka")
    usd = Quote(
        quote_no="AK-T-9", premium=Decimal("120.00"), currency="USD", valid_until=datetime.now(UTC) + timedelta(days=1)
    )
    monkeypatch.setattr(quote_requests, "insurer_operation_run", lambda **kwargs: Outcome(usd, None, 1))
    quote_requests.insurer_quote_fetch(row.id)
    row.refresh_from_db()
    assert row.state == InsurerQuote.State.FAILED and row.premium is None
    assert row.provider_code == "CURRENCY_NOT_TRY"
    assert row.message == "Şirket teklifi TL dışında bir para biriminde (USD) verdi; TL tekliflerle karşılaştırılamaz."
    assert row.provider_message == "AK-T-9: 120.00 USD"
