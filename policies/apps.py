from django.apps import AppConfig


class PoliciesConfig(AppConfig):
    name = "policies"
    verbose_name = "Poliçe işlemleri"

    def ready(self) -> None:
        from policies.services.cancellations import cancellation_work_register

        cancellation_work_register()
