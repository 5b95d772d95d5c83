"""Throttles for the API's quote-creating calls, per user and per agency.

Every quote request fans out to each insurer the agency has an account with, on that agency's
contracted rates: one runaway script should not spend them all, and ten agents of one agency
sharing a script should not get ten times the room. Rates are settings
(`DEFAULT_THROTTLE_RATES`, scopes `quote_create_user` and `quote_create_agency`, from the
environment). They are read per request rather than once at import like DRF's own classes, so
a changed setting (and a test's override) takes effect.
"""

from __future__ import annotations

import math
from typing import Any

from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

THROTTLED_MESSAGE = "Çok fazla istek gönderildi. Lütfen {seconds} saniye sonra tekrar deneyin."


class _SettingsRateThrottle(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class QuoteCreateUserThrottle(_SettingsRateThrottle):
    scope = "quote_create_user"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if not request.user.is_authenticated:
            return None  # refused by authentication anyway
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class QuoteCreateAgencyThrottle(_SettingsRateThrottle):
    """Keyed by the user's agency: the agents of one agency share one allowance."""

    scope = "quote_create_agency"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        profile = getattr(request.user, "agent_profile", None)
        if profile is None:
            return None  # no agency, no agency accounts: the service refuses the request
        return self.cache_format % {"scope": self.scope, "ident": profile.agency_id}


QUOTE_CREATE_THROTTLES = (QuoteCreateUserThrottle, QuoteCreateAgencyThrottle)


def throttled_message(wait: float | None) -> str:
    return THROTTLED_MESSAGE.format(seconds=max(1, math.ceil(wait or 1)))
