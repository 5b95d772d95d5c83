"""What every desk view shares: login for htmx fragments, application errors, paging, and
searches kept out of URLs."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from types import TracebackType
from typing import Any, overload

from django import forms
from django.apps import apps
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import BadRequest, ObjectDoesNotExist, PermissionDenied
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode
from django_htmx.http import HttpResponseClientRedirect

from insurehub.errors import AppError
from integrations.validators import mask_identity
from integrations.work import WorkState

PAGE_SIZE = 25
# Issuance states after which nothing changes without a human: the status fragment stops polling.
ISSUANCE_FINAL_STATES = (WorkState.SUBMITTED, WorkState.FAILED, WorkState.DEFERRED)


def fragment_login_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Like `login_required`, but a logged-out htmx poll sends the whole page to the login form
    instead of swapping the login page into a table cell."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        if getattr(request, "htmx", False):
            page = request.htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(redirect_to_login(page).url)
        return redirect_to_login(request.get_full_path())

    return wrapper


# --- application errors -----------------------------------------------------------------------


@overload
def desk_errors(target: forms.BaseForm | None = None) -> DeskOutcome: ...


@overload
def desk_errors(target: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]: ...


def desk_errors(target: Any = None) -> Any:
    """What a desk view does with the application's errors (`insurehub.errors`), in one place.

    Around the service call whose answer a page shows, as a context manager::

        with desk_errors(form) as outcome:
            customer = customer_create(user=request.user, data=form.cleaned_data)
        if outcome.ok:
            return redirect(...)

    an error's field messages go onto the form's fields of the same name (a form may rename them
    with `error_field(name) -> str`), anything else onto the top of the form; `outcome.message`
    and `outcome.status` are there for a page without a form.

    Over a whole view, as a decorator (`@desk_errors`), an error nothing shows becomes its error
    page: 403 for `Forbidden`, 400 for the rest. Both ways, "not found" (`NotFound`, any model's
    `DoesNotExist`) is the 404 page, the same for an unknown id and another agency's.
    """
    if callable(target):
        return _error_pages(target)
    return DeskOutcome(form=target)


def _error_pages(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except (AppError, ObjectDoesNotExist) as error:
            raise _error_page(error) from error

    return wrapper


class DeskOutcome:
    """How the service call inside `with desk_errors(...)` ended: ok, or the error the page shows."""

    def __init__(self, form: forms.BaseForm | None = None) -> None:
        self.form = form
        self.error: AppError | None = None

    def __enter__(self) -> DeskOutcome:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> bool:
        if isinstance(error, ObjectDoesNotExist) or (isinstance(error, AppError) and error.status == 404):
            raise _error_page(error) from error
        if not isinstance(error, AppError):
            return False
        self.error = error
        if self.form is not None:
            _add_form_errors(self.form, error)
        return True

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def message(self) -> str:
        return self.error.message if self.error is not None else ""

    @property
    def status(self) -> int:
        """The page's status: 200, or the error's (409 for a refused issuance)."""
        return self.error.status if self.error is not None else 200


def _add_form_errors(form: forms.BaseForm, error: AppError) -> None:
    if not error.field_errors:
        form.add_error(None, error.message)
        return
    rename = getattr(form, "error_field", None)
    for field, messages in error.field_errors.items():
        name = rename(field) if rename else field
        name = name if name in form.fields else None
        if name is not None and name in form.errors:
            continue  # the form's own check already said what is wrong with this field
        for message in messages:
            form.add_error(name, message)


def _error_page(error: BaseException) -> Exception:
    """The Django exception that shows the error's page."""
    if isinstance(error, ObjectDoesNotExist):
        return Http404(_not_found_message(error))
    assert isinstance(error, AppError)
    if error.status == 404:
        return Http404(error.message)
    if error.status == 403:
        return PermissionDenied(error.message)
    return BadRequest(error.message)


def _not_found_message(error: ObjectDoesNotExist) -> str:
    """ "Poliçe bulunamadı.": the model's Turkish name, capitalised the Turkish way (i → İ)."""
    for model in apps.get_models():
        if type(error) is model.DoesNotExist:
            name = str(model._meta.verbose_name)
            first = {"i": "İ", "ı": "I"}.get(name[:1], name[:1].upper())
            return f"{first}{name[1:]} bulunamadı."
    return "Kayıt bulunamadı."


def page_of(request: HttpRequest, items: Any) -> Page:
    return Paginator(items, PAGE_SIZE).get_page(request.GET.get("sayfa"))


# --- search: the term travels in a POST body, never in a URL ------------------------------------
#
# A customer's TCKN in a URL ends up in access logs, proxy logs, the browser's history and the
# Referer of the next page. So the search form POSTs; the term is kept in the agent's session
# under a random token, and the list is shown at `?arama=<token>`: a URL that pages, reloads and
# comes back with the Back button like any GET, but names nobody. Tokens run out after a while.

SEARCH_SESSION_KEY = "desk_searches"
SEARCH_TTL_SECONDS = 30 * 60
# Older searches are forgotten first: a session never grows without bound.
SEARCH_MAX_KEPT = 20
SEARCH_MAX_LENGTH = 64
_IDENTITY_RE = re.compile(r"[0-9]{10,11}")


@dataclass(frozen=True)
class DeskSearch:
    term: str = ""
    token: str = ""
    expired: bool = False

    @property
    def shown(self) -> str:
        """The term as the page may repeat it: an identity number only masked (KVKK)."""
        compact = "".join(self.term.split())
        return mask_identity(compact) if _IDENTITY_RE.fullmatch(compact) else self.term


def search_remember(request: HttpRequest, term: str) -> str:
    now = time.time()
    kept = {token: entry for token, entry in request.session.get(SEARCH_SESSION_KEY, {}).items() if entry[1] > now}
    token = secrets.token_urlsafe(9)
    kept[token] = [term, now + SEARCH_TTL_SECONDS]
    request.session[SEARCH_SESSION_KEY] = dict(sorted(kept.items(), key=lambda item: item[1][1])[-SEARCH_MAX_KEPT:])
    return token


def search_recall(request: HttpRequest) -> DeskSearch:
    token = request.GET.get("arama", "")
    if not token:
        return DeskSearch()
    entry = request.session.get(SEARCH_SESSION_KEY, {}).get(token)
    if entry is None or entry[1] <= time.time():
        return DeskSearch(expired=True)
    return DeskSearch(term=entry[0], token=token)


def search_redirect(request: HttpRequest, list_url_name: str) -> HttpResponse:
    term = request.POST.get("q", "").strip()[:SEARCH_MAX_LENGTH]
    url = reverse(list_url_name)
    if not term:
        return redirect(url)
    return redirect(f"{url}?{urlencode({'arama': search_remember(request, term)})}")
