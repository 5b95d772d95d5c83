"""Every kind of durable record is sent and pumped by the same code, from its registration."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction
from django.utils.module_loading import import_string

from documents.models import PolicyDocument
from quotes.models import Issuance
from work import dispatch
from work.registry import work_kind_for, work_kind_named, work_kinds


def test_every_app_registered_its_kind_with_a_task_that_exists():
    """A task path with a typo would leave every record of its kind QUEUED with a task that fails."""
    kinds = {registration.name: registration for registration in work_kinds()}
    assert set(kinds) == {"sync", "issuance", "document", "cancellation", "production_check"}
    for registration in kinds.values():
        if registration.task:
            assert callable(import_string(registration.task)), registration.name
    # Sync items go to drains, not a task per item: the kind brings its own send and pump.
    assert kinds["sync"].send is not None and kinds["sync"].pump is not None
    assert work_kind_named("issuance") is work_kind_for(Issuance)


def test_a_record_is_sent_after_its_transaction_commits_and_never_after_a_rollback(
    db, monkeypatch, django_capture_on_commit_callbacks
):
    sent: list[tuple[str, int]] = []
    monkeypatch.setattr(dispatch, "work_task_send", lambda registration, pk: sent.append((registration.task, pk)))

    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            dispatch.work_send(Issuance, [41])
            raise RuntimeError("the issuance was not stored")
        assert sent == []
        dispatch.work_send(PolicyDocument, [42])
        assert sent == []  # not before the commit
    assert sent == [("documents.tasks.document_process", 42)]


def test_the_replay_command_offers_every_registered_kind_and_refuses_others(db):
    call_command("replay_dead_letters", "--model", "document", "--all")
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("replay_dead_letters", "--model", "invoice", "--all")
