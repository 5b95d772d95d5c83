"""Request types for the views, so that mypy knows what the middleware and the login checks
already guarantee at run time (django-stubs' documented pattern). Annotations only: nothing here
runs, and nothing here logs anyone in.

`AuthenticatedHttpRequest` is for desk views behind `login_required` (or the desk's
`fragment_login_required`) and for admin actions; `AuthenticatedRequest` for API views under the
project's default permission, `IsAuthenticated`. A view anyone may reach keeps `HttpRequest`.
"""

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails
from rest_framework.request import Request


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails  # django_htmx's HtmxMiddleware (settings.MIDDLEWARE) sets it on every request


class AuthenticatedHttpRequest(HtmxHttpRequest):
    user: User


class AuthenticatedRequest(Request):
    user: User
