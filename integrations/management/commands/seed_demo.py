"""Seed the embedded demo: sandbox insurers, two sample agencies, their accounts and logins."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from agencies.models import Agency, AgentProfile
from integrations.services.setup import SANDBOX_BASE_PORT, demo_data_seed, sandbox_base_urls

DEMO_LOGINS = (("ajan1", "ACENTE1"), ("ajan2", "ACENTE2"))


class Command(BaseCommand):
    help = "Create the demo insurers (pointing at the local sandbox), agencies, accounts and logins."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sandbox-host", default="127.0.0.1")
        parser.add_argument("--sandbox-base-port", type=int, default=SANDBOX_BASE_PORT)
        parser.add_argument("--password", default="demo12345", help="password for the demo logins")

    def handle(self, *args: Any, **options: Any) -> None:
        accounts = demo_data_seed(base_urls=sandbox_base_urls(options["sandbox_host"], options["sandbox_base_port"]))
        users = get_user_model()
        if not users.objects.filter(username="admin").exists():
            users.objects.create_superuser("admin", "admin@example.com", options["password"])
        for username, agency_code in DEMO_LOGINS:
            user = users.objects.filter(username=username).first()
            if user is None:
                user = users.objects.create_user(username, f"{username}@example.com", options["password"])
            AgentProfile.objects.update_or_create(user=user, defaults={"agency": Agency.objects.get(code=agency_code)})
        self.stdout.write(
            f"Seeded {len(accounts)} insurer accounts. Logins: admin, ajan1 (ACENTE1), ajan2 (ACENTE2); "
            f"password {options['password']!r}."
        )
