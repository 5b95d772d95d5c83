from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """No models of its own: the console reads the apps below it; permissions stay theirs."""

    name = "console"
    verbose_name = "Operatör konsolu"
