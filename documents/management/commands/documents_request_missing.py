"""Give every policy without a document record one (policies imported or issued before documents)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from documents.services import documents_request_missing


class Command(BaseCommand):
    help = "Queue the PDF fetch of every policy that has no document record yet."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--limit", type=int, default=10_000, help="At most this many policies (default 10000).")

    def handle(self, *args, limit: int, **options) -> None:
        stored = documents_request_missing(limit=limit)
        self.stdout.write(f"{stored} policies queued for their document.")
