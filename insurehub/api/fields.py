"""Output fields every API shows identity numbers through (KVKK: masked in every answer)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from insurehub.masking import mask_identity


@extend_schema_field(OpenApiTypes.STR)
class MaskedIdentityField(serializers.Field):
    """A TCKN/VKN shown as `100******46`."""

    def to_representation(self, value: Any) -> str:
        return mask_identity(value)
