"""The dispatch claims a request's rows in one statement and hands them to the I/O pool.

The pool is replaced by a list here (the calls then run in the test's thread, one by one, with
the real sandbox insurers): what is checked is which rows the dispatch hands out, and that a
row handed out is asked exactly once, not the pool's threading.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest

from integrations.adapters.registry import registered_codes
from integrations.models import Attempt
from quotes import fanout
from quotes.models import InsurerQuote
from quotes.services import quote_requests as svc
from tests import samples

pytestmark = pytest.mark.django_db


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, tuple]]:
    calls: list[tuple[Any, tuple]] = []
    monkeypatch.setattr(fanout, "submit", lambda fn, *args: calls.append((fn, args)))
    return calls


def test_dispatch_claims_every_row_then_each_insurer_is_asked_once(agents, sandbox, handed):
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)

    assert svc.quote_request_dispatch(request.pk) == len(registered_codes())

    rows = request.insurer_quotes.all()
    assert {row.state for row in rows} == {InsurerQuote.State.RUNNING}
    assert {row.attempt for row in rows} == {1}
    assert len({row.started_at for row in rows}) == 1
    for fn, args in handed:
        fn(*args)
    assert {row.state for row in request.insurer_quotes.all()} == {InsurerQuote.State.SUCCEEDED}
    assert Attempt.objects.filter(reference=svc.attempt_reference(request.pk), call="main").count() == len(
        registered_codes()
    )


def test_a_second_dispatch_of_the_same_request_hands_out_nothing(agents, sandbox, handed):
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    svc.quote_request_dispatch(request.pk)
    first = len(handed)

    assert svc.quote_request_dispatch(request.pk) == 0
    assert len(handed) == first


def test_a_row_closed_before_the_dispatch_is_not_asked(agents, sandbox, handed):
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    request.insurer_quotes.filter(insurer__code="anka").update(state=InsurerQuote.State.NO_ANSWER)

    assert svc.quote_request_dispatch(request.pk) == len(registered_codes()) - 1
    for fn, args in handed:
        fn(*args)
    assert request.insurer_quotes.get(insurer__code="anka").state == InsurerQuote.State.NO_ANSWER
    assert not Attempt.objects.filter(reference=svc.attempt_reference(request.pk), insurer_code="anka").exists()


def test_dask_rows_claimed_by_the_dispatch_count_the_address_checks_attempts(
    agents, sandbox, handed, monkeypatch: pytest.MonkeyPatch
):
    """The row was created with the quote's attempt cap; while its first call, the address check,
    runs, the row shows the address check's cap (here an admin's 2 against the quote's 3)."""
    from dataclasses import asdict

    from integrations.models import Insurer, OperationPolicy
    from integrations.operations import Operation
    from integrations.retry_policies import clear_policy_cache, default_policy

    address = Operation.DASK_ADDRESS.value
    for insurer in Insurer.objects.all():
        values = {**asdict(default_policy(address)), "max_attempts": 2}
        OperationPolicy.objects.update_or_create(insurer=insurer, operation=address, defaults=values)
    clear_policy_cache()
    data = {**samples.DASK_ADDRESS, **samples.DASK_RISK}
    request = svc.quote_request_create(user=agents["ACENTE1"], product="dask", data=data)
    assert {row.max_attempts for row in request.insurer_quotes.all()} == {3}
    svc.quote_request_dispatch(request.pk)
    seen: dict[str, int] = {}
    original = svc._ask

    def ask(row: InsurerQuote) -> None:
        seen[row.account.insurer.code] = InsurerQuote.objects.get(id=row.id).max_attempts
        original(row)

    monkeypatch.setattr(svc, "_ask", ask)
    for fn, args in handed:
        fn(*args)

    assert seen == {code: 2 for code in seen} and len(seen) == len(handed)
    assert request.insurer_quotes.exclude(state__in=InsurerQuote.FINAL_STATES).count() == 0


def test_a_retried_call_writes_each_attempt_the_failed_one_before_its_wait(agents, sandbox):
    """The throttled attempt's row (with the wait chosen) is written before the wait; the answer's
    row with the answer."""
    sandbox["anka"].state.add_faults([{"operation": "trafik_quote", "fault": "throttle", "wait_seconds": 1}])
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    anka = request.insurer_quotes.get(insurer__code="anka")
    written_before_wait: list[int] = []
    real_update = svc.InsurerQuote.objects.filter

    def on_retry_spy(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("state__in"):  # the RETRYING update, run after the failed attempt's flush
            written_before_wait.append(Attempt.objects.filter(reference=svc.attempt_reference(request.pk)).count())
        return real_update(*args, **kwargs)

    with mock.patch.object(svc.InsurerQuote.objects, "filter", side_effect=on_retry_spy):
        svc.insurer_quote_fetch(anka.id)

    attempts = list(
        Attempt.objects.filter(reference=svc.attempt_reference(request.pk), insurer_code="anka", call="main").order_by(
            "attempt_no"
        )
    )
    assert written_before_wait == [1]
    assert [a.ok for a in attempts] == [False, True]
    assert attempts[0].wait_reason.startswith("signal")
    anka.refresh_from_db()
    assert anka.state == InsurerQuote.State.SUCCEEDED


def test_a_call_that_crashes_keeps_its_attempt_rows(agents, sandbox, monkeypatch: pytest.MonkeyPatch):
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    anka = request.insurer_quotes.get(insurer__code="anka")
    real_run = svc.insurer_operation_run

    def answered_then_crashed(**kwargs: Any) -> Any:
        real_run(**kwargs)
        raise RuntimeError("worker crashed after the answer")

    monkeypatch.setattr(svc, "insurer_operation_run", answered_then_crashed)
    with pytest.raises(RuntimeError):
        svc.insurer_quote_fetch(anka.id)

    assert (
        Attempt.objects.filter(reference=svc.attempt_reference(request.pk), insurer_code="anka", ok=True).count() == 1
    )
