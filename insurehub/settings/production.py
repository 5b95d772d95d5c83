"""Production settings: refuse to start without a real secret; secure cookies and HTTPS."""

from urllib.parse import urlsplit

from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import MIDDLEWARE as _INHERITED_MIDDLEWARE  # named: this module extends it
from .base import env_bool, env_int

if not SECRET_KEY or len(SECRET_KEY) < 50:  # noqa: F405
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set to a long random value in production")

DEBUG = False


def site_url_checked(url: str) -> str:
    """SITE_URL as e-mails will link it: an absolute https URL (http only on this machine's loopback)."""
    parts = urlsplit(url)
    loopback = parts.hostname in {"127.0.0.1", "localhost", "::1"}
    if (
        not url
        or parts.scheme not in {"https", "http"}
        or not parts.hostname
        or (parts.scheme == "http" and not loopback)
    ):
        raise ImproperlyConfigured(
            f"SITE_URL must be set to the desk's public https address in production (e-mail links use it), got {url!r}"
        )
    return url.rstrip("/")


SITE_URL = site_url_checked(SITE_URL)  # noqa: F405
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Off only behind a proxy that terminates TLS and redirects itself (and in the serving test, on
# loopback); every cookie stays Secure whatever this says.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# `__Host-` cookies are accepted by browsers only over HTTPS, for this exact host and path "/": a
# sibling subdomain cannot plant a session or CSRF cookie (session fixation, CSRF token injection).
SESSION_COOKIE_NAME = "__Host-sessionid"
CSRF_COOKIE_NAME = "__Host-csrftoken"
# No script reads the CSRF cookie: forms carry the token, and Swagger UI gets it in its page.
CSRF_COOKIE_HTTPONLY = True
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Static files from the WSGI process itself (gzip/brotli, hashed names cached for a year), right
# after SecurityMiddleware so they get its headers but skip sessions. Only here: runserver serves
# them under DEBUG, and the manifest exists only after `collectstatic` (scripts/serve.sh).
_security = _INHERITED_MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1
MIDDLEWARE = [
    *_INHERITED_MIDDLEWARE[:_security],
    "whitenoise.middleware.WhiteNoiseMiddleware",
    *_INHERITED_MIDDLEWARE[_security:],
]
# Documents go wherever base.py chose (local disk, or S3 when DOCUMENT_STORAGE_BUCKET is set);
# static files are WhiteNoise's, compressed under hashed names.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}}  # noqa: F405

if not CREDENTIALS_KEY:  # noqa: F405
    raise ImproperlyConfigured("INSUREHUB_CREDENTIALS_KEY must be set (a Fernet key) in production")
try:
    # A malformed key would otherwise start fine and fail on the first insurer call or admin save.
    Fernet(CREDENTIALS_KEY)  # noqa: F405
except (ValueError, TypeError) as exc:
    raise ImproperlyConfigured(
        "INSUREHUB_CREDENTIALS_KEY is not a Fernet key (32 url-safe base64-encoded bytes); "
        "make one with Fernet.generate_key()"
    ) from exc
