"""Login lock-out: wrong passwords are counted per username and address, per address, per username.

Three counters, each a `LoginFailure` row in the database (so every web worker sees the same
counts), each with its own limit within `LOGIN_FAILURE_WINDOW_SECONDS` (900):

- one username from one address: `LOGIN_MAX_FAILURES` (5) — the ordinary mistyped password;
- one address across every username: `LOGIN_MAX_FAILURES_PER_ADDRESS` (20) — one password
  sprayed over many usernames;
- one username across every address: `LOGIN_MAX_FAILURES_PER_USERNAME` (10) — one account
  guessed from many addresses. Past this one a login needs a **step-up** instead of meeting a
  lock (issue 21: anyone could lock any account, the admin's included, again and again): a
  one-time code mailed to the account's address, with the password (`agencies.step_up`).

A counter at its limit locks for `LOGIN_LOCKOUT_SECONDS`; while one of the first two is locked,
or the third without the right code, the password is not even looked at, so a guesser learns
nothing. Every lock that starts is kept as a `LoginLockout` (the health dashboard and /metrics
count them); an admin lifts a lock from the failed-logins admin ("Kilidi kaldır").

Every attempt is counted as a failure *before* its password is judged, in one transaction that
also checks the locks (`login_attempt_start`): twenty parallel guesses meet one counter and
only the first five are judged. A success takes its own count back (`login_attempt_succeeded`)
and forgets the username-and-address counter; it does not clear the wider two, so logging into
one's own account cannot wash away a spray from the same address.

Addresses: IPv6 clients are counted by their /64 (one home or one server gets a whole /64 and
can rotate within it at will); IPv4 by the address itself. The address is `REMOTE_ADDR`.
Behind reverse proxies `LOGIN_TRUSTED_PROXY_COUNT = N` (environment variable) reads it from
`X-Forwarded-For`, N entries from the right. An operator behind a proxy must set it: otherwise
every caller has the proxy's address, and 20 wrong passwords from anyone lock everyone out.
Without it the header is ignored, since anyone can send it.

Every password entry point uses these counters: the agent login page (`RateLimitedLoginView`),
the admin login (`ThrottledAdminAuthenticationForm` with `throttled_admin_login`) and the API
token endpoint (`ThrottledAuthTokenSerializer`); all three answer a lock with 429 and
`Retry-After`.
"""

from __future__ import annotations

import ipaddress
import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from rest_framework import exceptions, serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer

from agencies import step_up
from agencies.models import LoginFailure, LoginLockout
from insurehub.api_input import UnknownFieldsRefused

logger = logging.getLogger(__name__)

INVALID_LOGIN_MESSAGE = "Kullanıcı adı veya parola hatalı."
LOCKED_MESSAGE = (
    "Çok fazla hatalı giriş denemesi yapıldı. Güvenliğiniz için girişler kapatıldı; "
    "lütfen {minutes} dakika sonra tekrar deneyin."
)

# Stands for "any" in a counter's key. No username may contain "*" (Django's username rule
# allows letters, digits and @.+-_) and no address is "*", so it never meets a real key.
ANY = "*"


def _setting(name: str, default: float) -> float:
    return float(getattr(settings, name, default))


def _window() -> timedelta:
    return timedelta(seconds=_setting("LOGIN_FAILURE_WINDOW_SECONDS", 15 * 60))


def _lockout() -> timedelta:
    return timedelta(seconds=_setting("LOGIN_LOCKOUT_SECONDS", 15 * 60))


_warned_unset_proxy_count = False


