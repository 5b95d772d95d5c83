from django.apps import AppConfig


class PoliciesConfig(AppConfig):
    name = "policies"
    verbose_name = "Poliçe işlemleri"

    def ready(self) -> None:
        from policies.receivers import cancel_the_replaced_policy
        from policies.services.cancellations import cancellation_work_register
        from policies.services.reconciliation import production_check_work_register
        from quotes.signals import policy_issued

        cancellation_work_register()
        production_check_work_register()
        policy_issued.connect(cancel_the_replaced_policy, dispatch_uid="policies.cancel_the_replaced_policy")
