from django.apps import AppConfig


class CommissionsConfig(AppConfig):
    name = "commissions"
    verbose_name = "Komisyonlar"

    def ready(self) -> None:
        from commissions.models import CommissionAgreement, SubAgencyShare
        from commissions.receivers import accrue_on_issuance, reverse_on_cancellation, reverse_on_found_cancelled
        from commissions.views import policy_commission_section
        from integrations.audit import AuditSpec, audit_register
        from policies.signals import policy_cancelled, policy_issued
        from quotes.policy_page import policy_page_section_register
        from sync.signals import policy_found_cancelled

        # Who set which rate from when is money: in the same trail as what tunes an insurer.
        audit_register(
            CommissionAgreement, AuditSpec(fields=("agency", "insurer", "product", "rate", "base", "effective_from"))
        )
        audit_register(SubAgencyShare, AuditSpec(fields=("sub_agency", "rate", "effective_from")))
        policy_issued.connect(accrue_on_issuance, dispatch_uid="commissions.accrue_on_issuance")
        policy_cancelled.connect(reverse_on_cancellation, dispatch_uid="commissions.reverse_on_cancellation")
        policy_found_cancelled.connect(
            reverse_on_found_cancelled, dispatch_uid="commissions.reverse_on_found_cancelled"
        )
        policy_page_section_register("commission", policy_commission_section)
