"""The default SMS backend: logs the message (recipient masked, identity numbers masked) and
says it went. For the demo and development, where no SMS must reach a real phone."""

from __future__ import annotations

import logging
import uuid

from insurehub.masking import mask_identities_in_text
from outreach.sms import SmsResult, mask_phone

logger = logging.getLogger(__name__)


class ConsoleBackend:
    name = "console"

    def send(self, *, to: str, text: str) -> SmsResult:
        logger.info("SMS to %s: %s", mask_phone(to), mask_identities_in_text(text))
        return SmsResult(ok=True, code="console", answer="logged", message_id=f"console-{uuid.uuid4().hex[:12]}")
