from django.apps import AppConfig


class SyncConfig(AppConfig):
    name = "sync"
    verbose_name = "Poliçe eşitleme"

    def ready(self) -> None:
        from sync.services import sync_work_register

        sync_work_register()
