"""Output shapes shared by several APIs, and the error shapes every API documents.

Each API's own input (and any output only it answers with) is nested in the API class in
`views.py`. Identity numbers are masked in every output: a front end never needs the full
number back, and a leaked API log must not carry it (KVKK).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from insurehub.api.fields import MaskedIdentityField
from insurehub.masking import mask_identities_in_text, mask_identity
from integrations.models import CLASS_CHOICES, KIND_CHOICES, PRODUCT_CHOICES
from policies.models import Policy
from quotes.models import InsurerQuote, QuoteRequest
from work.item import WorkState


@extend_schema_field(OpenApiTypes.STR)
class MaskedTextField(serializers.Field):
    """Free text from an insurer, with any identity number it echoes masked."""

    def to_representation(self, value: Any) -> str:
        return mask_identities_in_text(value or "")


@extend_schema_field(
    {
        "type": "object",
        "description": "The validated input, in platform field names; `owner_id` is masked.",
        "additionalProperties": True,
        "example": {"plate": "34ABC123", "owner_id": "100******46", "registration_serial": "AB123456"},
    }
)
class MaskedInputField(serializers.Field):
    def to_representation(self, value: Any) -> dict:
        shown = dict(value or {})
        if "owner_id" in shown:
            shown["owner_id"] = mask_identity(shown["owner_id"])
        return shown


class InsurerSerializer(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()

    class Meta:
        ref_name = "Insurer"


class InsurerQuoteSerializer(serializers.Serializer):
    """One insurer's row: a quote, a refusal with its reason, or the state of the call still running."""

    id = serializers.IntegerField(help_text="Use it to issue this quote: POST /api/insurer-quotes/{id}/issue/.")
    insurer = InsurerSerializer()
    state = serializers.ChoiceField(choices=InsurerQuote.State.choices)
    state_label = serializers.CharField(source="get_state_display", help_text="The state as shown to an agent.")
    is_final = serializers.BooleanField(help_text="SUCCEEDED, FAILED or NO_ANSWER: the row will not change again.")
    attempt = serializers.IntegerField(help_text="The try under way (or the last one), counting from 1.")
    max_attempts = serializers.IntegerField()
    quote_no = serializers.CharField()
    premium = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    currency = serializers.CharField()
    valid_until = serializers.DateTimeField(allow_null=True)
    message = MaskedTextField(help_text="Why there is no quote, in Turkish, fit for the agent's screen.")
    error_class = serializers.ChoiceField(
        choices=CLASS_CHOICES, allow_blank=True, help_text="Empty when there was no error."
    )
    error_kind = serializers.ChoiceField(choices=KIND_CHOICES, allow_blank=True)
    provider_code = serializers.CharField(help_text="The insurer's own error code, when it gave one.")
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    class Meta:
        ref_name = "InsurerQuote"


class QuoteRequestSerializer(serializers.Serializer):
    """A quote request with every insurer's row. Expects `rows` in the context (see `quote_request_data`)."""

    id = serializers.UUIDField(source="public_id")
    product = serializers.ChoiceField(choices=PRODUCT_CHOICES)
    plate = serializers.CharField()
    owner_id = MaskedIdentityField()
    # A declared field: DRF's serializer metaclass takes it off the class, so `.data` stays the property.
    data = MaskedInputField(source="input_data")  # type: ignore[assignment]
    created_by = serializers.CharField(source="created_by.get_username")
    created_at = serializers.DateTimeField()
    deadline_at = serializers.DateTimeField(
        help_text="After this instant an insurer that has not answered is shown as NO_ANSWER."
    )
    complete = serializers.BooleanField(help_text="Every insurer's row is final: stop polling.")
    results = InsurerQuoteSerializer(many=True)

    class Meta:
        ref_name = "QuoteRequest"


def quote_request_data(request: QuoteRequest, rows: list[InsurerQuote]) -> dict:
    """The answer for one request: its fields and its rows (already ordered by the selector)."""
    request.results = rows
    request.complete = all(row.is_final for row in rows)
    serializer: serializers.Serializer = QuoteRequestSerializer(request)  # `.data` as any serializer's
    return serializer.data


class QuoteRequestListItemSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="public_id")
    product = serializers.ChoiceField(choices=PRODUCT_CHOICES)
    plate = serializers.CharField()
    owner_id = MaskedIdentityField()
    created_by = serializers.CharField(source="created_by.get_username")
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "QuoteRequestListItem"


class IssuanceSerializer(serializers.Serializer):
    """Poliçeleştirme: poll until `state` is SUBMITTED (policy issued) or FAILED/DEFERRED."""

    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=WorkState.choices)
    state_label = serializers.CharField(source="get_state_display")
    attempts = serializers.IntegerField()
    reference = serializers.CharField(help_text="What the insurer sees; the same on every retry.")
    insurer_quote = serializers.IntegerField(source="insurer_quote_id")
    quote_request = serializers.UUIDField(source="quote_request.public_id")
    insurer = InsurerSerializer(source="insurer_quote.insurer")
    policy_no = serializers.CharField(help_text="Set once the insurer issued the policy.")
    error_class = serializers.ChoiceField(choices=CLASS_CHOICES, allow_blank=True)
    error_kind = serializers.ChoiceField(choices=KIND_CHOICES, allow_blank=True)
    provider_code = serializers.CharField()
    error_message = MaskedTextField()
    next_attempt_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    class Meta:
        ref_name = "Issuance"


class PolicySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    policy_no = serializers.CharField()
    status = serializers.ChoiceField(choices=Policy.Status.choices)
    product = serializers.ChoiceField(choices=PRODUCT_CHOICES)
    insurer = InsurerSerializer()
    plate = serializers.CharField()
    owner_id = MaskedIdentityField()
    premium = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    issuance = serializers.IntegerField(source="issuance_id", allow_null=True)
    starts_on = serializers.DateField(
        allow_null=True, help_text="Start of the period (Türkiye's calendar); null until an insurer said."
    )
    ends_on = serializers.DateField(allow_null=True, help_text="End of the period; kept current by the nightly sync.")
    issued_at = serializers.DateTimeField()
    last_synced_at = serializers.DateTimeField(allow_null=True)

    class Meta:
        ref_name = "Policy"


class PolicyCustomerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    identity_no = MaskedIdentityField()

    class Meta:
        ref_name = "PolicyCustomer"


class PolicyDetailSerializer(PolicySerializer):
    """One policy with whom it is for and the quote request it was issued from."""

    customer = PolicyCustomerSerializer(allow_null=True)
    quote_request = serializers.UUIDField(
        source="issuance.quote_request.public_id",
        allow_null=True,
        default=None,
        help_text="The request the policy was issued from; null for a policy imported from CSV.",
    )

    class Meta:
        ref_name = "PolicyDetail"


class RenewalSerializer(PolicySerializer):
    """A policy in force that ends soon: quote its risk again before `ends_on`."""

    days_left = serializers.SerializerMethodField(help_text="Days from today (Türkiye) to `ends_on`; 0 = ends today.")
    quote_request = serializers.UUIDField(
        source="issuance.quote_request.public_id",
        allow_null=True,
        default=None,
        help_text="The request to quote again from; null for an imported policy (no risk details known).",
    )

    class Meta:
        ref_name = "Renewal"

    @extend_schema_field(OpenApiTypes.INT)
    def get_days_left(self, policy: Policy) -> int:
        from policies.periods import today

        assert policy.ends_on is not None  # renewals are the policies with an end in sight
        return (policy.ends_on - today()).days
