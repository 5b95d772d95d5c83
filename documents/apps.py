from django.apps import AppConfig


class DocumentsConfig(AppConfig):
    name = "documents"
    verbose_name = "Poliçe belgeleri"

    def ready(self) -> None:
        from documents.services import document_work_register

        document_work_register()
