"""What the documents API answers (the PDF itself is a plain binary body)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from quotes.api.serializers import MaskedTextField
from work.item import WorkState


@extend_schema_field({"type": "string", "enum": list(WorkState.values)})
class WorkStateField(serializers.CharField):
    """The record's state, as an inline enum: a second component naming WorkState's choices would
    collide with the issuance's under drf-spectacular's per-field enum names."""


class PolicyDocumentSerializer(serializers.Serializer):
    """A policy's document record: poll the download until it answers 200."""

    policy = serializers.IntegerField(source="policy_id")
    state = WorkStateField()
    state_label = serializers.CharField(source="get_state_display")
    ready = serializers.SerializerMethodField(help_text="A PDF is stored and can be downloaded now.")
    size = serializers.IntegerField(allow_null=True, help_text="Bytes of the stored PDF.")
    sha256 = serializers.CharField(help_text="SHA-256 of the stored PDF (hex), empty until one is stored.")
    fetched_at = serializers.DateTimeField(allow_null=True)
    error_message = MaskedTextField()
    next_attempt_at = serializers.DateTimeField(allow_null=True)

    class Meta:
        ref_name = "PolicyDocument"

    def get_ready(self, document) -> bool:
        return bool(document.file)
