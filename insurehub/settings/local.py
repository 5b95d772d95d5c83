"""Developer and demo settings: DEBUG on, a fixed non-secret key unless one is given."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import env_bool

if INSUREHUB_ENV == "production":  # noqa: F405
    # DEBUG pages show settings and stack frames, and the key below is public: never on a server.
    raise ImproperlyConfigured(
        "INSUREHUB_ENV=production but the developer settings (insurehub.settings.local, DEBUG on) were "
        "loaded: set DJANGO_SETTINGS_MODULE=insurehub.settings.production"
    )

DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = SECRET_KEY or "insecure-local-development-key-do-not-use-in-production"  # noqa: F405
# The demo's sandbox insurers answer plain http on this machine (integrations.models.Insurer).
INSURER_ALLOW_HTTP = env_bool("INSURER_ALLOW_HTTP", True)
# ... and on loopback, which only this and the test settings allow (integrations.insurer_hosts).
INSURER_ALLOW_LOOPBACK = env_bool("INSURER_ALLOW_LOOPBACK", True)
# The demo desk pre-fills a card token the sandbox insurers accept.
DEMO_PAYMENT_TOKEN = "tok_demo_4242"  # noqa: S105 - a sandbox stand-in, no real card
SITE_URL = SITE_URL or "http://127.0.0.1:8000"  # noqa: F405 - runserver's address
