"""GET /api/quote-requests/{id}/comparison/: the desk's comparison as data.

Cells say explicitly whether the insurer lists the cover at all (`covered`) and its `limit`
(null = unlimited), so a client can never render "not listed" as "included".
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from insurehub.api.ids import uuid_or_404
from insurehub.api.responses import NOT_AUTHENTICATED, NOT_FOUND
from insurehub.request_types import AuthenticatedRequest
from quotes import selectors
from quotes.api.views import REQUEST_ID
from quotes.services.comparison import NOT_COVERED, Comparison, comparison_build


class InstallmentSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    total = serializers.CharField(help_text="The whole premium paid in `count` parts, TRY decimal string.")


class ColumnSerializer(serializers.Serializer):
    insurer_quote_id = serializers.IntegerField()
    insurer = serializers.CharField(source="insurer_code")
    insurer_name = serializers.CharField()
    quote_no = serializers.CharField()
    premium = serializers.CharField()
    valid_until = serializers.DateTimeField(allow_null=True)
    expired = serializers.BooleanField()
    cheapest = serializers.BooleanField(help_text="The cheapest quote still valid.")
    installments = InstallmentSerializer(many=True)


class CellSerializer(serializers.Serializer):
    covered = serializers.BooleanField(help_text="False: this insurer does not list the cover.")
    limit = serializers.CharField(allow_null=True, help_text="TRY decimal string; null = unlimited or n/a.")


class RowSerializer(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    cells = CellSerializer(many=True, help_text="One per column, in column order.")


class OptionCellSerializer(serializers.Serializer):
    listed = serializers.BooleanField(help_text="False: this insurer's answer does not say (repair shop: none asked).")
    value = serializers.JSONField(
        allow_null=True,
        help_text=(
            "What the price includes: a TRY decimal string (deductible, liability_limit; null = unlimited), "
            "days (replacement_car_days), authorized|contracted (repair_shop, as asked: the answer never says)."
        ),
    )
    text = serializers.CharField(help_text="The same, as the desk shows it (Turkish).")


class OptionRowSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="deductible, replacement_car_days, liability_limit or repair_shop.")
    name = serializers.CharField()
    asked = serializers.CharField(help_text="What the request asked, in Turkish (“Şirketin standardı”: nothing).")
    cells = OptionCellSerializer(many=True, help_text="One per column, in column order.")


class ComparisonSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="request.public_id")
    product = serializers.CharField(source="request.product")
    columns = ColumnSerializer(many=True)
    options = OptionRowSerializer(many=True, help_text="Kasko: the options each price includes; empty otherwise.")
    rows = RowSerializer(many=True)


def comparison_data(comparison: Comparison) -> dict[str, Any]:
    rows = [
        {
            "code": row.code,
            "name": row.name,
            "cells": [
                {"covered": False, "limit": None} if cell is NOT_COVERED else {"covered": True, "limit": cell}
                for cell in row.cells
            ],
        }
        for row in comparison.rows
    ]
    return ComparisonSerializer(
        {"request": comparison.request, "columns": comparison.columns, "options": comparison.options, "rows": rows}
    ).data


class ComparisonApi(APIView):
    @extend_schema(
        operation_id="quote_requests_comparison",
        summary="The request's quotes side by side: coverages by insurer, the cheapest marked",
        parameters=[REQUEST_ID],
        responses={200: ComparisonSerializer, 403: NOT_AUTHENTICATED, 404: NOT_FOUND},
    )
    def get(self, request: AuthenticatedRequest, public_id: str) -> Response:
        quote_request = selectors.quote_request_get(user=request.user, public_id=uuid_or_404(public_id))
        return Response(comparison_data(comparison_build(request=quote_request)))
