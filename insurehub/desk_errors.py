"""What a desk view does with the application's errors (`insurehub.errors`): one helper for
every desk app, beside the API's exception handler (`insurehub.api_errors`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, overload

from django import forms
from django.apps import apps
from django.core.exceptions import BadRequest, ObjectDoesNotExist, PermissionDenied
from django.http import Http404
from django.http.response import HttpResponseBase

from insurehub.errors import AppError

_P = ParamSpec("_P")
_R = TypeVar("_R", bound=HttpResponseBase)


@overload
def desk_errors(target: forms.BaseForm | None = None) -> DeskOutcome: ...


@overload
def desk_errors(target: Callable[_P, _R]) -> Callable[_P, _R]: ...


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


def _error_pages(view: Callable[_P, _R]) -> Callable[_P, _R]:
    @wraps(view)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:  # (request, *args, **kwargs), passed on as they came
        try:
            return view(*args, **kwargs)
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
        # ModelBase gives every model class its DoesNotExist; django-stubs declare it per concrete model.
        if type(error) is model.DoesNotExist:  # type: ignore[attr-defined]
            name = str(model._meta.verbose_name)
            first = {"i": "İ", "ı": "I"}.get(name[:1], name[:1].upper())
            return f"{first}{name[1:]} bulunamadı."
    return "Kayıt bulunamadı."
