from django.apps import AppConfig


class DocumentsConfig(AppConfig):
    name = "documents"
    verbose_name = "Poliçe belgeleri"

    def ready(self) -> None:
        from documents.services import DOCUMENT_TOPIC, document_versions, document_work_register
        from quotes import live

        document_work_register()
        # The document status fragment streams like the results (quotes/live.py's watcher).
        live.topic_register(DOCUMENT_TOPIC, document_versions)
