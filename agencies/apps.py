from django.apps import AppConfig


class AgenciesConfig(AppConfig):
    name = "agencies"
    verbose_name = "Acenteler"
