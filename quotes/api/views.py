"""The quote desk for other front ends: one API per operation, each a few lines over a service.

Every read goes through `quotes.selectors`, so an agent only ever reaches their own agency's
objects; another agency's id answers 404 exactly like an unknown one. Errors are DRF's shapes:
400 `{"field": ["message"]}` (fields inside `data` nested under `data`), and
`{"detail": "message"}` for 401/403/404/409. The services' errors (`insurehub.errors`) and
`DoesNotExist` are turned into them by the one exception handler, `insurehub.api_errors`.
"""

from __future__ import annotations

import math
from typing import NoReturn

from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from agencies.auth import ThrottledAuthTokenSerializer
from insurehub import api_input
from insurehub.api.filters import SearchInputSerializer, query_filters, search_not_in_url, search_post_description
from insurehub.api.ids import pk_or_404, uuid_or_404
from insurehub.api.pagination import PAGE_PARAMETERS, paginated, paginated_response
from insurehub.api.responses import NOT_AUTHENTICATED, NOT_FOUND, DetailSerializer, field_errors
from insurehub.request_types import AuthenticatedRequest
from integrations.models import PRODUCT_CHOICES
from policies.models import Policy
from policies.selectors import policy_get
from quotes import selectors
from quotes.api.serializers import (
    IssuanceSerializer,
    PolicyDetailSerializer,
    PolicySerializer,
    QuoteRequestListItemSerializer,
    QuoteRequestSerializer,
    RenewalSerializer,
    quote_request_data,
)
from quotes.api.throttles import QUOTE_CREATE_THROTTLES, throttled_message
from quotes.models import Issuance
from quotes.services.issuance import issuance_start
from quotes.services.quote_requests import quote_request_close_overdue, quote_request_create
from quotes.services.renewals import renewal_quote_create
from quotes.validation import product_input_fields


# Largest value a database integer key holds: a longer id is unknown, not a database error.
def _path_id(name: str, kind: OpenApiTypes, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, kind, OpenApiParameter.PATH, description=description)


REQUEST_ID = _path_id("public_id", OpenApiTypes.UUID, "The request's `id` (a UUID).")


THROTTLED = OpenApiResponse(
    DetailSerializer,
    description="Too many quote requests from this user or this agency; try again after `Retry-After` seconds.",
    examples=[OpenApiExample("Throttled", value={"detail": throttled_message(12)})],
)
RETRY_AFTER = OpenApiParameter(
    "Retry-After", OpenApiTypes.INT, OpenApiParameter.HEADER, response=[429], description="Seconds to wait."
)


QUOTE_REQUEST_SEARCH_PATH = "/api/quote-requests/search/"
# One component for the list and its POST search: the same page of the same items.
PAGINATED_QUOTE_REQUESTS = paginated(QuoteRequestListItemSerializer, name="PaginatedQuoteRequestList")


