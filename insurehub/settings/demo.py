"""The demo as `scripts/run.sh` serves it to agents: the developer settings with DEBUG off.

Agents click around the demo, and a mistyped address must show the Turkish 404 page
(templates/404.html), never Django's debug page with every URL pattern and "DEBUG = True". What
DEBUG did for the developer settings is done here explicitly instead:

- static files: WhiteNoise, straight from the apps' and `STATICFILES_DIRS` folders (no
  `collectstatic`, re-read as they change), since `runserver` serves them only under DEBUG;
- the credentials key: derived from the (public) demo secret exactly as `integrations.credentials`
  derives it under DEBUG, so a `var/` database seeded with DEBUG on still reads its insurer
  accounts and payment tokens. Like the developer settings it builds on, this module refuses to
  load on a production machine (`INSUREHUB_ENV=production`, see local.py).
"""

import base64
import hashlib

from .local import *  # noqa: F403
from .local import MIDDLEWARE as _INHERITED_MIDDLEWARE  # named: this module extends it

DEBUG = False

_digest = hashlib.sha256(("insurehub-credentials:" + SECRET_KEY).encode()).digest()  # noqa: F405
CREDENTIALS_KEY = CREDENTIALS_KEY or base64.urlsafe_b64encode(_digest).decode()  # noqa: F405

_security = _INHERITED_MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1
MIDDLEWARE = [
    *_INHERITED_MIDDLEWARE[:_security],
    "whitenoise.middleware.WhiteNoiseMiddleware",
    *_INHERITED_MIDDLEWARE[_security:],
]
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
