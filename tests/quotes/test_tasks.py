"""The quote desk's django-q2 tasks through a real cluster: what the queue keeps of them."""

from __future__ import annotations

import pytest

from quotes.models import InsurerQuote
from quotes.services import quote_requests as svc
from tests import samples
from tests.conftest import wait_until


@pytest.mark.django_db(transaction=True)
def test_a_dispatch_success_is_not_stored_but_other_tasks_are(qcluster, agents, sandbox):
    """The request's rows hold the outcome, so the queue does not also store a success per quote
    request (a write on the database the agent is waiting on); other tasks' results it keeps."""
    from django_q.models import Task
    from django_q.tasks import async_task

    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    wait_until(lambda: not request.insurer_quotes.exclude(state__in=InsurerQuote.FINAL_STATES).exists(), timeout=30)
    # The monitor stores results in the order they come: once this later one is stored, the
    # dispatch's would have been too.
    marker = async_task("math.floor", 1.5)
    wait_until(lambda: Task.objects.filter(id=marker).exists(), timeout=30)

    assert set(request.insurer_quotes.values_list("state", flat=True)) == {"SUCCEEDED"}
    assert not Task.objects.filter(name=f"quote-request-{request.pk}").exists()


@pytest.mark.django_db(transaction=True)
def test_a_dispatch_task_lost_at_the_ask_is_sent_again_while_the_agent_waits(qcluster, agents, sandbox, monkeypatch):
    """The broker refuses the dispatch task at the ask (Redis restarting): the request is stored
    and the agent's page opens all the same; the work pump sees its rows still queued a few
    seconds later, with nothing waiting in the broker, and sends the dispatch again."""
    from datetime import timedelta

    import django_q.tasks
    from django.utils import timezone

    real_async_task = django_q.tasks.async_task

    def broker_down(*args, **kwargs):
        raise ConnectionError("Error 111 connecting to the broker. Connection refused.")

    monkeypatch.setattr(django_q.tasks, "async_task", broker_down)
    request = svc.quote_request_create(user=agents["ACENTE1"], product="trafik", data=samples.TRAFIK)
    monkeypatch.setattr(django_q.tasks, "async_task", real_async_task)
    assert set(request.insurer_quotes.values_list("state", flat=True)) == {"QUEUED"}
    assert svc.quote_requests_redispatch_lost() == []  # too early to call it lost

    type(request).objects.filter(pk=request.pk).update(created_at=timezone.now() - timedelta(seconds=5))
    assert svc.quote_requests_redispatch_lost() == [request.pk]
    wait_until(lambda: not request.insurer_quotes.exclude(state__in=InsurerQuote.FINAL_STATES).exists(), timeout=30)
    assert set(request.insurer_quotes.values_list("state", flat=True)) == {"SUCCEEDED"}
    assert svc.quote_requests_redispatch_lost() == []  # answered: nothing to send again
