"""documents API routes, included under /api/ in the api namespace. Ids are taken as text and
checked in the view, so a malformed id answers a JSON 404 like an unknown one."""

from django.urls import path

from documents.api import views

urlpatterns = [
    path("policies/<str:policy_id>/document/", views.PolicyDocumentApi.as_view(), name="policy-document"),
    path(
        "policies/<str:policy_id>/document/refetch/",
        views.PolicyDocumentRefetchApi.as_view(),
        name="policy-document-refetch",
    ),
]
