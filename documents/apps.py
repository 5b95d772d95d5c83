from django.apps import AppConfig


class DocumentsConfig(AppConfig):
    name = "documents"
    verbose_name = "Poliçe belgeleri"

    def ready(self) -> None:
        from documents.receivers import request_document_on_issuance
        from documents.services import DOCUMENT_TOPIC, document_versions, document_work_register
        from policies.signals import policy_issued
        from quotes import live

        document_work_register()
        policy_issued.connect(request_document_on_issuance, dispatch_uid="documents.request_document_on_issuance")
        # The document status fragment streams like the results (quotes/live.py's watcher).
        live.topic_register(DOCUMENT_TOPIC, document_versions)
