#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    if (
        "DJANGO_SETTINGS_MODULE" not in os.environ
        and os.environ.get("INSUREHUB_ENV", "").strip().lower() == "production"
    ):
        # The default below is the developer settings (DEBUG on): on a server a forgotten variable
        # must stop `migrate`, `qcluster` and every other command, not run them in debug mode.
        sys.exit(
            "manage.py: INSUREHUB_ENV=production and DJANGO_SETTINGS_MODULE is unset; refusing the developer "
            "settings. Set DJANGO_SETTINGS_MODULE=insurehub.settings.production."
        )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "insurehub.settings.local")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
