from django.apps import AppConfig


class SyncConfig(AppConfig):
    name = "sync"
    verbose_name = "Poliçe eşitleme"

    def ready(self) -> None:
        from django_q.models import Schedule

        from sync.retention import sync_items_prune_register
        from sync.services import sync_work_register
        from work.schedules import ScheduleSpec, schedule_register

        sync_work_register()
        sync_items_prune_register()
        # Cron times are read in TIME_ZONE (Europe/Istanbul): 02:00 Turkish time, when agencies are closed.
        schedule_register(
            ScheduleSpec("Poliçe eşitleme (gece)", "sync.tasks.sync_nightly", Schedule.CRON, cron="0 2 * * *")
        )
