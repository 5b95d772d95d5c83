from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"
    verbose_name = "Sigorta şirketi entegrasyonları"

    def ready(self) -> None:
        # Importing the adapters registers them; the registry must be complete before any call.
        from integrations import adapters  # noqa: F401
