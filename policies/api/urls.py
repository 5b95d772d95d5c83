from django.urls import path

from policies.api import views

urlpatterns = [
    path("policies/<str:policy_id>/cancel/", views.PolicyCancelApi.as_view(), name="policy-cancel"),
    path("cancellations/<str:cancellation_id>/", views.CancellationDetailApi.as_view(), name="cancellation-detail"),
]
