"""Login for the desk's htmx fragments, which every app's pages poll or swap in."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django_htmx.http import HttpResponseClientRedirect

__all__ = ["fragment_login_required"]


def fragment_login_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Like `login_required`, but a logged-out htmx poll sends the whole page to the login form
    instead of swapping the login page into a table cell."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        htmx = getattr(request, "htmx", None)
        if htmx:
            page = htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(redirect_to_login(page).url)
        return redirect_to_login(request.get_full_path())

    return wrapper
