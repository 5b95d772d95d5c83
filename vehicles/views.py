"""The kasko form's vehicle picker asks these: brands, a brand's types, a type's years and values.

Small JSON answers for `static/insurehub/vehicle-picker.js`, from the current list. Only for a
logged-in user: the list is TSB's, but the desk is not a public service. A logged-out fetch is
answered 401 with a sentence, not redirected to the login page, which a script cannot show.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from insurehub.money import turkish_amount
from vehicles import selectors
from vehicles.models import KaskoValueList

QUERY_MAX_LENGTH = 64
NO_LIST_MESSAGE = "Kasko değer listesi yüklenmemiş."


def _json_login_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return JsonResponse({"detail": "Oturumunuz kapanmış; yeniden giriş yapın."}, status=401)
        return view(request, *args, **kwargs)

    return wrapper


def _answer(edition: KaskoValueList | None, **fields: Any) -> JsonResponse:
    response = JsonResponse({"list": edition.label if edition else None, **fields})
    # The list changes once a month; an answer kept by a proxy or a shared cache is still not theirs.
    response["Cache-Control"] = "private, max-age=60"
    return response


def _code(request: HttpRequest, name: str) -> str:
    """A code from the query string; anything but 3 digits is no code, and finds nothing."""
    value = request.GET.get(name, "")
    return value if len(value) == 3 and value.isascii() and value.isdigit() else ""


def _found(found: list[selectors.Found], limit: int) -> dict[str, Any]:
    return {"results": [{"code": f.code, "name": f.name} for f in found[:limit]], "more": len(found) > limit}


@_json_login_required
@require_GET
def vehicle_brands(request: HttpRequest) -> HttpResponse:
    """`?q=fıat`: the brands matching it (every brand for an empty q), by name."""
    edition = selectors.kasko_value_list_current()
    if edition is None:
        return _answer(None, results=[], more=False, detail=NO_LIST_MESSAGE)
    query = request.GET.get("q", "")[:QUERY_MAX_LENGTH]
    found = selectors.vehicle_brand_search(edition=edition, query=query)
    return _answer(edition, **_found(found, selectors.BRAND_LIMIT))


@_json_login_required
@require_GET
def vehicle_types(request: HttpRequest) -> HttpResponse:
    """`?marka=012&q=egea`: that brand's types matching q, by name."""
    edition = selectors.kasko_value_list_current()
    brand_code = _code(request, "marka")
    if edition is None or not brand_code:
        return _answer(edition, results=[], more=False)
    query = request.GET.get("q", "")[:QUERY_MAX_LENGTH]
    found = selectors.vehicle_type_search(edition=edition, brand_code=brand_code, query=query)
    return _answer(edition, **_found(found, selectors.TYPE_LIMIT))


@_json_login_required
@require_GET
def vehicle_years(request: HttpRequest) -> HttpResponse:
    """`?marka=012&tip=345`: the type's model years with their kasko value, newest first."""
    edition = selectors.kasko_value_list_current()
    brand_code, type_code = _code(request, "marka"), _code(request, "tip")
    if edition is None or not (brand_code and type_code):
        return _answer(edition, results=[])
    years = selectors.vehicle_year_values(edition=edition, brand_code=brand_code, type_code=type_code)
    results = [{"year": y.year, "value": str(y.value), "value_text": f"{turkish_amount(y.value)} TL"} for y in years]
    return _answer(edition, results=results)
