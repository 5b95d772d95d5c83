"""WSGI entry point for servers (gunicorn, `scripts/serve.sh`).

Production is the default here: a server started without DJANGO_SETTINGS_MODULE must refuse to
start without real secrets, never come up with DEBUG on and a public key. `manage.py` keeps
`local` for developers.
"""

import os

from django.core.wsgi import get_wsgi_application

from insurehub.gcpause import startup_heap_freeze

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "insurehub.settings.production")
application = get_wsgi_application()
startup_heap_freeze()  # short collector pauses for the threads serving pages and answer streams
