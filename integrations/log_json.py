"""Log lines as JSON objects, one a line (`LOG_FORMAT=json`; settings/base.py), with no personal data.

Each line: `time` (UTC, ISO 8601), `level`, `logger`, `message`, the context fields
(`request_id`, `agency`, `insurer`, `operation`, `record_id`: `insurehub.log_context`, or a
logging call's `extra=` of the same names), and `exc` with the traceback when there is one.

The message and the traceback pass through `insurehub.masking` (TCKN/VKN, in every shape an
insurer's answer echoes them) and lose e-mail addresses and phone numbers, here once for every
logger: a `logger.exception` over a customer's form must not ship the customer to the log store.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime

from insurehub.log_context import FIELDS, log_context
from insurehub.masking import mask_identities_in_text

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A Turkish phone number as people write it: +90 / 0, then 10 digits in groups.
_PHONE = re.compile(r"(?<!\d)(?:\+90|0)[ -]?\(?5\d{2}\)?[ -]?\d{3}[ -]?\d{2}[ -]?\d{2}(?!\d)")


def scrub_personal_data(text: object) -> str:
    """Identity numbers masked, e-mail addresses and phone numbers replaced: for logs and error reports."""
    masked = mask_identities_in_text(text)
    masked = _EMAIL.sub("<e-posta>", masked)
    return _PHONE.sub("<telefon>", masked)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": scrub_personal_data(record.getMessage()),
        }
        context = log_context()
        for name in FIELDS:
            value = getattr(record, name, None) or context.get(name)
            if value is not None:
                line[name] = str(value)
        if record.exc_info:
            line["exc"] = scrub_personal_data(self.formatException(record.exc_info))
        elif record.exc_text:
            line["exc"] = scrub_personal_data(record.exc_text)
        return json.dumps(line, ensure_ascii=False, default=str)
