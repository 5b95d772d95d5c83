"""Seed the embedded demo: the insurers, two sample agencies, their accounts and logins.

Where the insurers listen and which credentials they issued are the sandbox's to say, and the
platform never imports the sandbox. So they come in as a manifest, JSON the sandbox prints
(``python -m sandbox --demo-manifest``): ``scripts/run.sh`` writes it to a file and passes
``--manifest``. Run by hand without ``--manifest``, the command asks the sandbox for the same
JSON in a child process (``--sandbox-host``/``--sandbox-base-port`` passed on), which keeps
``manage.py seed_demo`` a one-liner in a checkout while still reading only the sandbox's output,
never its Python.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agencies.models import Agency, AgentProfile
from integrations.demo import demo_data_seed, demo_manifest_parse

DEMO_LOGINS = (("ajan1", "ACENTE1"), ("ajan2", "ACENTE2"))


def sandbox_manifest_text(host: str, base_port: int | None) -> str:
    """The sandbox's manifest for these ports, from ``python -m sandbox --demo-manifest``."""
    command = [sys.executable, "-m", "sandbox", "--demo-manifest", "--host", host]
    if base_port is not None:
        command += ["--base-port", str(base_port)]
    try:
        done = subprocess.run(command, cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as problem:
        raise CommandError(f"could not ask the sandbox for its manifest: {problem}") from None
    if done.returncode != 0:
        raise CommandError(
            f"`{' '.join(command[1:])}` failed ({done.returncode}): {done.stderr.strip()[-500:]}; "
            "pass --manifest FILE instead"
        )
    return done.stdout


class Command(BaseCommand):
    help = "Create the demo insurers (pointing at the local sandbox), agencies, accounts and logins."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--manifest",
            help="the sandbox's JSON (python -m sandbox --demo-manifest) as a file, or '-' for stdin; "
            "without it the command runs that itself",
        )
        parser.add_argument("--sandbox-host", default="127.0.0.1", help="without --manifest: the sandbox's host")
        parser.add_argument(
            "--sandbox-base-port", type=int, default=None, help="without --manifest: the sandbox's --base-port"
        )
        parser.add_argument("--password", default="demo12345", help="password for the demo logins")

    def handle(self, *args: Any, **options: Any) -> None:
        source = options["manifest"]
        if source is None:
            text = sandbox_manifest_text(options["sandbox_host"], options["sandbox_base_port"])
        elif source == "-":
            text = sys.stdin.read()
        else:
            try:
                text = Path(source).read_text(encoding="utf-8")
            except OSError as problem:
                raise CommandError(f"--manifest: {problem}") from None
        try:
            insurers = demo_manifest_parse(text)
            accounts = demo_data_seed(base_urls=insurers.base_urls, accounts=insurers.accounts)
        except ValueError as problem:
            raise CommandError(f"--manifest: {problem}") from None
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