def client_ip(request: HttpRequest | None) -> str:
    """The caller's address: `REMOTE_ADDR`, or the client entry of `X-Forwarded-For` behind trusted proxies."""
    global _warned_unset_proxy_count
    if request is None:
        return ""
    proxies = int(getattr(settings, "LOGIN_TRUSTED_PROXY_COUNT", 0))
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies > 0:
        # Each trusted proxy appends the address it saw: the client is the one `proxies` from the end.
        # Entries left of it are whatever the client chose to send.
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if len(hops) >= proxies:
            return hops[-proxies][:45]
    elif forwarded and not _warned_unset_proxy_count:
        # Either a client forging the header (harmless: it is ignored) or a proxy nobody told us
        # about, which makes every caller one address: say so once, in the log an operator reads.
        _warned_unset_proxy_count = True
        logger.warning(
            "X-Forwarded-For received but LOGIN_TRUSTED_PROXY_COUNT is 0: login lock-outs count by "
            "REMOTE_ADDR. Behind a reverse proxy set it to the number of proxies, or all callers share one lock."
        )
    return str(request.META.get("REMOTE_ADDR") or "")[:45]


def address_key(ip_address: str) -> str:
    """What a lock-out counts an address by: an IPv4 address itself, an IPv6 address's /64."""
    try:
        address = ipaddress.ip_address(ip_address.strip())
    except ValueError:
        return ip_address.strip()[:45]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def username_key(username: str) -> str:
    # Case-folded: "Ajan1" and "ajan1" are one guesser's target as far as counting goes.
    return str(username).strip().casefold()[:150]


@dataclass(frozen=True)
class Counter:
    """One `LoginFailure` row's key and the failures it allows."""

    username: str
    ip_address: str
    limit: int

    @property
    def key(self) -> dict[str, str]:
        return {"username": self.username, "ip_address": self.ip_address}

    @property
    def username_wide(self) -> bool:
        """The per-username counter: past it a step-up, not a lock (agencies.step_up)."""
        return self.ip_address == ANY and self.username != ANY

    @property
    def scope(self) -> str:
        if self.username_wide:
            return LoginLockout.Scope.USERNAME
        return LoginLockout.Scope.ADDRESS if self.username == ANY else LoginLockout.Scope.PAIR


@dataclass(frozen=True)
class LoginAttempt:
    """One password attempt, already counted as a failure in each of its counters."""

    counters: tuple[Counter, ...]
    # Let through the per-username limit by the e-mailed code: spent if the password is wrong.
    stepped_up: bool = False

    @property
    def username(self) -> str:
        return next(c.username for c in self.counters if c.username_wide)


class LoginLocked(Exception):
    def __init__(self, seconds: int) -> None:
        super().__init__(f"login locked for {seconds}s")
        self.seconds = seconds


class StepUpRequired(Exception):
    """The username is past its limit: a login needs the code mailed to the account, with the password."""

    def __init__(self, *, wrong_code: bool) -> None:
        super().__init__("login needs the e-mailed code")
        self.wrong_code = wrong_code

    @property
    def message(self) -> str:
        return step_up.WRONG_CODE_MESSAGE if self.wrong_code else step_up.STEP_UP_MESSAGE


def login_counters(*, username: str, ip_address: str) -> tuple[Counter, ...]:
    """The three counters an attempt meets, in a fixed order (rows are locked in it: no deadlock)."""
    user, address = username_key(username), address_key(ip_address)
    counters = (
        Counter(user, address, int(_setting("LOGIN_MAX_FAILURES", 5))),
        Counter(ANY, address, int(_setting("LOGIN_MAX_FAILURES_PER_ADDRESS", 20))),
        Counter(user, ANY, int(_setting("LOGIN_MAX_FAILURES_PER_USERNAME", 10))),
    )
    return tuple(sorted(counters, key=lambda c: (c.username, c.ip_address)))


def _seconds_until(moment: datetime | None, now: datetime) -> int:
    if moment is None or moment <= now:
        return 0
    return max(1, math.ceil((moment - now).total_seconds()))


def _fresh(row: LoginFailure, now: datetime) -> None:
    """Start counting afresh after a lock that ran out, or when the failures are too old to matter."""
    lock_over = row.locked_until is not None and row.locked_until <= now
    window_over = row.locked_until is None and now - row.window_started_at > _window()
    if lock_over or window_over:
        row.failures, row.window_started_at, row.locked_until = 0, now, None


