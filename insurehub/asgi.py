"""ASGI entry point; production by default for the same reason as `wsgi.py`."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "insurehub.settings.production")
application = get_asgi_application()
