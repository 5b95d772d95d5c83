from typing import Any

from django.apps import AppConfig
from django.core.checks import Tags, Warning, register


class IntegrationsConfig(AppConfig):
    name = "integrations"
    verbose_name = "Sigorta şirketi entegrasyonları"

    def ready(self) -> None:
        # Importing the adapters registers them; the registry must be complete before any call.
        from insurehub.dbpool import install_fork_guard

        # Importing the audit connects its model signals: every change to an audited row is recorded.
        from integrations import adapters, audit  # noqa: F401

        # django-q2 forks its workers: a child must not use its parent's pooled connections.
        install_fork_guard()

        # Error reports (SENTRY_DSN): every process that loads the product, web and qcluster alike.
        from integrations.error_reports import sentry_start

        sentry_start()


@register(Tags.security, deploy=True)
def insurer_hosts_check(app_configs: Any, **kwargs: Any) -> list[Warning]:
    """An empty allow-list outside DEBUG refuses every insurer call: say so before the first one."""
    from django.conf import settings

    if settings.DEBUG or getattr(settings, "INSURER_ALLOWED_HOSTS", None):
        return []
    return [
        Warning(
            "INSURER_ALLOWED_HOSTS is empty: every call to an insurer will be refused.",
            hint="Set INSURER_ALLOWED_HOSTS to the insurers' hosts, comma-separated (.domain for a domain).",
            id="integrations.W001",
        )
    ]
