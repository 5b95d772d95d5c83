"""Routes under /api/. Ids are taken as text and checked in the view, so a malformed id answers
a JSON 404 like an unknown one rather than Django's HTML page."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from quotes.api import comparison, dask_address, views

app_name = "api"

urlpatterns = [
    path("quote-requests/", views.QuoteRequestsApi.as_view(), name="quote-requests"),
    # Before the detail route: "search" is no request id.
    path("quote-requests/search/", views.QuoteRequestSearchApi.as_view(), name="quote-request-search"),
    path("quote-requests/<str:public_id>/", views.QuoteRequestDetailApi.as_view(), name="quote-request-detail"),
    path(
        "quote-requests/<str:public_id>/comparison/",
        comparison.ComparisonApi.as_view(),
        name="quote-request-comparison",
    ),
    path(
        "insurer-quotes/<str:insurer_quote_id>/issue/",
        views.InsurerQuoteIssueApi.as_view(),
        name="insurer-quote-issue",
    ),
    path("issuances/<str:issuance_id>/", views.IssuanceDetailApi.as_view(), name="issuance-detail"),
    path("dask/address/", dask_address.DaskAddressApi.as_view(), name="dask-address"),
    path("policies/", views.PolicyListApi.as_view(), name="policies"),
    path("policies/<str:policy_id>/", views.PolicyDetailApi.as_view(), name="policy-detail"),
    path("renewals/", views.RenewalListApi.as_view(), name="renewals"),
    path("renewals/<str:policy_id>/quote/", views.RenewalQuoteApi.as_view(), name="renewal-quote"),
    path("", include("customers.api.urls")),
    path("", include("documents.api.urls")),
    path("", include("policies.api.urls")),
    path("auth/token/", views.TokenObtainApi.as_view(), name="auth-token"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI, for trying calls by hand, from the sidecar package's files. The split view serves
    # its start-up script at ?script= instead of inline: the Content-Security-Policy runs none.
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api:schema", template_name="api/swagger_ui.html"),
        name="docs",
    ),
]
