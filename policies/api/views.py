"""Cancelling a policy over the API: one endpoint to start it, one to read where it stands."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from insurehub import api_input
from insurehub.api.ids import pk_or_404
from insurehub.api.responses import NOT_AUTHENTICATED, NOT_FOUND, field_errors
from insurehub.request_types import AuthenticatedRequest
from integrations.operations import CANCEL_REASONS
from policies import selectors
from policies.models import Cancellation
from policies.services.cancellations import cancellation_start


class CancellationSerializer(serializers.ModelSerializer):
    policy_no = serializers.CharField(source="policy.policy_no")
    insurer = serializers.CharField(source="policy.insurer.code")

    class Meta:
        model = Cancellation
        fields = [
            "id",
            "policy",
            "policy_no",
            "insurer",
            "reference",
            "reason",
            "effective_on",
            "refund_estimate",
            "refund",
            "cancelled_on",
            "state",
            "maybe_sent",
            "error_kind",
            "provider_code",
            "error_message",
            "created_at",
        ]


def _path_id(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.INT, OpenApiParameter.PATH, description=description)


class PolicyCancelApi(APIView):
    class InputSerializer(api_input.InputSerializer):
        reason = serializers.ChoiceField(choices=CANCEL_REASONS)
        effective_on = serializers.DateField(
            help_text="The day the cancellation takes effect (ignored for a duplicate)."
        )

        class Meta:
            ref_name = "CancelInput"

    @extend_schema(
        operation_id="policies_cancel",
        summary="Cancel a policy (iptal)",
        description=(
            "Stores the cancellation and starts it in the background: 202, with the refund the contract's "
            "rule gives (`refund_estimate`). Asking again for a policy with a live cancellation answers 200 "
            "with that one. Poll GET /api/cancellations/{id}/ for the insurer's own `refund`."
        ),
        parameters=[_path_id("policy_id", "The policy's `id`.")],
        request=InputSerializer,
        responses={
            202: OpenApiResponse(CancellationSerializer, description="Cancellation started."),
            200: OpenApiResponse(CancellationSerializer, description="The policy's cancellation already existed."),
            400: field_errors("Bad input.", {"effective_on": ["İptal tarihi poliçe bitişinden sonra olamaz."]}),
            403: NOT_AUTHENTICATED,
            404: NOT_FOUND,
            409: OpenApiResponse(description="The policy is not in force."),
        },
    )
    def post(self, request: AuthenticatedRequest, policy_id: str) -> Response:
        pk = pk_or_404(policy_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        existed = Cancellation.objects.filter(policy_id=pk).exclude(state="FAILED").exists()
        cancellation = cancellation_start(user=request.user, policy_id=pk, **serializer.validated_data)
        return Response(
            CancellationSerializer(cancellation).data,
            status=status.HTTP_200_OK if existed else status.HTTP_202_ACCEPTED,
        )


class CancellationDetailApi(APIView):
    @extend_schema(
        operation_id="cancellations_retrieve",
        summary="A cancellation's state",
        parameters=[_path_id("cancellation_id", "The cancellation's `id`.")],
        responses={200: CancellationSerializer, 403: NOT_AUTHENTICATED, 404: NOT_FOUND},
    )
    def get(self, request: AuthenticatedRequest, cancellation_id: str) -> Response:
        cancellation = selectors.cancellation_get(user=request.user, pk=pk_or_404(cancellation_id))
        return Response(CancellationSerializer(cancellation).data)
