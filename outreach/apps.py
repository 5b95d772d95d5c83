from django.apps import AppConfig


class OutreachConfig(AppConfig):
    name = "outreach"
    verbose_name = "Müşteri iletişimi"

    def ready(self) -> None:
        from customers.customer_page import customer_page_sections
        from customers.signals import customer_erased
        from outreach.receivers import message_customer_on_renewal, scrub_on_erasure
        from outreach.views import (
            customer_outreach_section,
            quote_request_offer_section,
            renewal_reminder_customer_notes,
        )
        from policies.signals import renewal_reminder_due
        from quotes.quote_request_page import quote_request_page_sections
        from quotes.renewal_page import renewal_reminder_notes_register

        renewal_reminder_due.connect(message_customer_on_renewal, dispatch_uid="outreach.message_customer_on_renewal")
        customer_erased.connect(scrub_on_erasure, dispatch_uid="outreach.scrub_on_erasure")
        customer_page_sections.register("outreach", customer_outreach_section)
        quote_request_page_sections.register("outreach", quote_request_offer_section)
        renewal_reminder_notes_register("outreach", renewal_reminder_customer_notes)
