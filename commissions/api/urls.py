"""Commission routes under /api/, included by the project's URLconf (not by `quotes.api.urls`: the
quotes app knows nothing of commissions), in a namespace of their own. Ids are taken as text and
checked in the view, so a malformed id answers a JSON 404 like an unknown one."""

from django.urls import path

from commissions.api import views

app_name = "commissions_api"

urlpatterns = [
    path("commission-agreements/", views.CommissionAgreementsApi.as_view(), name="commission-agreements"),
    path(
        "commission-agreements/<str:agreement_id>/",
        views.CommissionAgreementDetailApi.as_view(),
        name="commission-agreement-detail",
    ),
    path("sub-agency-shares/", views.SubAgencySharesApi.as_view(), name="sub-agency-shares"),
    path("sub-agency-shares/<str:share_id>/", views.SubAgencyShareDetailApi.as_view(), name="sub-agency-share-detail"),
    path("production-report/", views.ProductionReportApi.as_view(), name="production-report"),
    path("policies/<str:policy_id>/commission/", views.PolicyCommissionApi.as_view(), name="policy-commission"),
]
