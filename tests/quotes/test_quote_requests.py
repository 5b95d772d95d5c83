"""Quote requests: validation, fan-out to every insurer, each answer stored as it lands."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from integrations.adapters.registry import registered_codes
from quotes.models import InsurerQuote, QuoteRequest
from quotes.services import quote_requests as svc
from tests import samples

pytestmark = pytest.mark.django_db


def fetch_all(request: QuoteRequest) -> None:
    """Run every insurer's call here, in the test's thread: the same service the I/O pool runs."""
    for row_id in request.insurer_quotes.values_list("id", flat=True):
        svc.insurer_quote_fetch(row_id)


def test_bad_input_names_each_field_and_saves_nothing(agents):
    """Invalid input raises with a Turkish message per field; no request is half-saved."""
    data = {**samples.TRAFIK, "plate": "99ZZ1", "owner_id": "12345678901"}
    with pytest.raises(svc.InputInvalid) as caught:
        svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=data)
    assert set(caught.value.errors) == {"plate", "owner_id"}
    assert QuoteRequest.objects.count() == 0


def test_request_gets_one_row_per_active_insurer(agents, django_capture_on_commit_callbacks):
    """Every active insurer selling the product gets a queued row; the dispatch is queued after commit."""
    with django_capture_on_commit_callbacks() as callbacks:
        request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    assert len(callbacks) == 1
    assert sorted(request.insurer_quotes.values_list("insurer__code", flat=True)) == registered_codes()
    assert set(request.insurer_quotes.values_list("state", flat=True)) == {"QUEUED"}
    assert request.deadline_at > timezone.now()


def test_inactive_insurer_is_not_asked(agents):
    """An insurer switched off in admin gets no row."""
    from integrations.models import Insurer

    Insurer.objects.filter(code="deniz").update(is_active=False)
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    assert "deniz" not in request.insurer_quotes.values_list("insurer__code", flat=True)


def test_answers_are_stored_with_refusal_reasons_in_turkish(agents, sandbox):
    """Quotes land with premiums; a refusal keeps the insurer's code and a Turkish reason."""
    sandbox["bogazici"].state.add_faults([{"operation": "trafik_quote", "fault": "error", "code": "BS-300"}])
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    fetch_all(request)
    rows = {r.insurer.code: r for r in request.insurer_quotes.select_related("insurer")}
    assert rows["bogazici"].state == "FAILED"
    assert rows["bogazici"].message == "Araç teminata uygun değil"
    assert rows["bogazici"].provider_code == "BS-300"
    for code in sorted(set(registered_codes()) - {"bogazici"}):
        assert rows[code].state == "SUCCEEDED" and rows[code].premium > 0


def test_dask_asks_the_address_then_the_quote(agents, sandbox):
    """DASK calls the address check and then the quote, with the building id from the first."""
    data = {**samples.DASK_RISK, **samples.DASK_ADDRESS}
    request = svc.quote_request_create(user=agents["ACENTE1"], product="dask", data=data)
    fetch_all(request)
    assert set(request.insurer_quotes.values_list("state", flat=True)) == {"SUCCEEDED"}
    for server in sandbox.values():
        received = server.state.counts()["received"]
        assert received.get("dask_address") == 1 and received.get("dask_quote") == 1


def test_every_call_for_a_request_is_findable_in_the_attempt_log(agents, sandbox):
    """On-call asks "what did each insurer say to request 42?": its attempts carry "Q-42"."""
    from integrations.models import Attempt

    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "html", "http_status": 503}])
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    other = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    fetch_all(request)
    fetch_all(other)

    mine = Attempt.objects.filter(reference=f"Q-{request.pk}")
    assert list(mine.exclude(call="main").values_list("insurer_code", "call")) == [("cinar", "token")]
    assert sorted(mine.filter(call="main").values_list("insurer_code", "attempt_no", "ok")) == [
        ("anka", 1, False),
        ("anka", 2, True),
        *((code, 1, True) for code in registered_codes() if code != "anka"),
    ]
    assert Attempt.objects.filter(reference=f"Q-{other.pk}", call="main").count() == len(registered_codes())


def test_retrying_state_is_visible_while_an_insurer_is_retried(agents, sandbox):
    """A throttled insurer is shown as retrying (attempt n of max) and then answers."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "throttle", "wait_seconds": 1}])
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    anka = request.insurer_quotes.get(insurer__code="anka")
    svc.insurer_quote_fetch(anka.id)
    anka.refresh_from_db()
    assert anka.state == "SUCCEEDED" and anka.attempt == 2


def test_overdue_rows_close_as_no_answer(agents):
    """Past the deadline, an insurer that never answered shows "Yanıt alınamadı"."""
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    QuoteRequest.objects.filter(pk=request.pk).update(deadline_at=timezone.now() - timedelta(seconds=1))
    request.refresh_from_db()
    assert svc.quote_request_close_overdue(request=request) == len(registered_codes())
    assert set(InsurerQuote.objects.values_list("state", flat=True)) == {"NO_ANSWER"}
    assert set(InsurerQuote.objects.values_list("message", flat=True)) == {"Yanıt alınamadı."}
