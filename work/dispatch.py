"""Handing durable records to workers, and the pump pass of one kind: the same for every kind.

A record is sent once the state that made it due is committed (a worker must never claim a row
it cannot see yet, or a row a rollback takes back); in autocommit, as the pump runs, that is at
once. Sending twice is harmless: the guarded claim (`work.services.work_claim`) lets one worker in,
and django-q2's redelivery of a task is never an insurer retry (`Q_CLUSTER["max_attempts"]` is 1).
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from work.item import WorkItem
from work.registry import WorkRegistration, work_kind_for
from work.services import work_promote_due, work_reclaim_expired, work_requeue_orphans


def work_send(model: type[WorkItem], ids: list[int]) -> None:
    """Hand these records of `model` to workers once the current transaction commits."""
    registration = work_kind_for(model)
    if registration.send is not None:
        registration.send(ids)
        return
    for pk in ids:
        transaction.on_commit(_sender(registration, pk), robust=True)


def _sender(registration: WorkRegistration, pk: int) -> Callable[[], None]:
    # A named function, not a partial: Django names a robust callback that failed by its __qualname__.
    def send_after_commit() -> None:
        work_task_send(registration, pk)

    return send_after_commit


def work_task_send(registration: WorkRegistration, pk: int) -> None:
    """One task for one record, named after both (django-q2's monitor and the logs show it)."""
    from django_q.tasks import async_task

    async_task(registration.task, pk, task_name=f"{registration.name}-{pk}")


def work_pump_kind(registration: WorkRegistration) -> list[int]:
    """One pump pass of one kind: take back dead workers' records, queue those whose wait is
    over, send again those whose task was lost (`work_requeue_orphans`); returns their ids."""
    if registration.pump is not None:
        return registration.pump()
    if registration.pump_hook is not None:
        registration.pump_hook()
    model = registration.model
    ids = work_reclaim_expired(model) + work_promote_due(model)
    ids += [pk for pk in work_requeue_orphans(model) if pk not in ids]
    work_send(model, ids)
    return ids