def login_attempt_start(*, username: str, ip_address: str, code: str = "") -> LoginAttempt:
    """Count this attempt as a failure in all three counters, or refuse it uncounted.

    Refused with `LoginLocked` when the username-and-address or the address counter is locked;
    with `StepUpRequired` when the username counter is past its limit and `code` is not the one
    mailed to the account (a code is mailed then, at most once a minute; a wrong one uses a try).

    Check and count are one transaction with the rows locked (`select_for_update`; on SQLite
    the IMMEDIATE transaction takes the write lock), so parallel attempts queue here and the
    limit holds however many arrive at once. The counter that reaches its limit locks at once:
    the attempts already in flight are judged, none after them.
    """
    now = timezone.now()
    counters = login_counters(username=username, ip_address=ip_address)
    user = username_key(username)
    locked = 0
    needs_step_up = stepped_up = False
    with transaction.atomic():
        rows = []
        for counter in counters:
            row, _ = LoginFailure.objects.select_for_update().get_or_create(
                **counter.key, defaults={"window_started_at": now}
            )
            _fresh(row, now)
            rows.append(row)
        pairs = list(zip(counters, rows, strict=True))
        locked = max((_seconds_until(row.locked_until, now) for c, row in pairs if not c.username_wide), default=0)
        wide = max((_seconds_until(row.locked_until, now) for c, row in pairs if c.username_wide), default=0)
        if not locked and wide:
            stepped_up = step_up.step_up_code_matches(username_key=user, code=code)
            needs_step_up = not stepped_up
        if not locked and not needs_step_up:
            for counter, row in pairs:
                row.failures += 1
                if row.failures >= counter.limit and row.locked_until is None:
                    row.locked_until = now + _lockout()
                    _lockout_record(counter, row, now)
                row.save()
    # Outside the transaction: a refusal must not roll back the code's spent try (the cache may
    # be a table on this same connection), and no mail goes out while rows are locked.
    if locked:
        raise LoginLocked(locked)
    if needs_step_up:
        if code:
            step_up.step_up_code_spend(username_key=user)
        else:
            step_up.step_up_code_send(username_key=user)
        raise StepUpRequired(wrong_code=bool(code))
    return LoginAttempt(counters=counters, stepped_up=stepped_up)


def _lockout_record(counter: Counter, row: LoginFailure, now: datetime) -> None:
    assert row.locked_until is not None  # the caller has just locked the row
    LoginLockout.objects.create(
        scope=counter.scope,
        username="" if counter.username == ANY else counter.username,
        ip_address="" if counter.ip_address == ANY else counter.ip_address,
        locked_at=now,
        locked_until=row.locked_until,
    )
    logger.warning(
        "login lock-out started: %s counter at its limit of %d (%s)",
        counter.scope,
        counter.limit,
        "a login now needs the e-mailed code" if counter.username_wide else "this address waits",
    )


def login_attempt_failed(attempt: LoginAttempt) -> int:
    """The password was wrong: it stays counted. Returns the seconds of a lock it started or met
    (else 0); raises `StepUpRequired` when it took the username past its limit."""
    now = timezone.now()
    if attempt.stepped_up:
        step_up.step_up_code_spend(username_key=attempt.username)  # the code is no way around the count
    hard, wide = _locks(attempt, now)
    # Counters nobody has touched for a window and whose lock is over are only noise.
    LoginFailure.objects.filter(
        Q(locked_until__isnull=True) | Q(locked_until__lt=now), window_started_at__lt=now - _window()
    ).delete()
    if not hard and wide and not attempt.stepped_up:
        step_up.step_up_code_send(username_key=attempt.username)
        raise StepUpRequired(wrong_code=False)
    return hard


def _locks(attempt: LoginAttempt, now: datetime) -> tuple[int, int]:
    """Seconds left of the attempt's hard locks, and of its username's (the step-up's)."""
    hard = wide = 0
    rows = LoginFailure.objects.filter(_any_of(attempt), locked_until__gt=now).values_list(
        "username", "ip_address", "locked_until"
    )
    for username, ip_address, until in rows:
        seconds = _seconds_until(until, now)
        if ip_address == ANY and username != ANY:
            wide = max(wide, seconds)
        else:
            hard = max(hard, seconds)
    return hard, wide


