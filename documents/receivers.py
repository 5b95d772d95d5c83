"""What the documents app does when the desk announces an issued policy."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from documents.services import document_request
from policies.models import Policy

logger = logging.getLogger(__name__)


def request_document_on_issuance(sender: Any, *, policy: Policy, **kwargs: Any) -> None:
    """The new policy's document is asked for (idempotent; its fetch is sent after the commit).
    In a savepoint of its own: a document record that cannot be stored is logged and never costs
    the policy it rides on; the missing-documents scan (`documents_request_missing`) asks later."""
    try:
        with transaction.atomic():
            document_request(policy=policy)
    except Exception:
        logger.exception("policy %s: its document could not be asked for at issuance", policy.pk)
