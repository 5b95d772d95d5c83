"""Which kinds of durable work exist: each app registers its own in `AppConfig.ready()`.

The work pump, the dead-letter replay and their admin read this registry, the way the channel
reads the adapter registry: a new kind of durable record (a cancellation, a document) is its
app's registration, not an edit to a hand-kept table in another app.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db.models import QuerySet

from integrations.work.item import WorkItem


@dataclass(frozen=True)
class WorkRegistration:
    """One kind of durable record.

    `send(ids)` hands records that became due to workers (after the commit that made them due);
    `pump()` takes back dead workers' records, queues those whose wait is over and sends them,
    run every second by the work pump; `replay_held(queryset)` names the dead letters that must
    stay where they are, each with the reason an operator reads (Turkish: an issuance whose
    request has a policy by now), before anything about them changes; `replay_prepare(queryset)`
    runs before the others go back to the queue (an issuance: which reference its next send
    carries); `replayed(ids)` after (a sync item's run is opened again).
    """

    model: type[WorkItem]
    send: Callable[[list[int]], None]
    pump: Callable[[], list[int]]
    replay_held: Callable[[QuerySet], dict[int, str]] | None = None
    replay_prepare: Callable[[QuerySet], None] | None = None
    replayed: Callable[[list[int]], None] | None = None


_registry: dict[type[WorkItem], WorkRegistration] = {}


def work_kind_register(registration: WorkRegistration) -> None:
    _registry[registration.model] = registration


def work_kind_for(model: type[WorkItem]) -> WorkRegistration:
    try:
        return _registry[model]
    except KeyError:
        raise LookupError(f"{model.__name__} records are not a registered kind of work") from None


def work_kinds() -> Iterable[WorkRegistration]:
    return tuple(_registry.values())
