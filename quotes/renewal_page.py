"""Notes other apps add to each reminder on the renewals list (the customer's own message, say),
registered from their `AppConfig.ready()`: the list is this app's, the notes theirs, and this
app never imports them (tests/test_layers.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

logger = logging.getLogger(__name__)

# (the reminders shown on the page, any model with a pk) -> {reminder pk: a short plain text}.
ReminderNotes = Callable[[Sequence[object]], dict[int, str]]

_NOTES: dict[str, ReminderNotes] = {}


def renewal_reminder_notes_register(name: str, notes: ReminderNotes) -> None:
    """Registering the same name again replaces it (ready() may run twice in a test process)."""
    _NOTES[name] = notes


def renewal_reminder_notes(reminders: Sequence[object]) -> dict[int, str]:
    """Every registered provider's notes per reminder, joined; one that fails is logged and left
    out: the agent still gets the list."""
    joined: dict[int, list[str]] = {}
    for name, notes in _NOTES.items():
        try:
            for pk, text in notes(reminders).items():
                joined.setdefault(pk, []).append(text)
        except Exception:
            logger.exception("renewals list: the reminder notes %r failed", name)
    return {pk: "; ".join(texts) for pk, texts in joined.items()}
