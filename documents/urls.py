"""documents desk pages: a policy's PDF, under the policy's own path."""

from django.urls import path

from documents import views

urlpatterns = [
    path("policeler/<int:pk>/belge/", views.policy_document_download, name="policy_document_download"),
    path("policeler/<int:pk>/belge/durum/", views.policy_document_status, name="policy_document_status"),
    path("policeler/<int:pk>/belge/akis/", views.policy_document_stream, name="policy_document_stream"),
    path("policeler/<int:pk>/belge/yenile/", views.policy_document_refetch, name="policy_document_refetch"),
]