def login_attempt_succeeded(attempt: LoginAttempt) -> None:
    """The password was right: take back this attempt's count, and forget this username-and-address's failures.

    Only its own count comes off the per-address and per-username counters (and a lock its count
    had started is lifted): other callers' failures stay counted. A code that let it through is spent.
    """
    if attempt.stepped_up:
        step_up.step_up_code_used(username_key=attempt.username)
    with transaction.atomic():
        for counter in attempt.counters:
            row = LoginFailure.objects.select_for_update().filter(**counter.key).first()
            if row is None:
                continue
            if counter.username != ANY and counter.ip_address != ANY:
                row.delete()
                continue
            row.failures = max(0, row.failures - 1)
            if row.failures == 0:
                row.delete()
                continue
            if row.failures < counter.limit:
                row.locked_until = None
            row.save()


def _any_of(attempt: LoginAttempt) -> Q:
    query = Q(pk__in=[])
    for counter in attempt.counters:
        query |= Q(**counter.key)
    return query


def login_lock_remaining(*, username: str, ip_address: str) -> int:
    """Seconds until this username may try again from this address (0: not locked by any counter)."""
    now = timezone.now()
    attempt = LoginAttempt(counters=login_counters(username=username, ip_address=ip_address))
    locks = LoginFailure.objects.filter(_any_of(attempt), locked_until__gt=now).values_list("locked_until", flat=True)
    return max((_seconds_until(until, now) for until in locks), default=0)


def locked_message(seconds: int) -> str:
    return LOCKED_MESSAGE.format(minutes=max(1, math.ceil(seconds / 60)))


def judge_password(
    *, username: str, ip_address: str, judge: Callable[[], Any], wrong: type[Exception], code: str = ""
) -> Any:
    """Run `judge` (the password check) under the lock-out; raises `LoginLocked` or
    `StepUpRequired` instead when the counters say so.

    `wrong` is the exception `judge` raises for a wrong password. An unexpected error leaves the
    attempt counted as a failure: a crash must not be a way around the count.
    """
    attempt = login_attempt_start(username=username, ip_address=ip_address, code=code)
    try:
        result = judge()
    except wrong:
        locked = login_attempt_failed(attempt)
        if locked:
            raise LoginLocked(locked) from None
        raise
    login_attempt_succeeded(attempt)
    return result


def login_lock_lift(*, usernames: Iterable[str] = (), ip_addresses: Iterable[str] = (), lifted_by: str) -> int:
    """An admin lifts the locks of usernames (from every address) and of addresses; returns the
    counters dropped.

    The counters go (the next failure starts from zero), the usernames' step-up codes and mail
    allowances are forgotten, and the lock-outs in force are marked lifted, with who did it.
    """
    now = timezone.now()
    users = {username_key(name) for name in usernames if name}
    addresses = {address_key(address) for address in ip_addresses if address}
    query = Q(username__in=users) | Q(username=ANY, ip_address__in=addresses)
    lockouts = Q(username__in=users) | Q(username="", ip_address__in=addresses)
    with transaction.atomic():
        dropped, _ = LoginFailure.objects.filter(query).delete()
        LoginLockout.objects.filter(lockouts, locked_until__gt=now, lifted_at__isnull=True).update(
            lifted_at=now, lifted_by=lifted_by[:150]
        )
    for user in users:
        step_up.step_up_forget(username_key=user)
    logger.warning(
        "login locks lifted by %s: %d usernames, %d addresses, %d counters",
        lifted_by,
        len(users),
        len(addresses),
        dropped,
    )
    return dropped


def lock_response(response: HttpResponse, seconds: int) -> HttpResponse:
    """A login page answer turned into a lock-out answer: 429 with `Retry-After`."""
    if seconds:
        response.status_code = 429
        response["Retry-After"] = str(seconds)
    return response


