"""The one replay path of every registered kind of durable work: dead letters back to the queue.

Behind the admin's replay actions (`work.admin.DeadLetterAdmin`) and the
`replay_dead_letters` command alike, so a kind's rules for a replay (which records stay where
they are, what the next send carries) are its registration's, kept in one place.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from integrations.answers.taxonomy import ErrorKind
from work.dispatch import work_send
from work.item import DEAD_STATES, WorkItem
from work.registry import work_kind_for
from work.services import work_replay

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeadLetterReplay:
    """What a replay did: the ids sent back to the queue, oldest first, and the dead letters it
    left where they are on purpose, each with the reason (Turkish, as the admin shows it)."""

    replayed: list[int]
    held: dict[int, str]


def dead_letters_replay(
    *,
    ids: Iterable[int] | None = None,
    kind: str | None = None,
    model: type[WorkItem],
    everything: bool = False,
) -> list[int]:
    """Send FAILED and DEFERRED records back to the queue, oldest first, after a fix: the one
    replay path of every registered kind of work (`work.registry`), behind the
    admin's action and `replay_dead_letters` alike.

    Choose them by `ids`, by error `kind`, or both; `everything=True` replays every dead letter
    of the model (asked for explicitly: a stray call must not resend every failed issuance).
    Returns the ids replayed, in order; records that are not dead letters are left alone, and
    so are those the kind holds back (`dead_letters_replay_outcome` says why).
    """
    return dead_letters_replay_outcome(ids=ids, kind=kind, model=model, everything=everything).replayed


def dead_letters_replay_outcome(
    *,
    ids: Iterable[int] | None = None,
    kind: str | None = None,
    model: type[WorkItem],
    everything: bool = False,
) -> DeadLetterReplay:
    """`dead_letters_replay`, answering also which dead letters were held back and why. A held
    one is left exactly as it was (an issuance keeps the reference the agent was shown)."""
    try:
        registration = work_kind_for(model)
    except LookupError:
        raise ValueError(f"{model.__name__} records can not be replayed") from None
    if ids is None and kind is None and not everything:
        raise ValueError("choose the dead letters to replay: ids, a kind, or everything=True")
    dead = model.objects.filter(state__in=DEAD_STATES)
    if ids is not None:
        dead = dead.filter(pk__in=list(ids))
    if kind is not None:
        dead = dead.filter(error_kind=ErrorKind(kind).value)
    held = registration.replay_held(dead) if registration.replay_held is not None else {}
    if held:
        dead = dead.exclude(pk__in=list(held))
    if registration.replay_prepare is not None:
        registration.replay_prepare(dead)
    replayed = work_replay(dead)
    if replayed:
        if registration.replayed is not None:
            registration.replayed(replayed)
        work_send(model, replayed)
    logger.info("replayed %s %s dead letters (%s held back)", len(replayed), model.__name__, len(held))
    return DeadLetterReplay(replayed=replayed, held=held)
