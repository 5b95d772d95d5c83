"""Which kinds of durable work exist: each app registers its own in `AppConfig.ready()`.

The work pump, the dead-letter replay, the replay command and their admin read this registry,
the way the channel reads the adapter registry: a new kind of durable record (a cancellation, a
document) is its app's registration, not an edit to a hand-kept table in another app.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db.models import QuerySet

from work.item import WorkItem


@dataclass(frozen=True)
class WorkRegistration:
    """One kind of durable record.

    `name` is what an operator types (`replay_dead_letters --model issuance`). `task` is the
    dotted path of the django-q2 task that takes one record through its tries; the generic send
    (`work.dispatch.work_send`) hands it each record that became due, after the commit that made it
    due, and the generic pump (`work.dispatch.work_pump_kind`) takes back dead workers' records,
    queues those whose wait is over and sends again those whose task was lost.

    A kind that does not go one task per record says so instead: `send(ids)` and `pump()` replace
    the generic ones (sync items go to a few drain tasks that claim batches). `pump_hook()` runs
    before each generic pump pass of the kind, for what the kind keeps in step on its own (an
    issuance's expired payment tokens, policies still without a document record); it throttles
    itself.

    `replay_held(queryset)` names the dead letters that must stay where they are, each with the
    reason an operator reads (Turkish: an issuance whose request has a policy by now), before
    anything about them changes; `replay_prepare(queryset)` runs before the others go back to the
    queue (an issuance: which reference its next send carries); `replayed(ids)` after (a sync
    item's run is opened again).
    """

    name: str
    model: type[WorkItem]
    task: str = ""
    send: Callable[[list[int]], None] | None = None
    pump: Callable[[], list[int]] | None = None
    pump_hook: Callable[[], None] | None = None
    replay_held: Callable[[QuerySet], dict[int, str]] | None = None
    replay_prepare: Callable[[QuerySet], None] | None = None
    replayed: Callable[[list[int]], None] | None = None

    def __post_init__(self) -> None:
        if not self.task and (self.send is None or self.pump is None):
            raise ValueError(f"{self.name}: a kind of work needs its task, or its own send and pump")


_registry: dict[type[WorkItem], WorkRegistration] = {}
_pump_passes: dict[str, Callable[[], list[int]]] = {}


def work_kind_register(registration: WorkRegistration) -> None:
    _registry[registration.model] = registration


def work_kind_for(model: type[WorkItem]) -> WorkRegistration:
    try:
        return _registry[model]
    except KeyError:
        raise LookupError(f"{model.__name__} records are not a registered kind of work") from None


def work_kind_named(name: str) -> WorkRegistration:
    for registration in _registry.values():
        if registration.name == name:
            return registration
    raise LookupError(f"no kind of work is called {name!r}")


def work_kinds() -> Iterable[WorkRegistration]:
    return tuple(_registry.values())


def pump_pass_register(name: str, pump_pass: Callable[[], list[int]]) -> None:
    """Something the work pump does every pass that is not a kind of durable record: quote
    requests whose dispatch task was lost, sent again while their agent still waits. Returns
    the ids it moved, as a kind's pump does."""
    _pump_passes[name] = pump_pass


def pump_passes() -> Iterable[Callable[[], list[int]]]:
    return tuple(_pump_passes.values())
