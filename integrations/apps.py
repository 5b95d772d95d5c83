from django.apps import AppConfig


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
