"""Developer and demo settings: DEBUG on, a fixed non-secret key unless one is given."""

from .base import *  # noqa: F403
from .base import env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = SECRET_KEY or "insecure-local-development-key-do-not-use-in-production"  # noqa: F405
# The demo's sandbox insurers answer plain http on this machine (integrations.models.Insurer).
INSURER_ALLOW_HTTP = env_bool("INSURER_ALLOW_HTTP", True)
# ... and on loopback, which only this and the test settings allow (integrations.insurer_hosts).
INSURER_ALLOW_LOOPBACK = env_bool("INSURER_ALLOW_LOOPBACK", True)
# The demo desk pre-fills a card token the sandbox insurers accept.
DEMO_PAYMENT_TOKEN = "tok_demo_4242"  # noqa: S105 - a sandbox stand-in, no real card
