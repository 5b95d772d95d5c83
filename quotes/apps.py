from django.apps import AppConfig


class QuotesConfig(AppConfig):
    name = "quotes"
    verbose_name = "Teklifler"

    def ready(self) -> None:
        from customers.customer_page import customer_history_sections
        from customers.signals import customer_erased
        from quotes.customer_history import customer_history_section
        from quotes.receivers import scrub_on_erasure
        from quotes.services.issuance import issuance_work_register

        issuance_work_register()
        customer_history_sections.register("quotes", customer_history_section)
        customer_erased.connect(scrub_on_erasure, dispatch_uid="quotes.scrub_on_erasure")
