from django.apps import AppConfig


class CommissionsConfig(AppConfig):
    name = "commissions"
    verbose_name = "Komisyonlar"

    def ready(self) -> None:
        from commissions.models import CommissionAgreement
        from commissions.receivers import accrue_on_issuance, reverse_on_cancellation
        from commissions.views import policy_commission_section
        from integrations.audit import AuditSpec, audit_register
        from policies.signals import policy_cancelled
        from quotes.policy_page import policy_page_section_register
        from quotes.signals import policy_issued

        # Who set which rate from when is money: in the same trail as what tunes an insurer.
        audit_register(
            CommissionAgreement, AuditSpec(fields=("agency", "insurer", "product", "rate", "base", "effective_from"))
        )
        policy_issued.connect(accrue_on_issuance, dispatch_uid="commissions.accrue_on_issuance")
        policy_cancelled.connect(reverse_on_cancellation, dispatch_uid="commissions.reverse_on_cancellation")
        policy_page_section_register("commission", policy_commission_section)