class QuoteRequestSearchApi(APIView):
    """POST: the agency's quote requests by plate, a customer's TCKN/VKN or name, the term in the body."""

    @extend_schema(
        operation_id="quote_requests_search",
        summary="Search quote requests (by plate, a customer's TCKN/VKN or name)",
        description=search_post_description("/api/quote-requests/"),
        request=SearchInputSerializer,
        parameters=PAGE_PARAMETERS,
        examples=[OpenApiExample("By TCKN", request_only=True, value={"search": "10000000146"})],
        responses={
            200: PAGINATED_QUOTE_REQUESTS,
            400: field_errors("Bad term.", {"search": ["Bu alan boş bırakılamaz."]}),
            403: NOT_AUTHENTICATED,
        },
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        term = SearchInputSerializer(data=request.data)
        term.is_valid(raise_exception=True)
        requests = selectors.quote_request_list(user=request.user, search=term.validated_data["search"])
        return paginated_response(
            queryset=requests, serializer_class=QuoteRequestListItemSerializer, request=request, view=self
        )


class QuoteRequestsApi(APIView):
    """GET lists the agency's requests; POST asks every insurer for a quote."""

    def get_throttles(self):
        # Only asking costs the insurers (and the agency's contracted rates); reading does not.
        if self.request.method == "POST":
            return [throttle() for throttle in QUOTE_CREATE_THROTTLES]
        return []

    def throttled(self, request: Request, wait: float | None) -> NoReturn:
        # `wait` set afterwards: given to the constructor, DRF appends an English sentence to the detail.
        throttled = exceptions.Throttled(detail=throttled_message(wait))
        # Throttled.__init__ sets `wait`; djangorestframework-stubs do not declare it.
        throttled.wait = max(1, math.ceil(wait or 1))  # type: ignore[attr-defined]
        raise throttled

    class ListFilterSerializer(serializers.Serializer):
        search = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=64,
            help_text=(
                "A plate, or part of the customer's name (Turkish letters in any case). A customer's "
                "TCKN/VKN is searched with POST /api/quote-requests/search/ (400 here)."
            ),
        )

        class Meta:
            ref_name = "QuoteRequestListFilter"

        def validate_search(self, value: str) -> str:
            return search_not_in_url(value, search_path=QUOTE_REQUEST_SEARCH_PATH)

    class CreateInputSerializer(api_input.InputSerializer):
        product = serializers.ChoiceField(choices=PRODUCT_CHOICES)
        # The fields are checked by the service (one Turkish message per field), not here.
        # A declared field: DRF's serializer metaclass takes it off the class, so `.data` stays the property.
        data = serializers.DictField(  # type: ignore[assignment]
            help_text=(
                "The product's fields. trafik: plate, owner_id, registration_serial, usage "
                "(private|commercial|taxi). kasko: trafik's fields and model_year, brand_code, model_code "
                "(3-digit strings from the current TSB kasko value list: a code not on it, or a year the type "
                "has no value for, is that field's error; docs/vehicles.md), and optionally the kasko options: "
                "deductible (0|2500|5000|10000 TRY), replacement_car_days (0|7|15), liability_limit (İMM, TRY: "
                "500000|1000000|2000000|2500000|3000000|5000000|10000000, or null for unlimited), repair_shop "
                "(authorized|contracted); absent: the insurer's standard. An insurer that does not sell a value "
                "answers a VALIDATION refusal on its row. "
                "dask: uavt_code, construction_type (reinforced_concrete|masonry|other), "
                "construction_year, floor_count, gross_m2, damage_status (none|minor|heavy), owner_id."
            )
        )

        class Meta:
            ref_name = "QuoteRequestCreateInput"

        def validate(self, attrs: dict) -> dict:
            """`data` holds the product's fields only: the service would drop any other one unread."""
            known = product_input_fields(attrs["product"])
            unknown = sorted(key for key in attrs["data"] if key not in known)
            if unknown:
                message = api_input.unknown_field_message(list(known))
                raise serializers.ValidationError({"data": {key: [message] for key in unknown}})
            return attrs

    @extend_schema(
        operation_id="quote_requests_list",
        summary="List quote requests",
        parameters=[ListFilterSerializer, *PAGE_PARAMETERS],
        responses={
            200: PAGINATED_QUOTE_REQUESTS,
            400: field_errors(
                "Bad filter, or an identity number in the URL (search it with POST /api/quote-requests/search/).",
                {"search": ["Bu alan en fazla 64 karakter olmalıdır."]},
            ),
            403: NOT_AUTHENTICATED,
        },
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = query_filters(self.ListFilterSerializer, request)
        requests = selectors.quote_request_list(user=request.user, search=filters.get("search", ""))
        return paginated_response(
            queryset=requests, serializer_class=QuoteRequestListItemSerializer, request=request, view=self
        )

    @extend_schema(
        operation_id="quote_requests_create",
        summary="Ask every insurer for a quote",
        description=(
            "Stores the request with one row per insurer (state QUEUED) and starts the calls in the "
            "background. Poll GET /api/quote-requests/{id}/ until `complete` is true."
        ),
        request=CreateInputSerializer,
        examples=[
            OpenApiExample(
                "Trafik",
                request_only=True,
                value={
                    "product": "trafik",
                    "data": {
                        "plate": "34ABC123",
                        "owner_id": "10000000146",
                        "registration_serial": "AB123456",
                        "usage": "private",
                    },
                },
            )
        ],
        responses={
            201: QuoteRequestSerializer,
            400: field_errors(
                "Invalid input; nothing was saved.",
                {"data": {"plate": ["Geçerli bir plaka girin (ör. 34 ABC 123)."]}},
            ),
            403: OpenApiResponse(
                DetailSerializer, description="Not logged in, the user belongs to no agency, or it is deactivated."
            ),
            429: THROTTLED,
        },
        parameters=[RETRY_AFTER],
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        serializer = self.CreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        quote_request = quote_request_create(user=request.user, **serializer.validated_data)
        rows = selectors.insurer_quotes_for(request=quote_request)
        return Response(quote_request_data(quote_request, rows), status=status.HTTP_201_CREATED)

    @staticmethod
    def field_errors_shape(field_errors: dict[str, list[str]]) -> dict:
        """The service names input fields bare; the answer mirrors the body, where they sit under
        `data` (read by the exception handler, `insurehub.api_errors`)."""
        nested: dict = {}
        for field, messages in field_errors.items():
            if field == "product":
                nested["product"] = messages
            else:
                nested.setdefault("data", {})[field] = messages
        return nested


class QuoteRequestDetailApi(APIView):
    @extend_schema(
        operation_id="quote_requests_retrieve",
        summary="A quote request with every insurer's result",
        parameters=[REQUEST_ID],
        responses={200: QuoteRequestSerializer, 403: NOT_AUTHENTICATED, 404: NOT_FOUND},
    )
    def get(self, request: AuthenticatedRequest, public_id: str) -> Response:
        quote_request = selectors.quote_request_get(user=request.user, public_id=uuid_or_404(public_id))
        quote_request_close_overdue(request=quote_request)
        rows = selectors.insurer_quotes_for(request=quote_request)
        return Response(quote_request_data(quote_request, rows))


# A card token in an error report (the 500 mail, a debug page) is a card: starred out there, when
# the body is a form (a JSON body is never in such a report's POST).
@method_decorator(sensitive_post_parameters("payment_token"), name="dispatch")
class InsurerQuoteIssueApi(APIView):
    class InputSerializer(api_input.InputSerializer):
        payment_token = serializers.CharField(max_length=200, help_text="The payment provider's card token.")
        installments = serializers.IntegerField(
            required=False, min_value=1, help_text="One of the counts the quote offered (`installments`); absent: 1."
        )
        overlap = serializers.ChoiceField(
            choices=["cancel_old"],
            required=False,
            help_text=(
                "A trafik policy in force overlaps the new one's period: `cancel_old` cancels it (vehicle sold) "
                "from the new policy's start once the new one is issued. Without it such an issuance is 409."
            ),
        )

        class Meta:
            ref_name = "IssueInput"

    @extend_schema(
        operation_id="insurer_quotes_issue",
        summary="Issue a quote (poliçeleştirme)",
        description=(
            "Stores the issuance and starts it in the background: 202. Issuing the same quote again "
            "(a double click, a retry after a lost answer) answers 200 with the issuance already stored, "
            "never a second policy. Poll GET /api/issuances/{id}/."
        ),
        parameters=[
            _path_id("insurer_quote_id", OpenApiTypes.INT, "The insurer quote's `id` from the request's results.")
        ],
        request=InputSerializer,
        responses={
            202: OpenApiResponse(IssuanceSerializer, description="Issuance started."),
            200: OpenApiResponse(IssuanceSerializer, description="This quote's issuance already existed."),
            400: field_errors("Bad input.", {"payment_token": ["Bu alan zorunludur."]}),
            403: NOT_AUTHENTICATED,
            404: NOT_FOUND,
            409: OpenApiResponse(
                DetailSerializer,
                description="The quote cannot be issued: no valid quote, expired, or another quote of the "
                "same request is being issued.",
            ),
        },
    )
    def post(self, request: AuthenticatedRequest, insurer_quote_id: str) -> Response:
        quote_id = pk_or_404(insurer_quote_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        # Only to pick 200 or 202: the service itself hands back the stored record on a repeat, and
        # it (not this check) decides whether the user may reach this quote at all.
        existed = Issuance.objects.filter(insurer_quote_id=quote_id).exists()
        issuance = issuance_start(user=request.user, insurer_quote_id=quote_id, **serializer.validated_data)
        return Response(
            IssuanceSerializer(issuance).data, status=status.HTTP_200_OK if existed else status.HTTP_202_ACCEPTED
        )


class IssuanceDetailApi(APIView):
    @extend_schema(
        operation_id="issuances_retrieve",
        summary="An issuance's state",
        parameters=[_path_id("issuance_id", OpenApiTypes.INT, "The issuance's `id`.")],
        responses={200: IssuanceSerializer, 403: NOT_AUTHENTICATED, 404: NOT_FOUND},
    )
    def get(self, request: AuthenticatedRequest, issuance_id: str) -> Response:
        issuance = selectors.issuance_get(user=request.user, pk=pk_or_404(issuance_id))
        return Response(IssuanceSerializer(issuance).data)


class PolicyListApi(APIView):
    class ListFilterSerializer(serializers.Serializer):
        product = serializers.ChoiceField(choices=PRODUCT_CHOICES, required=False)
        insurer = serializers.SlugField(required=False, max_length=32, help_text="An insurer's code, e.g. `anka`.")
        status = serializers.ChoiceField(choices=Policy.Status.choices, required=False)
        period = serializers.ChoiceField(
            choices=[
                (selectors.PERIOD_ENDS_30, "Ends within 30 days (today included)."),
                (selectors.PERIOD_ENDS_60, "Ends within 60 days."),
                (selectors.PERIOD_ENDED, "Ended before today."),
            ],
            required=False,
            help_text="`30` / `60`: ends within that many days; `bitti`: already ended (by `ends_on`).",
        )
        starts_from = serializers.DateField(required=False, help_text="`starts_on` on or after (YYYY-MM-DD).")
        starts_to = serializers.DateField(required=False, help_text="`starts_on` on or before (YYYY-MM-DD).")

        class Meta:
            ref_name = "PolicyListFilter"

    @extend_schema(
        operation_id="policies_list",
        summary="List policies",
        parameters=[ListFilterSerializer, *PAGE_PARAMETERS],
        responses={
            200: paginated(PolicySerializer, name="PaginatedPolicyList"),
            400: field_errors("Bad filter.", {"period": ['"90" geçerli bir seçim değil.']}),
            403: NOT_AUTHENTICATED,
        },
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        data = query_filters(self.ListFilterSerializer, request)
        policy_filter = selectors.PolicyFilter(
            product=data.get("product", ""),
            insurer=data.get("insurer", ""),
            status=data.get("status", ""),
            period=data.get("period", ""),
            starts_from=data.get("starts_from"),
            starts_to=data.get("starts_to"),
        )
        policies = selectors.policy_list(user=request.user, filters=policy_filter)
        return paginated_response(queryset=policies, serializer_class=PolicySerializer, request=request, view=self)


class PolicyDetailApi(APIView):
    @extend_schema(
        operation_id="policies_retrieve",
        summary="One policy, with its customer and the request it came from",
        parameters=[_path_id("policy_id", OpenApiTypes.INT, "The policy's `id`.")],
        responses={200: PolicyDetailSerializer, 403: NOT_AUTHENTICATED, 404: NOT_FOUND},
    )
    def get(self, request: AuthenticatedRequest, policy_id: str) -> Response:
        policy = policy_get(user=request.user, pk=pk_or_404(policy_id))
        return Response(PolicyDetailSerializer(policy).data)


class RenewalListApi(APIView):
    class ListFilterSerializer(serializers.Serializer):
        days = serializers.ChoiceField(
            choices=[(days, f"{days} days") for days in selectors.RENEWAL_WINDOWS],
            required=False,
            default=selectors.RENEWAL_WINDOWS[0],
            help_text="The window: policies ending within 30 (default) or 60 days, today included.",
        )

        class Meta:
            ref_name = "RenewalListFilter"

    @extend_schema(
        operation_id="renewals_list",
        summary="Policies in force ending soon (yenileme), soonest first",
        parameters=[ListFilterSerializer, *PAGE_PARAMETERS],
        responses={
            200: paginated(RenewalSerializer, name="PaginatedRenewalList"),
            400: field_errors("Bad filter.", {"days": ['"90" geçerli bir seçim değil.']}),
            403: NOT_AUTHENTICATED,
        },
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = query_filters(self.ListFilterSerializer, request)
        policies = selectors.renewal_list(user=request.user, days=int(filters["days"]))
        return paginated_response(queryset=policies, serializer_class=RenewalSerializer, request=request, view=self)


class RenewalQuoteApi(APIView):
    """The desk's "Yeniden teklif al" for other front ends: the same risk at every insurer."""

    def get_throttles(self):
        # A new quote request like any other: it costs the insurers the same.
        return [throttle() for throttle in QUOTE_CREATE_THROTTLES]

    throttled = QuoteRequestsApi.throttled

    @extend_schema(
        operation_id="renewals_quote",
        summary="Ask every insurer again for a policy's renewal (yeniden teklif)",
        description=(
            "A new quote request for the policy's product and risk (the input of the request it was "
            "issued from), for the same customer; answered like POST /api/quote-requests/. Only the "
            "policy's own agency may ask."
        ),
        parameters=[_path_id("policy_id", OpenApiTypes.INT, "The policy's `id`."), RETRY_AFTER],
        request=None,
        responses={
            201: QuoteRequestSerializer,
            400: field_errors("A body with fields: this operation takes none.", {"days": ["..."]}),
            403: NOT_AUTHENTICATED,
            404: NOT_FOUND,
            409: OpenApiResponse(
                DetailSerializer,
                description="The policy cannot be quoted again: it was imported without its risk, or its "
                "input no longer passes today's rules.",
            ),
            429: THROTTLED,
        },
    )
    def post(self, request: AuthenticatedRequest, policy_id: str) -> Response:
        api_input.EmptyInput.check(request.data)
        quote_request = renewal_quote_create(user=request.user, policy_id=pk_or_404(policy_id))
        rows = selectors.insurer_quotes_for(request=quote_request)
        return Response(quote_request_data(quote_request, rows), status=status.HTTP_201_CREATED)


class TokenObtainApi(ObtainAuthToken):
    """DRF's token login. No session authentication here, so a browser's cookie never demands CSRF."""

    authentication_classes = ()
    # ObtainAuthToken names DRF's parsers itself: the project's, so a broken body is answered in Turkish.
    # The stubs type the setting as it is written (dotted names); api_settings imports them: classes.
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES  # type: ignore[assignment]
    # Failed attempts count towards the same lock-out as the login page.
    serializer_class = ThrottledAuthTokenSerializer

    @extend_schema(
        operation_id="auth_token_create",
        summary="Get the user's API token",
        description=(
            "Send it on every call as `Authorization: Token <token>`. After many failed logins for a "
            "username, a login also needs the one-time code mailed to the account: a 400 on `code` asks "
            "for it; send it in `code` with the password."
        ),
        request=ThrottledAuthTokenSerializer,
        responses={
            200: inline_serializer("AuthTokenResponse", fields={"token": serializers.CharField()}),
            400: field_errors(
                "Wrong username or password, or the e-mailed code is needed.", {"non_field_errors": ["..."]}
            ),
            429: OpenApiResponse(
                DetailSerializer,
                description="Too many failed logins for this username from this address; see `Retry-After`.",
            ),
        },
    )
    def post(self, request: Request, *args, **kwargs) -> Response:
        return super().post(request, *args, **kwargs)
