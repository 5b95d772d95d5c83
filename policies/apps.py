from django.apps import AppConfig


class PoliciesConfig(AppConfig):
    name = "policies"
    verbose_name = "Poliçe işlemleri"

    def ready(self) -> None:
        from django_q.models import Schedule

        from policies.receivers import cancel_the_replaced_policy
        from policies.services.cancellations import cancellation_work_register
        from policies.services.reconciliation import production_check_work_register
        from policies.signals import policy_issued
        from work.schedules import ScheduleSpec, schedule_register

        cancellation_work_register()
        production_check_work_register()
        # 02:30: every insurer's production list of the last week against the platform's policies.
        schedule_register(
            ScheduleSpec(
                "Üretim listesi mutabakatı (gece)",
                "policies.tasks.reconciliation_nightly",
                Schedule.CRON,
                cron="30 2 * * *",
            )
        )
        # 08:30, before agencies open: whoever is responsible sees the policies ending in 30/15/7 days.
        schedule_register(
            ScheduleSpec(
                "Yenileme hatırlatmaları (sabah)",
                "policies.tasks.renewal_reminders_daily",
                Schedule.CRON,
                cron="30 8 * * *",
            )
        )
        policy_issued.connect(cancel_the_replaced_policy, dispatch_uid="policies.cancel_the_replaced_policy")
