"""Every list of the API pages the same way: limit/offset, 50 by default, at most 200."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, inline_serializer
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class Page(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200


PAGE_PARAMETERS = [
    OpenApiParameter("limit", OpenApiTypes.INT, description="Page size (default 50, at most 200)."),
    OpenApiParameter("offset", OpenApiTypes.INT, description="Items to skip."),
]


def paginated_response(
    *, queryset: QuerySet[Any], serializer_class: type[serializers.BaseSerializer], request: Request, view: APIView
) -> Response:
    page = Page()
    items = page.paginate_queryset(queryset, request, view=view)
    return page.get_paginated_response(serializer_class(items, many=True).data)


def paginated(item: type[serializers.Serializer], *, name: str) -> serializers.Serializer:
    """The schema of a limit/offset page of `item`s."""
    return inline_serializer(
        name=name,
        fields={
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item(many=True),
        },
    )
