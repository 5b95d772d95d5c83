from django.apps import AppConfig


class QuotesConfig(AppConfig):
    name = "quotes"
    verbose_name = "Teklifler"

    def ready(self) -> None:
        from customers.customer_page import customer_history_sections
        from customers.signals import customer_erased
        from policies.origins import sale_origin_lookup_register
        from quotes.customer_history import customer_history_section
        from quotes.receivers import scrub_on_erasure
        from quotes.selectors import sale_origin_of_quote
        from quotes.services.issuance import issuance_work_register
        from quotes.services.quote_requests import quote_requests_redispatch_lost
        from work.registry import pump_pass_register

        issuance_work_register()
        # A quote request whose dispatch task was lost is sent again within seconds, while its agent waits.
        pump_pass_register("quote_requests", quote_requests_redispatch_lost)
        customer_history_sections.register("quotes", customer_history_section)
        customer_erased.connect(scrub_on_erasure, dispatch_uid="quotes.scrub_on_erasure")
        # The reconciliation credits a policy the insurer lists under one of our quotes to its request.
        sale_origin_lookup_register(sale_origin_of_quote)
