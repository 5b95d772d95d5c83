from django.apps import AppConfig


class WorkConfig(AppConfig):
    name = "work"
    verbose_name = "Arka plan işleri"

    def ready(self) -> None:
        from work.schedules import work_schedules_register

        work_schedules_register()
