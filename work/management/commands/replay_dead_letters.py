"""Send dead letters (FAILED / DEFERRED records) back to the queue after a fix, oldest first."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from integrations.answers.taxonomy import ErrorKind
from work.registry import work_kind_named, work_kinds
from work.replay import dead_letters_replay_outcome


class Command(BaseCommand):
    help = (
        "Replay dead letters in their original order: one or more (--id), all of one error kind (--kind), "
        "or all of them (--all); --id and --kind together narrow each other."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--id", dest="ids", type=int, action="append", metavar="N", help="record id (repeatable)")
        parser.add_argument("--kind", choices=[kind.value for kind in ErrorKind], help="error kind, e.g. unavailable")
        parser.add_argument(
            "--model",
            choices=sorted(registration.name for registration in work_kinds()),
            default="sync",
            help="the kind of work: sync items (default), issuances, documents, cancellations, production-list checks",
        )
        parser.add_argument("--all", dest="everything", action="store_true", help="every dead letter of the model")

    def handle(self, *args: Any, **options: Any) -> None:
        ids, kind = options["ids"], options["kind"]
        if not (ids or kind or options["everything"]):
            raise CommandError("choose what to replay: --id N, --kind KIND or --all")
        outcome = dead_letters_replay_outcome(
            ids=ids, kind=kind, model=work_kind_named(options["model"]).model, everything=options["everything"]
        )
        replayed = outcome.replayed
        listed = ", ".join(map(str, replayed)) or "none"
        self.stdout.write(f"Replayed {len(replayed)} {options['model']} dead letters, oldest first: {listed}.")
        for pk, reason in sorted(outcome.held.items()):
            self.stderr.write(f"Not replayed, left as it is: {pk}: {reason}")
        left = sorted(set(ids or ()) - set(replayed) - set(outcome.held))
        if left:
            self.stderr.write(f"Not replayed (not FAILED or DEFERRED{', or another kind' if kind else ''}): {left}")
