"""Throttles for the API's quote-creating calls, per user and per agency.

Every quote request fans out to each insurer the agency has an account with, on that agency's
contracted rates: one runaway script should not spend them all, and ten agents of one agency
sharing a script should not get ten times the room. Rates are settings
(`DEFAULT_THROTTLE_RATES`, scopes `quote_create_user` and `quote_create_agency`, from the
environment). They are read per request rather than once at import like DRF's own classes, so
a changed setting (and a test's override) takes effect.

Counted in the shared cache (Redis with REDIS_URL, else the database table: settings/base.py), so
"300/min per agency" is 300 whichever web process or machine serves each call. Not with DRF's own
history list, which every request reads, appends to and writes back: two processes doing that at
once lose one of the two appends, and a parallel burst passes well over the limit. Instead a
sliding window estimated from two fixed ones (the current window's count, `cache.incr`, atomic in
Redis, plus the previous window's share of the time still inside the last `duration`): one
increment per call, never a lost one on Redis. A refused call is taken back out of the count.

A cache that does not answer lets the call through (logged): the throttle guards the agency's
insurer contracts against a runaway script, and refusing every agency's quotes while Redis
restarts would be the bigger outage; the send rate still paces every insurer call.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

logger = logging.getLogger(__name__)

THROTTLED_MESSAGE = "Çok fazla istek gönderildi. Lütfen {seconds} saniye sonra tekrar deneyin."


class _SettingsRateThrottle(SimpleRateThrottle):
    _wait: float | None = None
    scope: str  # each throttle below names its own
    # What SimpleRateThrottle.__init__ parses from the rate; read only when there is one (allow_request).
    num_requests: int
    duration: int

    def get_rate(self) -> str | None:
        # djangorestframework-stubs type the rates as numbers; DRF's own are "300/min" strings.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)  # type: ignore[return-value]

    def allow_request(self, request: Request, view: Any) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        try:
            return self._count(self.timer())
        except Exception:  # noqa: BLE001 - the shared cache down: let it through (module docstring)
            logger.warning("API throttle %s not applied: the shared cache did not answer", self.scope)
            return True

    def _count(self, now: float) -> bool:
        window = int(now // self.duration)
        current = f"{self.key}:w{window}"
        # Kept two windows: the next window reads this one as its previous.
        self.cache.add(current, 0, timeout=int(self.duration * 2) + 1)
        try:
            count = self.cache.incr(current)
        except ValueError:  # expired between add and incr
            self.cache.set(current, 1, timeout=int(self.duration * 2) + 1)
            count = 1
        previous = int(self.cache.get(f"{self.key}:w{window - 1}") or 0)
        into = (now - window * self.duration) / self.duration  # share of the current window gone by
        if previous * (1 - into) + count <= self.num_requests:
            return True
        self.cache.decr(current)  # a refused call is not counted
        self._wait = self._wait_for(previous=previous, count=count - 1, into=into)
        return False

    def _wait_for(self, *, previous: int, count: int, into: float) -> float:
        """Seconds until one more call fits: the previous window's share shrinks as time goes on."""
        if count + 1 > self.num_requests or previous == 0:
            return (1 - into) * self.duration  # only the next window has room
        # previous * (1 - t) + count + 1 <= limit  =>  t >= 1 - (limit - count - 1) / previous
        fits_at = 1 - (self.num_requests - count - 1) / previous
        return max(0.0, fits_at - into) * self.duration

    def wait(self) -> float | None:
        return self._wait


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
