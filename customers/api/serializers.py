"""The customer API's shapes: the input a service checks, and the customer as answered.

The identity number is masked in every answer, as everywhere in the API (KVKK): a front end
that needs the customer again uses the `id`.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from customers.models import Customer
from insurehub.api.fields import MaskedIdentityField
from insurehub.api_input import InputSerializer


class StrictCharField(serializers.CharField):
    """Text only: DRF's CharField would turn a number into text, and an identity number sent as
    a number has already lost a VKN's leading zero."""

    default_error_messages = {"invalid": "Metin olarak gönderilmelidir."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class CustomerInputSerializer(InputSerializer):
    """Shapes only; the rules (checksums, phone, consent pairing, duplicates) are the service's."""

    name = StrictCharField(max_length=200, help_text="Ad soyad (a person) or unvan (a company).")
    identity_no = StrictCharField(
        max_length=16, help_text="TCKN (11 digits) or VKN (10 digits), checksummed; spaces are ignored."
    )
    phone = StrictCharField(
        required=False, allow_blank=True, max_length=32, help_text="Turkish number in any usual form; stored as +90…."
    )
    email = StrictCharField(required=False, allow_blank=True, max_length=254)
    address = StrictCharField(required=False, allow_blank=True, max_length=500)
    kvkk_consent_at = serializers.DateTimeField(
        required=False, allow_null=True, help_text="When the customer gave KVKK consent; needs the channel too."
    )
    kvkk_consent_channel = serializers.ChoiceField(
        choices=Customer.ConsentChannel.choices,
        required=False,
        allow_blank=True,
        help_text="How the consent was given; needs the time too.",
    )

    class Meta:
        ref_name = "CustomerInput"


class CustomerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    identity_no = MaskedIdentityField(help_text="Masked: `100******46`.")
    is_company = serializers.BooleanField(help_text="A VKN (company) rather than a TCKN (person).")
    phone = serializers.CharField(help_text="E.164: +90 and the national number, or empty.")
    email = serializers.CharField()
    address = serializers.CharField()
    kvkk_consent_at = serializers.DateTimeField(allow_null=True)
    kvkk_consent_channel = serializers.ChoiceField(choices=Customer.ConsentChannel.choices, allow_blank=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    class Meta:
        ref_name = "Customer"
