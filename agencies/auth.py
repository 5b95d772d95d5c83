"""Login rate limiting: a few wrong passwords for one username from one address lock it out for a while.

Counts live in the database (`LoginFailure`), so every web worker sees the same count. The lock
is checked before the password is, so during a lockout even the right password is refused and a
guesser learns nothing. Every password entry point uses the same counter: the agent login page
(`RateLimitedLoginView`), the admin login (`ThrottledAdminAuthenticationForm`) and the API token
endpoint (`ThrottledAuthTokenSerializer`).

Limits are settings with defaults here: `LOGIN_MAX_FAILURES` (5) failures within
`LOGIN_FAILURE_WINDOW_SECONDS` (900) lock the pair for `LOGIN_LOCKOUT_SECONDS` (900). The address
is `REMOTE_ADDR`; behind N trusted reverse proxies set `LOGIN_TRUSTED_PROXY_COUNT = N` to read it
from `X-Forwarded-For` (never trust that header without a proxy that overwrites it).
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authtoken.serializers import AuthTokenSerializer

from agencies.models import LoginFailure

INVALID_LOGIN_MESSAGE = "Kullanıcı adı veya parola hatalı."
LOCKED_MESSAGE = (
    "Çok fazla hatalı giriş denemesi yapıldı. Güvenliğiniz için girişler kapatıldı; "
    "lütfen {minutes} dakika sonra tekrar deneyin."
)


def _max_failures() -> int:
    return int(getattr(settings, "LOGIN_MAX_FAILURES", 5))


def _window() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "LOGIN_FAILURE_WINDOW_SECONDS", 15 * 60)))


def _lockout() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "LOGIN_LOCKOUT_SECONDS", 15 * 60)))


def client_ip(request: HttpRequest | None) -> str:
    """The caller's address: `REMOTE_ADDR`, or the client entry of `X-Forwarded-For` behind trusted proxies."""
    if request is None:
        return ""
    proxies = int(getattr(settings, "LOGIN_TRUSTED_PROXY_COUNT", 0))
    if proxies > 0:
        # Each trusted proxy appends the address it saw: the client is the one `proxies` from the end.
        hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
        if len(hops) >= proxies:
            return hops[-proxies][:45]
    return str(request.META.get("REMOTE_ADDR") or "")[:45]


def _key(username: str, ip_address: str) -> dict[str, str]:
    # Case-folded: "Ajan1" and "ajan1" are one guesser's target as far as counting goes.
    return {"username": str(username).strip().casefold()[:150], "ip_address": ip_address[:45]}


def login_lock_remaining(*, username: str, ip_address: str) -> int:
    """Seconds until this username may try again from this address (0: not locked)."""
    locked_until = (
        LoginFailure.objects.filter(**_key(username, ip_address)).values_list("locked_until", flat=True).first()
    )
    if locked_until is None:
        return 0
    return max(0, math.ceil((locked_until - timezone.now()).total_seconds()))


def login_failure_record(*, username: str, ip_address: str) -> int:
    """Count one failed login; returns the lockout in seconds if this failure started one (else 0)."""
    now = timezone.now()
    window = _window()
    with transaction.atomic():
        counter, _ = LoginFailure.objects.select_for_update().get_or_create(
            **_key(username, ip_address), defaults={"window_started_at": now}
        )
        if counter.locked_until is not None and counter.locked_until > now:
            return max(1, math.ceil((counter.locked_until - now).total_seconds()))
        if counter.locked_until is not None or now - counter.window_started_at > window:
            # A lock that ran out, or failures too old to matter: start counting afresh.
            counter.failures, counter.window_started_at, counter.locked_until = 0, now, None
        counter.failures += 1
        locked = counter.failures >= _max_failures()
        if locked:
            counter.locked_until = now + _lockout()
        counter.save()
    # Counters nobody has touched for a window and whose lock is over are only noise.
    LoginFailure.objects.filter(
        Q(locked_until__isnull=True) | Q(locked_until__lt=now), window_started_at__lt=now - window
    ).delete()
    return math.ceil(_lockout().total_seconds()) if locked else 0


def login_failures_clear(*, username: str, ip_address: str) -> None:
    """A successful login forgets this pair's failures."""
    LoginFailure.objects.filter(**_key(username, ip_address)).delete()


def locked_message(seconds: int) -> str:
    return LOCKED_MESSAGE.format(minutes=max(1, math.ceil(seconds / 60)))


class ThrottledAuthenticationMixin:
    """For Django's authentication forms: refuse a locked pair before checking the password."""

    locked_seconds: int = 0

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if not username or not password:
            return super().clean()
        key = {"username": username, "ip_address": client_ip(self.request)}
        self.locked_seconds = login_lock_remaining(**key)
        if self.locked_seconds:
            raise forms.ValidationError(locked_message(self.locked_seconds), code="locked")
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            self.locked_seconds = login_failure_record(**key)
            if self.locked_seconds:
                raise forms.ValidationError(locked_message(self.locked_seconds), code="locked") from None
            raise
        login_failures_clear(**key)
        return cleaned


class ThrottledAuthenticationForm(ThrottledAuthenticationMixin, AuthenticationForm):
    error_messages = {**AuthenticationForm.error_messages, "invalid_login": INVALID_LOGIN_MESSAGE}


class ThrottledAdminAuthenticationForm(ThrottledAuthenticationMixin, AdminAuthenticationForm):
    """For `admin.site.login_form`: the admin login shares the agents' counter."""


class RateLimitedLoginView(LoginView):
    """The agent login page; a locked-out pair gets the Turkish message with 429 and `Retry-After`."""

    authentication_form = ThrottledAuthenticationForm

    def form_invalid(self, form: ThrottledAuthenticationForm) -> HttpResponse:
        response = super().form_invalid(form)
        if form.locked_seconds:
            response.status_code = 429
            response["Retry-After"] = str(form.locked_seconds)
        return response


class ThrottledAuthTokenSerializer(AuthTokenSerializer):
    """DRF's token login with the same lockout; a locked pair answers 429 with `Retry-After`."""

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        username, password = attrs.get("username"), attrs.get("password")
        if not username or not password:
            return super().validate(attrs)
        key = {"username": username, "ip_address": client_ip(self.context.get("request"))}
        remaining = login_lock_remaining(**key)
        if remaining:
            raise exceptions.Throttled(wait=remaining, detail=locked_message(remaining))
        try:
            validated = super().validate(attrs)
        except exceptions.ValidationError:
            remaining = login_failure_record(**key)
            if remaining:
                raise exceptions.Throttled(wait=remaining, detail=locked_message(remaining)) from None
            raise
        login_failures_clear(**key)
        return validated