if TYPE_CHECKING:
    _AuthenticationFormBase = AuthenticationForm  # what the mixin below is mixed into, for its super() calls
else:
    _AuthenticationFormBase = object


class ThrottledAuthenticationMixin(_AuthenticationFormBase):
    """For Django's authentication forms: the password is judged only within the lock-out's count.

    Carries the step-up's code field; the pages show it once the step-up is asked for
    (`step_up_asked`), or whenever it holds something.
    """

    locked_seconds: int = 0
    step_up_asked: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["code"] = forms.CharField(
            label="E-posta ile gelen giriş kodu",
            required=False,
            max_length=12,
            widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
        )

    def clean_code(self) -> str:
        code = "".join(str(self.cleaned_data.get("code") or "").split())
        if code and not step_up.code_is_well_formed(code):
            self.step_up_asked = True
            raise forms.ValidationError(step_up.CODE_FORMAT_MESSAGE, code="code_format")
        return code

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if not username or not password or self.has_error("code"):
            return super().clean()
        try:
            return judge_password(
                username=username,
                ip_address=client_ip(self.request),
                judge=super().clean,
                wrong=forms.ValidationError,
                code=self.cleaned_data.get("code", ""),
            )
        except LoginLocked as locked:
            self.locked_seconds = locked.seconds
            raise forms.ValidationError(locked_message(locked.seconds), code="locked") from None
        except StepUpRequired as asked:
            self.step_up_asked = True
            raise forms.ValidationError(asked.message, code="step_up") from None


class ThrottledAuthenticationForm(ThrottledAuthenticationMixin, AuthenticationForm):
    error_messages = {**AuthenticationForm.error_messages, "invalid_login": INVALID_LOGIN_MESSAGE}


class ThrottledAdminAuthenticationForm(ThrottledAuthenticationMixin, AdminAuthenticationForm):
    """For `admin.site.login_form`: the admin login shares the agents' counters."""


class RateLimitedLoginView(LoginView):
    """The agent login page; a locked-out caller gets the Turkish message with 429 and `Retry-After`."""

    authentication_form = ThrottledAuthenticationForm

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        # Always a ThrottledAuthenticationForm (`authentication_form`).
        locked_seconds = form.locked_seconds if isinstance(form, ThrottledAuthenticationMixin) else 0
        return lock_response(super().form_invalid(form), locked_seconds)


def throttled_admin_login(login: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wraps `AdminSite.login` so a lock-out answers 429 with `Retry-After` there too (see AgenciesConfig)."""

    def admin_login(request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        response = login(request, extra_context)
        form = (getattr(response, "context_data", None) or {}).get("form")
        return lock_response(response, getattr(form, "locked_seconds", 0))

    admin_login.throttled = True  # type: ignore[attr-defined]
    return admin_login


class ThrottledAuthTokenSerializer(UnknownFieldsRefused, AuthTokenSerializer):
    """DRF's token login with the same lock-out; a lock answers 429 with `Retry-After`, a step-up
    400 on `code` (send the e-mailed code in that field, with the password)."""

    code = serializers.CharField(label="E-posta ile gelen giriş kodu", required=False, allow_blank=True, max_length=12)

    def validate_code(self, value: str) -> str:
        code = "".join(value.split())
        if code and not step_up.code_is_well_formed(code):
            raise exceptions.ValidationError(step_up.CODE_FORMAT_MESSAGE)
        return code

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        username, password = attrs.get("username"), attrs.get("password")
        if not username or not password:
            return super().validate(attrs)
        try:
            return judge_password(
                username=username,
                ip_address=client_ip(self.context.get("request")),
                judge=lambda: super(ThrottledAuthTokenSerializer, self).validate(attrs),
                wrong=exceptions.ValidationError,
                code=attrs.get("code", ""),
            )
        except LoginLocked as locked:
            raise exceptions.Throttled(wait=locked.seconds, detail=locked_message(locked.seconds)) from None
        except StepUpRequired as asked:
            raise exceptions.ValidationError({"code": [asked.message]}, code="step_up") from None
