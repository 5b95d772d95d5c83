"""The error answers every endpoint documents, in the shapes `insurehub.api_errors` gives them."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()

    class Meta:
        ref_name = "ErrorDetail"


def field_errors(description: str, example: dict) -> OpenApiResponse:
    """400: `{"field": ["message", ...]}`; errors inside `data` are nested under `data`."""
    return OpenApiResponse(
        response=OpenApiTypes.OBJECT,
        description=(
            f"{description} Field errors, DRF style: each bad field maps to a list of Turkish messages; "
            'a body that is not JSON answers `{"detail": "..."}`.'
        ),
        examples=[OpenApiExample("Field errors", value=example, status_codes=["400"])],
    )


NOT_AUTHENTICATED = OpenApiResponse(DetailSerializer, description="No valid session or token.")
NOT_FOUND = OpenApiResponse(
    DetailSerializer, description="Unknown id, or an object of another agency (never told apart)."
)
