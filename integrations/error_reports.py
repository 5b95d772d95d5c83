"""Error reports to Sentry when `SENTRY_DSN` is set: web requests and background tasks alike.

Started from `IntegrationsConfig.ready()`, so every process that loads the product reports: the
web workers (Sentry's Django integration: unhandled exceptions in views, middleware, templates)
and the qcluster and its workers (django-q2 logs a failed task at ERROR, and Sentry's logging
integration sends ERROR lines as events; `logger.exception` in our own try loops too).

No personal data leaves (KVKK):
- `send_default_pii=False`: no cookies, no user's address or name, no `Authorization` header;
- request bodies are never sent (`max_request_body_size="never"`): a quote form is a customer's
  identity, plate and phone; frames' local variables are not sent either;
- `before_send` runs every string of the event (messages, exception values, breadcrumbs, tags,
  extra, the URL's query) through `scrub_personal_data`: identity numbers masked, e-mail addresses
  and phone numbers replaced, and drops what is left of the request's cookies and headers.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.conf import settings

from integrations.log_json import scrub_personal_data

if TYPE_CHECKING:
    from sentry_sdk.types import Event, Hint

logger = logging.getLogger(__name__)

_started = False
# Request headers worth keeping (nothing that authenticates or identifies a person).
KEPT_HEADERS = {"Content-Type", "Content-Length", "Accept", "X-Request-Id", "Hx-Request", "User-Agent"}


def _scrubbed(value: Any, depth: int = 0) -> Any:
    if depth > 12:
        return value
    if isinstance(value, str):
        return scrub_personal_data(value)
    if isinstance(value, dict):
        return {key: _scrubbed(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_scrubbed(item, depth + 1) for item in value]
    return value


def before_send(event: Event, hint: Hint | None = None) -> Event:
    """Sentry's last look at an event before it leaves: no personal data in it (see the module)."""
    request = event.get("request")
    if isinstance(request, dict):
        request.pop("cookies", None)
        request.pop("data", None)
        headers = request.get("headers")
        if isinstance(headers, dict):
            request["headers"] = {k: v for k, v in headers.items() if k.title() in KEPT_HEADERS}
    event.pop("user", None)
    return _scrubbed(event)


def sentry_start() -> bool:
    """Start the Sentry SDK once per process when `SENTRY_DSN` is set; True if it is reporting."""
    global _started
    dsn = getattr(settings, "SENTRY_DSN", "")
    if not dsn or _started:
        return _started
    import sentry_sdk
    from sentry_sdk.integrations.django import DjangoIntegration
    from sentry_sdk.integrations.logging import LoggingIntegration

    sentry_sdk.init(
        dsn=dsn,
        environment=getattr(settings, "SENTRY_ENVIRONMENT", "") or None,
        release=getattr(settings, "SENTRY_RELEASE", "") or None,
        send_default_pii=False,
        max_request_body_size="never",
        include_local_variables=False,
        traces_sample_rate=float(getattr(settings, "SENTRY_TRACES_SAMPLE_RATE", 0.0)),
        before_send=before_send,
        before_send_transaction=before_send,
        before_breadcrumb=lambda crumb, hint: _scrubbed(crumb),
        integrations=[DjangoIntegration(), LoggingIntegration(level=logging.INFO, event_level=logging.ERROR)],
    )
    _started = True
    logger.info("error reports: Sentry on (environment %s)", getattr(settings, "SENTRY_ENVIRONMENT", "") or "-")
    return True
