"""The desk's policy operations (Turkish paths, beside policeler/)."""

from django.urls import path

from policies import views

urlpatterns = [
    path("policeler/<int:pk>/iptal/", views.policy_cancel, name="policy_cancel"),
    path("iptaller/<int:pk>/", views.cancellation_detail, name="cancellation_detail"),
    path("iptaller/<int:pk>/durum/", views.cancellation_status, name="cancellation_status"),
    path("policeler/portfoy-aktar/", views.portfolio_upload, name="portfolio_upload"),
    path("mukerrer-policeler/", views.duplicate_list, name="duplicate_list"),
    path("mukerrer-policeler/<int:pk>/iptal/", views.duplicate_cancel, name="duplicate_cancel"),
]
