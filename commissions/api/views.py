"""Commissions over the API: the agency's agreements (list, create, read one) and a policy's commission.

Conventions as in every app's API (the kit: `insurehub.api`): reads go through the agency-scoped selectors, so another
agency's agreement or policy answers 404 exactly like an unknown one; errors are
`{"field": ["message"]}` (400) and `{"detail": "message"}` (401/403/404), answered by the one
exception handler (`insurehub.api_errors`) from the services' errors.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from commissions import selectors
from commissions.models import CommissionBase, PolicyCommission
from commissions.services import (
    RATE_NOT_A_NUMBER_TR,
    RATE_OUT_OF_RANGE_TR,
    RATE_TOO_PRECISE_TR,
    commission_agreement_create,
)
from insurehub import api_input
from insurehub.api.filters import query_filters
from insurehub.api.ids import pk_or_404
from insurehub.api.pagination import PAGE_PARAMETERS, paginated, paginated_response
from insurehub.api.responses import NOT_AUTHENTICATED, NOT_FOUND, DetailSerializer, field_errors
from integrations.models import PRODUCT_CHOICES


class CommissionAgreementSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    insurer = serializers.CharField(source="insurer.code")
    insurer_name = serializers.CharField(source="insurer.name")
    product = serializers.ChoiceField(choices=PRODUCT_CHOICES)
    rate = serializers.DecimalField(max_digits=5, decimal_places=2, help_text="Percent: `12.50` is 12.5 %.")
    base = serializers.ChoiceField(choices=CommissionBase.choices, help_text="Gross premium, or net of taxes.")
    effective_from = serializers.DateField(help_text="In force from this day until the next agreement's start.")
    in_force = serializers.BooleanField(help_text="The agreement that applies today.")
    created_by = serializers.CharField(source="created_by.get_username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "CommissionAgreement"


class CommissionEntrySerializer(serializers.Serializer):
    amount = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="Negative for a reversal.")
    premium = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="The gross premium.")
    base = serializers.ChoiceField(choices=CommissionBase.choices)
    base_amount = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="What the rate applies to.")
    rate = serializers.DecimalField(max_digits=5, decimal_places=2)
    refund = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    reckoning = serializers.ChoiceField(
        choices=PolicyCommission.Reckoning.choices,
        help_text="`rate` for the commission; a reversal's `refund` (its share) or `days` (the days left).",
    )
    agreement = serializers.IntegerField(source="agreement_id")
    computed_at = serializers.DateTimeField()

    class Meta:
        ref_name = "CommissionEntry"


class PolicyCommissionSerializer(serializers.Serializer):
    policy = serializers.IntegerField(source="policy.pk")
    state = serializers.ChoiceField(
        choices=["computed", "no_agreement", "no_premium"],
        help_text="`no_agreement`: none was in force on the issue day (entered later, it applies after "
        "`recompute_commissions`).",
    )
    message = serializers.CharField(help_text='Why there is none, in Turkish ("Komisyon anlaşması yok"); or "".')
    accrual = CommissionEntrySerializer(allow_null=True)
    reversal = CommissionEntrySerializer(allow_null=True, help_text="Once the insurer cancelled the policy.")
    net_amount = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)

    class Meta:
        ref_name = "PolicyCommission"


def _path_id(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.INT, OpenApiParameter.PATH, description=description)


NOT_THE_OWNER = OpenApiResponse(
    DetailSerializer, description="Not logged in, or not the agency's admin (only the admin enters agreements)."
)
CREATE_EXAMPLE = OpenApiExample(
    "Kasko on net premium",
    request_only=True,
    value={"insurer": "anka", "product": "kasko", "rate": "12.50", "base": "net", "effective_from": "2026-01-01"},
)


class CommissionAgreementsApi(APIView):
    """GET lists the agency's agreements (history included); POST enters a new one."""

    class FilterSerializer(serializers.Serializer):
        insurer = serializers.CharField(required=False, max_length=32, help_text="An insurer's code.")
        product = serializers.ChoiceField(choices=PRODUCT_CHOICES, required=False)

        class Meta:
            ref_name = "CommissionAgreementFilter"

    class InputSerializer(api_input.InputSerializer):
        """Shapes only; the rules (the agency's account at the insurer, the range of the rate, one
        agreement per start day) are the service's."""

        insurer = serializers.CharField(max_length=32, help_text="The insurer's code, e.g. `anka`.")
        product = serializers.ChoiceField(choices=PRODUCT_CHOICES)
        rate = serializers.DecimalField(
            max_digits=5,
            decimal_places=2,
            help_text="Percent, above 0 and at most 100, two decimals at most.",
            error_messages={
                "invalid": RATE_NOT_A_NUMBER_TR,
                "max_digits": RATE_OUT_OF_RANGE_TR,
                "max_whole_digits": RATE_OUT_OF_RANGE_TR,
                "max_decimal_places": RATE_TOO_PRECISE_TR,
            },
        )
        base = serializers.ChoiceField(choices=CommissionBase.choices)
        effective_from = serializers.DateField(help_text="The first day it applies (YYYY-MM-DD).")

        class Meta:
            ref_name = "CommissionAgreementInput"

    @extend_schema(
        operation_id="commission_agreements_list",
        summary="List the agency's commission agreements",
        parameters=[FilterSerializer, *PAGE_PARAMETERS],
        responses={
            200: paginated(CommissionAgreementSerializer, name="PaginatedCommissionAgreementList"),
            400: field_errors("Bad filter.", {"product": ['"x" geçerli bir seçim değil.']}),
            403: NOT_AUTHENTICATED,
        },
    )
    def get(self, request: Request) -> Response:
        filters = query_filters(self.FilterSerializer, request)
        agreements = selectors.commission_agreement_list(
            user=request.user, insurer_code=filters.get("insurer", ""), product=filters.get("product", "")
        )
        return paginated_response(
            queryset=agreements, serializer_class=CommissionAgreementSerializer, request=request, view=self
        )

    @extend_schema(
        operation_id="commission_agreements_create",
        summary="Enter a commission agreement",
        description=(
            "A new rate is a new agreement from its start day; the earlier one stays as history and the "
            "policies issued under it keep their commission. Only the agency's admin may enter one."
        ),
        request=InputSerializer,
        examples=[CREATE_EXAMPLE],
        responses={
            201: CommissionAgreementSerializer,
            400: field_errors(
                "Invalid input; nothing was saved.",
                {"rate": ["Komisyon oranı 0'dan büyük, en fazla 100 olmalıdır."]},
            ),
            403: NOT_THE_OWNER,
        },
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        agreement = commission_agreement_create(
            user=request.user,
            insurer_code=data["insurer"],
            product=data["product"],
            rate=data["rate"],
            base=data["base"],
            effective_from=data["effective_from"],
        )
        shown = selectors.commission_agreement_get(user=request.user, pk=agreement.pk)
        return Response(CommissionAgreementSerializer(shown).data, status=status.HTTP_201_CREATED)


class CommissionAgreementDetailApi(APIView):
    @extend_schema(
        operation_id="commission_agreements_retrieve",
        summary="A commission agreement",
        parameters=[_path_id("agreement_id", "The agreement's `id`.")],
        responses={200: CommissionAgreementSerializer, 403: NOT_AUTHENTICATED, 404: NOT_FOUND},
    )
    def get(self, request: Request, agreement_id: str) -> Response:
        agreement = selectors.commission_agreement_get(user=request.user, pk=pk_or_404(agreement_id))
        return Response(CommissionAgreementSerializer(agreement).data)


class PolicyCommissionApi(APIView):
    @extend_schema(
        operation_id="policies_commission_retrieve",
        summary="A policy's commission",
        description="What the policy earned at issuance and, once cancelled, what was reversed.",
        parameters=[_path_id("policy_id", "The policy's `id`.")],
        responses={200: PolicyCommissionSerializer, 403: NOT_AUTHENTICATED, 404: NOT_FOUND},
    )
    def get(self, request: Request, policy_id: str) -> Response:
        summary = selectors.policy_commission_get(user=request.user, policy_id=pk_or_404(policy_id))
        return Response(PolicyCommissionSerializer(summary).data)
