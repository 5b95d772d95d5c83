"""Customers over the API: list and create, read and change one; always the user's agency's.

Conventions as in `quotes.api.views`: reads go through the agency-scoped selectors, so another
agency's id answers 404 exactly like an unknown one; errors are `{"field": ["message"]}` (400)
and `{"detail": "message"}` (401/403/404), answered by the one exception handler
(`insurehub.api_errors`) from the services' errors.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from customers import selectors
from customers.api.serializers import CustomerInputSerializer, CustomerSerializer
from customers.services import customer_create, customer_update
from insurehub.api.filters import SearchInputSerializer, query_filters, search_not_in_url, search_post_description
from insurehub.api.ids import pk_or_404
from insurehub.api.pagination import PAGE_PARAMETERS, paginated, paginated_response
from insurehub.api.responses import NOT_AUTHENTICATED, NOT_FOUND, DetailSerializer, field_errors
from insurehub.request_types import AuthenticatedRequest

CUSTOMER_SEARCH_PATH = "/api/customers/search/"
# One component for the list and its POST search: the same page of the same items.
PAGINATED_CUSTOMERS = paginated(CustomerSerializer, name="PaginatedCustomerList")

CUSTOMER_ID = OpenApiParameter(
    "customer_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The customer's `id`."
)
NO_AGENCY = OpenApiResponse(
    DetailSerializer,
    description="Not logged in, or the user acts for no agency (a cross-agency reader writes nothing).",
)
CREATE_EXAMPLE = OpenApiExample(
    "Person with KVKK consent",
    request_only=True,
    value={
        "name": "Ayşe Yılmaz",
        "identity_no": "10000000146",
        "phone": "0532 123 45 67",
        "email": "ayse@example.com",
        "kvkk_consent_at": "2026-11-30T10:00:00+03:00",
        "kvkk_consent_channel": "wet_signature",
    },
)


class CustomersApi(APIView):
    """GET lists the agency's customers; POST adds one."""

    class ListFilterSerializer(serializers.Serializer):
        search = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=64,
            help_text="Part of a name. A TCKN/VKN is searched with POST /api/customers/search/ (400 here).",
        )

        class Meta:
            ref_name = "CustomerListFilter"

        def validate_search(self, value: str) -> str:
            return search_not_in_url(value, search_path=CUSTOMER_SEARCH_PATH)

    @extend_schema(
        operation_id="customers_list",
        summary="List customers",
        parameters=[ListFilterSerializer, *PAGE_PARAMETERS],
        responses={
            200: PAGINATED_CUSTOMERS,
            400: field_errors(
                "Bad filter, or an identity number in the URL (search it with POST /api/customers/search/).",
                {"search": ["Bu alan en fazla 64 karakter olmalıdır."]},
            ),
            403: NOT_AUTHENTICATED,
        },
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = query_filters(self.ListFilterSerializer, request)
        customers = selectors.customer_list(user=request.user, search=filters.get("search", ""))
        return paginated_response(queryset=customers, serializer_class=CustomerSerializer, request=request, view=self)

    @extend_schema(
        operation_id="customers_create",
        summary="Add a customer",
        request=CustomerInputSerializer,
        examples=[CREATE_EXAMPLE],
        responses={
            201: CustomerSerializer,
            400: field_errors(
                "Invalid input, or the agency already has a customer with this number; nothing was saved.",
                {"identity_no": ["Bu T.C. kimlik / vergi numarasıyla kayıtlı bir müşteriniz zaten var."]},
            ),
            403: NO_AGENCY,
        },
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        serializer = CustomerInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        customer = customer_create(user=request.user, data=serializer.validated_data)
        return Response(CustomerSerializer(customer).data, status=status.HTTP_201_CREATED)


class CustomerSearchApi(APIView):
    """POST: the agency's customers by name or a full TCKN/VKN, the term in the body."""

    @extend_schema(
        operation_id="customers_search",
        summary="Search customers (by name or a full TCKN/VKN)",
        description=search_post_description("/api/customers/"),
        request=SearchInputSerializer,
        parameters=PAGE_PARAMETERS,
        examples=[OpenApiExample("By TCKN", request_only=True, value={"search": "10000000146"})],
        responses={
            200: PAGINATED_CUSTOMERS,
            400: field_errors("Bad term.", {"search": ["Bu alan boş bırakılamaz."]}),
            403: NOT_AUTHENTICATED,
        },
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        term = SearchInputSerializer(data=request.data)
        term.is_valid(raise_exception=True)
        customers = selectors.customer_list(user=request.user, search=term.validated_data["search"])
        return paginated_response(queryset=customers, serializer_class=CustomerSerializer, request=request, view=self)


class CustomerDetailApi(APIView):
    @extend_schema(
        operation_id="customers_retrieve",
        summary="A customer",
        parameters=[CUSTOMER_ID],
        responses={200: CustomerSerializer, 403: NOT_AUTHENTICATED, 404: NOT_FOUND},
    )
    def get(self, request: AuthenticatedRequest, customer_id: str) -> Response:
        customer = selectors.customer_get(user=request.user, pk=pk_or_404(customer_id))
        return Response(CustomerSerializer(customer).data)

    @extend_schema(
        operation_id="customers_partial_update",
        summary="Change a customer",
        description="Only the fields sent change; the customer is checked again as a whole.",
        parameters=[CUSTOMER_ID],
        request=CustomerInputSerializer,
        responses={
            200: CustomerSerializer,
            400: field_errors(
                "Invalid input; nothing was saved.",
                {"kvkk_consent_channel": ["KVKK onay zamanı girildiyse onay şekli de seçilmelidir."]},
            ),
            403: NO_AGENCY,
            404: NOT_FOUND,
        },
    )
    def patch(self, request: AuthenticatedRequest, customer_id: str) -> Response:
        # Changing stays with the customer's own agency, whatever else the user may read.
        customer = selectors.customer_get_for_edit(user=request.user, pk=pk_or_404(customer_id))
        serializer = CustomerInputSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        customer = customer_update(user=request.user, customer=customer, data=serializer.validated_data)
        return Response(CustomerSerializer(customer).data)
