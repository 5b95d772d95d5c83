"""The step-up after a username's lock-out limit: a one-time code by e-mail, instead of a hard lock.

Why a code by e-mail and not a CAPTCHA: the lock-out that anyone could set off is the
per-username one (`LOGIN_MAX_FAILURES_PER_USERNAME` failures from any addresses lock the account
for everybody, its owner and the admin included). What must hold after that limit is "the
guesser gets no more guesses, the owner still gets in". A CAPTCHA keeps the owner in but lets the
guesser go on too, at the price of a solving service (cents a thousand) — and an image puzzle
shuts out agents who use a screen reader. Only the account's owner reads the account's mailbox,
and Django's e-mail backend is already configured for notifications: no new dependency, no third
party seeing our logins (KVKK).

How it goes:
- at the per-username limit, a login without a code is not judged (the password is not even
  looked at, as under a lock) and answers "a code was sent to the account's e-mail address, if it
  has one" — the same sentence for an unknown username, an account without an address, or one
  whose code went out a moment ago, so nothing tells a guesser which accounts exist;
- a code is 6 digits, good for `STEP_UP_CODE_SECONDS` (10 minutes) and `STEP_UP_CODE_TRIES` (5)
  wrong entries — a wrong password with it counts as one, since a code must not turn into a way
  around the password's count; kept as an HMAC in the shared cache, never in clear;
- codes are sent at most once a minute and `STEP_UP_CODES_PER_HOUR` (5) an hour per username: a
  guesser cannot flood the owner's mailbox;
- with a right code the password is judged and counted as usual; the per-username counter keeps
  running out its time, so the next guesser meets the step-up too.

The per-address counters stay hard locks: they only ever lock the address that failed.
An account without an e-mail address cannot pass the step-up: it waits out the lock, or an admin
lifts it (the "Kilidi kaldır" action on failed logins). Give staff accounts an address.
"""

from __future__ import annotations

import hmac
import logging
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.mail import send_mail
from django.utils.crypto import salted_hmac

logger = logging.getLogger(__name__)

STEP_UP_MESSAGE = (
    "Bu hesapta çok sayıda hatalı giriş denemesi oldu. Güvenliğiniz için hesabın kayıtlı e-posta "
    "adresine (varsa) tek kullanımlık bir giriş kodu gönderildi; kodu parolanızla birlikte girin."
)
WRONG_CODE_MESSAGE = "Giriş kodu hatalı ya da süresi dolmuş. Yeni bir kod için kod alanını boş bırakıp tekrar deneyin."
CODE_FORMAT_MESSAGE = "Giriş kodu 6 rakamdan oluşur."
SUBJECT = "InsureHub giriş kodunuz"


def _setting(name: str, default: int) -> int:
    return int(getattr(settings, name, default))


def _key(kind: str, username_key: str) -> str:
    # A digest, not the username: a cache key has a length and character limit, and names nobody.
    return f"login-step-up:{kind}:{salted_hmac('login-step-up-key', username_key).hexdigest()[:32]}"


def _code_digest(username_key: str, code: str) -> str:
    return salted_hmac("login-step-up-code", f"{username_key}:{code}").hexdigest()


def code_is_well_formed(code: str) -> bool:
    return len(code) == 6 and code.isascii() and code.isdigit()


def step_up_code_send(*, username_key: str) -> bool:
    """Send a fresh code to the account's address, unless one went out within the minute or the
    hour's allowance is spent. True if a mail was sent. Never raises: the answer is the same anyway."""
    if not cache.add(_key("sent", username_key), 1, timeout=60):
        return False
    hour = _key("hour", username_key)
    cache.add(hour, 0, timeout=3600)
    try:
        sent_this_hour = cache.incr(hour)
    except ValueError:  # expired between add and incr
        sent_this_hour = 1
    if sent_this_hour > _setting("STEP_UP_CODES_PER_HOUR", 5):
        return False
    users = list(
        get_user_model()
        .objects.filter(username__iexact=username_key, is_active=True)
        .exclude(email="")
        .values_list("email", flat=True)[:2]
    )
    if len(users) != 1:
        return False  # no account, no address (or two accounts differing in case only): nobody to send to
    code = f"{secrets.randbelow(1_000_000):06d}"
    minutes = _setting("STEP_UP_CODE_SECONDS", 600) // 60
    cache.set(
        _key("code", username_key),
        {"digest": _code_digest(username_key, code), "tries": _setting("STEP_UP_CODE_TRIES", 5)},
        timeout=_setting("STEP_UP_CODE_SECONDS", 600),
    )
    body = (
        f"InsureHub giriş kodunuz: {code}\n\n"
        f"Kod {minutes} dakika geçerlidir. Hesabınızda çok sayıda hatalı giriş denemesi olduğu için "
        "parolanızla birlikte bu kod istendi.\n\n"
        "Bu girişi siz yapmıyorsanız kodu kimseyle paylaşmayın, parolanızı değiştirin ve "
        "yöneticinize haber verin."
    )
    try:
        send_mail(SUBJECT, body, None, [users[0]])
    except Exception:
        logger.exception("login step-up: the code could not be mailed")
        return False
    logger.info("login step-up: a code was mailed")
    return True


def step_up_code_matches(*, username_key: str, code: str) -> bool:
    """Whether `code` is the account's current code (reads only: the caller spends a try on a miss)."""
    stored = cache.get(_key("code", username_key))
    if not stored or not code_is_well_formed(code):
        return False
    return hmac.compare_digest(stored["digest"], _code_digest(username_key, code))


def step_up_code_spend(*, username_key: str) -> None:
    """One try of the code used up (a wrong code, or a wrong password with the right code)."""
    key = _key("code", username_key)
    stored = cache.get(key)
    if not stored:
        return
    tries = int(stored["tries"]) - 1
    if tries <= 0:
        cache.delete(key)
    else:
        cache.set(key, {**stored, "tries": tries}, timeout=_setting("STEP_UP_CODE_SECONDS", 600))


def step_up_code_used(*, username_key: str) -> None:
    """A login went through with the code: it is spent."""
    cache.delete(_key("code", username_key))


def step_up_forget(*, username_key: str) -> None:
    """An admin lifted the lock: no code, and a fresh send allowance."""
    for kind in ("code", "sent", "hour"):
        cache.delete(_key(kind, username_key))
