"""POST /api/dask/address/: DASK's address step over the API, as the desk shows it.

A client confirms with the customer that the UAVT code is their building before asking a DASK
quote; the quote itself does not require this call (each insurer checks the code again).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from insurehub import api_input
from insurehub.api.responses import NOT_AUTHENTICATED, field_errors
from insurehub.request_types import AuthenticatedRequest
from quotes.services.dask_address import NO_SUCH_ADDRESS_MESSAGE, AddressCheck, dask_address_check


class AddressInputSerializer(api_input.InputSerializer):
    uavt_code = serializers.CharField(help_text="The building's UAVT address code: 10 digits, as text.")


class AddressSerializer(serializers.Serializer):
    address = serializers.CharField()
    insurers = serializers.ListField(child=serializers.CharField(), help_text="The insurers that gave this address.")


class UnansweredSerializer(serializers.Serializer):
    insurer = serializers.CharField(source="insurer_name")
    message = serializers.CharField(help_text="Why this insurer gave no address, in Turkish.")


class AddressCheckSerializer(serializers.Serializer):
    uavt_code = serializers.CharField()
    addresses = serializers.SerializerMethodField(
        help_text="Each distinct address the insurers hold for the code; empty when none could be asked in time."
    )
    unanswered = UnansweredSerializer(many=True)

    def get_addresses(self, check: AddressCheck) -> list[dict]:
        return [{"address": address, "insurers": insurers} for address, insurers in check.addresses]


class DaskAddressApi(APIView):
    @extend_schema(
        operation_id="dask_address_check",
        summary="The address of a UAVT code, from the agency's DASK insurers",
        request=AddressInputSerializer,
        examples=[OpenApiExample("A building", request_only=True, value={"uavt_code": "1234567890"})],
        responses={
            200: AddressCheckSerializer,
            400: field_errors("A malformed code, or no insurer knows it.", {"uavt_code": [NO_SUCH_ADDRESS_MESSAGE]}),
            403: NOT_AUTHENTICATED,
        },
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        payload = AddressInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        check = dask_address_check(user=request.user, uavt_code=payload.validated_data["uavt_code"])
        return Response(AddressCheckSerializer(check).data)
