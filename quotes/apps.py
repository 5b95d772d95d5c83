from django.apps import AppConfig


class QuotesConfig(AppConfig):
    name = "quotes"
    verbose_name = "Teklifler"

    def ready(self) -> None:
        from quotes.services.issuance import issuance_work_register

        issuance_work_register()
