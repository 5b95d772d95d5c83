"""Commissions over the API: the agency's agreements and sub-agency shares (list, create, read
one), a policy's commission, and the production report (the desk's numbers, as JSON).

Conventions as in every app's API (the kit: `insurehub.api`): reads go through the agency-scoped selectors, so another
agency's agreement or policy answers 404 exactly like an unknown one; errors are
`{"field": ["message"]}` (400) and `{"detail": "message"}` (401/403/404), answered by the one
exception handler (`insurehub.api_errors`) from the services' errors.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from commissions import production_report as report_service
from commissions import selectors
from commissions.models import CommissionBase, PolicyCommission
from commissions.services import (
    RATE_NOT_A_NUMBER_TR,
    RATE_OUT_OF_RANGE_TR,
    RATE_TOO_PRECISE_TR,
    SHARE_NOT_A_NUMBER_TR,
    SHARE_OUT_OF_RANGE_TR,
    SHARE_TOO_PRECISE_TR,
    commission_agreement_create,
    sub_agency_share_create,
)
from insurehub import api_input
from insurehub.api.filters import query_filters
from insurehub.api.ids import pk_filter, pk_or_404
from insurehub.api.pagination import PAGE_PARAMETERS, paginated, paginated_response
from insurehub.api.responses import NOT_AUTHENTICATED, NOT_FOUND, DetailSerializer, field_errors
from insurehub.request_types import AuthenticatedRequest
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
    found_cancelled_on = serializers.DateField(
        allow_null=True,
        help_text="A reversal for a policy the nightly sync found cancelled at the insurer (no refund "
        "known, reckoned by the days left after this day); null for our own cancellation's.",
    )
    sub_agency = serializers.IntegerField(source="sub_agency_id", allow_null=True)
    sub_agency_rate = serializers.DecimalField(
        max_digits=5, decimal_places=2, allow_null=True, help_text="The share in force on the issue day, percent."
    )
    sub_agency_amount = serializers.DecimalField(
        max_digits=12, decimal_places=2, help_text="The sub-agency's part of `amount` (same sign); 0 with none."
    )

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
    def get(self, request: AuthenticatedRequest) -> Response:
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
    def post(self, request: AuthenticatedRequest) -> Response:
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
    def get(self, request: AuthenticatedRequest, agreement_id: str) -> Response:
        agreement = selectors.commission_agreement_get(user=request.user, pk=pk_or_404(agreement_id))
        return Response(CommissionAgreementSerializer(agreement).data)


class PolicyCommissionApi(APIView):
    @extend_schema(
        operation_id="policies_commission_retrieve",
        summary="A policy's commission",
        description=(
            "What the policy earned at issuance and, once cancelled, what was reversed. The agency's rate and "
            "part are the agency's: a sub-agency user is answered 403."
        ),
        parameters=[_path_id("policy_id", "The policy's `id`.")],
        responses={
            200: PolicyCommissionSerializer,
            403: OpenApiResponse(DetailSerializer, description="Not logged in, or a sub-agency user."),
            404: NOT_FOUND,
        },
    )
    def get(self, request: AuthenticatedRequest, policy_id: str) -> Response:
        summary = selectors.policy_commission_get(user=request.user, policy_id=pk_or_404(policy_id))
        return Response(PolicyCommissionSerializer(summary).data)


# --- sub-agency shares ---------------------------------------------------------------------------


class SubAgencyShareSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    sub_agency = serializers.IntegerField(source="sub_agency_id")
    sub_agency_name = serializers.CharField(source="sub_agency.name")
    rate = serializers.DecimalField(max_digits=5, decimal_places=2, help_text="Percent of the agency's commission.")
    effective_from = serializers.DateField(help_text="In force from this day until the next share's start.")
    in_force = serializers.BooleanField(help_text="The share that applies today.")
    created_by = serializers.CharField(source="created_by.get_username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "SubAgencyShare"


class SubAgencySharesApi(APIView):
    """GET lists the agency's sub-agency shares (history included); POST enters a new one."""

    class FilterSerializer(serializers.Serializer):
        sub_agency = pk_filter(required=False, help_text="A sub-agency's id.")

        class Meta:
            ref_name = "SubAgencyShareFilter"

    class InputSerializer(api_input.InputSerializer):
        """Shapes only; the rules (a sub-agency of the agency, the range, one share per start day)
        are the service's."""

        sub_agency = serializers.IntegerField(help_text="The sub-agency's id.")
        rate = serializers.DecimalField(
            max_digits=5,
            decimal_places=2,
            help_text="Percent of the agency's commission, above 0 and at most 100.",
            error_messages={
                "invalid": SHARE_NOT_A_NUMBER_TR,
                "max_digits": SHARE_OUT_OF_RANGE_TR,
                "max_whole_digits": SHARE_OUT_OF_RANGE_TR,
                "max_decimal_places": SHARE_TOO_PRECISE_TR,
            },
        )
        effective_from = serializers.DateField(help_text="The first day it applies (YYYY-MM-DD).")

        class Meta:
            ref_name = "SubAgencyShareInput"

    @extend_schema(
        operation_id="sub_agency_shares_list",
        summary="List the agency's sub-agency commission shares",
        parameters=[FilterSerializer, *PAGE_PARAMETERS],
        responses={
            200: paginated(SubAgencyShareSerializer, name="PaginatedSubAgencyShareList"),
            400: field_errors("Bad filter.", {"sub_agency": ["Geçerli bir tam sayı girin."]}),
            403: NOT_AUTHENTICATED,
        },
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = query_filters(self.FilterSerializer, request)
        shares = selectors.sub_agency_share_list(user=request.user, sub_agency_id=filters.get("sub_agency"))
        return paginated_response(
            queryset=shares, serializer_class=SubAgencyShareSerializer, request=request, view=self
        )

    @extend_schema(
        operation_id="sub_agency_shares_create",
        summary="Enter a sub-agency's commission share",
        description=(
            "A new share is a new row from its start day; the earlier one stays as history and the "
            "commission entries reckoned under it keep their part. Only the agency's admin (not a "
            "sub-agency's) may enter one."
        ),
        request=InputSerializer,
        examples=[
            OpenApiExample(
                "60 % of the agency's commission",
                request_only=True,
                value={"sub_agency": 3, "rate": "60.00", "effective_from": "2026-01-01"},
            )
        ],
        responses={
            201: SubAgencyShareSerializer,
            400: field_errors("Invalid input; nothing was saved.", {"rate": [SHARE_OUT_OF_RANGE_TR]}),
            403: NOT_THE_OWNER,
        },
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        share = sub_agency_share_create(
            user=request.user,
            sub_agency_id=data["sub_agency"],
            rate=data["rate"],
            effective_from=data["effective_from"],
        )
        shown = selectors.sub_agency_share_get(user=request.user, pk=share.pk)
        return Response(SubAgencyShareSerializer(shown).data, status=status.HTTP_201_CREATED)


class SubAgencyShareDetailApi(APIView):
    @extend_schema(
        operation_id="sub_agency_shares_retrieve",
        summary="A sub-agency's commission share",
        parameters=[_path_id("share_id", "The share's `id`.")],
        responses={200: SubAgencyShareSerializer, 403: NOT_AUTHENTICATED, 404: NOT_FOUND},
    )
    def get(self, request: AuthenticatedRequest, share_id: str) -> Response:
        share = selectors.sub_agency_share_get(user=request.user, pk=pk_or_404(share_id))
        return Response(SubAgencyShareSerializer(share).data)


# --- the production report -----------------------------------------------------------------------


def _money(**kwargs) -> serializers.DecimalField:
    return serializers.DecimalField(max_digits=14, decimal_places=2, **kwargs)


class FiguresSerializer(serializers.Serializer):
    policies = serializers.IntegerField(help_text="Policies issued in the range.")
    premium = _money(help_text="Their gross premium.")
    commission = _money(help_text="Commission earned at issuance (the entries' sum).")
    agency_commission = _money(help_text="The agency's part of it.")
    sub_agency_commission = _money(help_text="The sub-agencies' part of it.")
    cancellations = serializers.IntegerField(help_text="Of those policies, how many are cancelled (whenever).")
    refunds = _money(help_text="The insurers' refunds on our cancellations of them.")
    commission_reversed = _money(help_text="Commission given back (≤ 0).")
    sub_agency_reversed = _money(help_text="The sub-agencies' part of it (≤ 0).")
    net_premium = _money(help_text="premium − refunds.")
    net_commission = _money(help_text="commission + commission_reversed.")
    net_agency_commission = _money()
    net_sub_agency_commission = _money()

    class Meta:
        ref_name = "ProductionFigures"


class GroupSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="The month's first day, the insurer's, user's or sub-agency's id, or ''.")
    # DRF's metaclass takes declared fields off the class, so this is the output field, not the stubs'
    # `Field.label` attribute it appears to replace.
    label = serializers.CharField()  # type: ignore[assignment]
    figures = serializers.SerializerMethodField()

    class Meta:
        ref_name = "ProductionGroup"

    @extend_schema_field(FiguresSerializer)
    def get_figures(self, group: report_service.Group) -> dict:
        return FiguresSerializer(group.figures.as_dict()).data


class ProductionReportApi(APIView):
    class FilterSerializer(serializers.Serializer):
        agency = serializers.CharField(required=False, max_length=32, help_text="An agency's code (head office only).")
        date_from = serializers.DateField(required=False, help_text="First issue day (default: this month's first).")
        date_to = serializers.DateField(required=False, help_text="Last issue day, included.")
        insurer = serializers.CharField(required=False, max_length=32, help_text="An insurer's code.")
        product = serializers.ChoiceField(choices=PRODUCT_CHOICES, required=False)
        agent = pk_filter(required=False, help_text="The seller's user id (`Policy.sold_by`).")
        sub_agency = serializers.CharField(
            required=False, max_length=16, help_text="A sub-agency's id, or `acente` for the agency's own sales."
        )

        class Meta:
            ref_name = "ProductionReportFilter"

    @extend_schema(
        operation_id="production_report_retrieve",
        summary="The agency's production report",
        description=(
            "The desk's /acente/uretim-raporu/ as JSON, with the same filters and the same numbers: policies "
            "issued in the range (Türkiye's calendar) with their premium, commission (agency's and "
            "sub-agencies' parts), cancellations, refunds and net, in total and by month, insurer, product, "
            "seller and sub-agency; and the renewal rate of the policies ending in the range. The agency's "
            "admin reads their own agency; readers with `quotes.view_all_agencies` any (`agency`)."
        ),
        parameters=[FilterSerializer],
        responses={
            200: OpenApiTypes.OBJECT,
            400: field_errors("Bad filter.", {"date_to": [report_service.RANGE_REVERSED_TR]}),
            403: OpenApiResponse(DetailSerializer, description="Not logged in, or not the agency's manager."),
            404: NOT_FOUND,
        },
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = query_filters(self.FilterSerializer, request)
        agency = report_service.report_agency_for(user=request.user, agency_code=filters.get("agency", ""))
        report_filter = report_service.report_filter_make(
            agency=agency,
            date_from=filters.get("date_from"),
            date_to=filters.get("date_to"),
            insurer=filters.get("insurer", ""),
            product=filters.get("product", ""),
            sold_by_id=filters.get("agent"),
            sub_agency=filters.get("sub_agency", ""),
        )
        report = report_service.production_report(report_filter=report_filter)
        renewals = report.renewals
        return Response(
            {
                "agency": agency.code,
                "date_from": report_filter.date_from.isoformat(),
                "date_to": report_filter.date_to.isoformat(),
                "total": FiguresSerializer(report.total.as_dict()).data,
                **{key: GroupSerializer(groups, many=True).data for key, _, groups in report.breakdowns()},
                "renewals": {
                    "due": renewals.due,
                    "renewed": renewals.renewed,
                    "rate": None if renewals.rate is None else str(renewals.rate),
                },
            }
        )
