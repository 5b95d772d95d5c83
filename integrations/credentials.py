"""Insurer credentials, encrypted at rest.

The key comes from `INSUREHUB_CREDENTIALS_KEY` (a Fernet key). Only under DEBUG (the developer's
`local` settings) is one derived from SECRET_KEY, so the embedded demo runs with nothing to set:
anywhere else a derived key would make the credentials as secret as the secret key's weakest
copy, so a missing key is refused (production refuses to start without it, see
settings.production; tests set a fixed test key).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def _fernet() -> Fernet:
    key = getattr(settings, "CREDENTIALS_KEY", "")
    if not key:
        if not settings.DEBUG:
            raise ImproperlyConfigured("INSUREHUB_CREDENTIALS_KEY must be set (a Fernet key) when DEBUG is off")
        digest = hashlib.sha256(("insurehub-credentials:" + settings.SECRET_KEY).encode()).digest()
        key = base64.urlsafe_b64encode(digest).decode()
    return Fernet(key)


def encrypt_credentials(credentials: Mapping[str, str]) -> str:
    return _fernet().encrypt(json.dumps(dict(credentials), sort_keys=True).encode()).decode()


def decrypt_credentials(token: str) -> dict[str, str]:
    if not token:
        return {}
    try:
        return json.loads(_fernet().decrypt(token.encode()))
    except InvalidToken as exc:
        raise ValueError("insurer credentials cannot be decrypted with the configured key") from exc


# --- payment tokens ----------------------------------------------------------------------------
# A customer's payment token is a one-use secret like a credential: the same key keeps it at
# rest, and only the moment of the insurer call sees it in clear.


def encrypt_secret(value: str) -> str:
    return _fernet().encrypt(str(value).encode()).decode()


def decrypt_secret(token: str) -> str:
    try:
        return _fernet().decrypt(str(token).encode()).decode()
    except InvalidToken as exc:
        raise ValueError("a stored secret cannot be decrypted with the configured key") from exc
