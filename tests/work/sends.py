"""Tasks of durable work kept from the workers, so the test is the only worker of those records.

The product sends one task per record through `work.dispatch.work_task_send`; these wrap it for
the kinds named, and let every other kind's tasks through as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from work import dispatch
from work.dispatch import work_pump_kind
from work.item import WorkItem
from work.registry import WorkRegistration, work_kind_for


def _held(
    models: tuple[type[WorkItem], ...], into: list | None, *, as_task: bool
) -> Callable[[WorkRegistration, int], None]:
    real = dispatch.work_task_send

    def send(registration: WorkRegistration, pk: int) -> None:
        if registration.model not in models:
            real(registration, pk)
        elif into is not None:
            into.append((registration.task, pk) if as_task else pk)

    return send


def hold_work_sends(
    monkeypatch: pytest.MonkeyPatch, *models: type[WorkItem], into: list | None = None, as_task: bool = False
) -> list | None:
    """For the rest of the test, records of `models` are not sent; their ids (or `(task, id)` with
    `as_task`) go to `into` when one is given."""
    monkeypatch.setattr(dispatch, "work_task_send", _held(models, into, as_task=as_task))
    return into


@contextmanager
def work_sends_held(*models: type[WorkItem], into: list | None = None) -> Iterator[list | None]:
    """`hold_work_sends` for a block (a state machine's own stack of patches)."""
    real = dispatch.work_task_send
    setattr(dispatch, "work_task_send", _held(models, into, as_task=False))  # noqa: B010 - a test's seam
    try:
        yield into
    finally:
        setattr(dispatch, "work_task_send", real)  # noqa: B010


def pump_kind(model: type[WorkItem]) -> list[int]:
    """One work-pump pass of one kind, as the pump makes it."""
    return work_pump_kind(work_kind_for(model))
