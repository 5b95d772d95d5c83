"""The agency admin's commission pages, beside its agents page under acente/."""

from django.urls import path

from commissions import views

urlpatterns = [
    path("acente/komisyonlar/", views.agreement_list, name="commission_agreements"),
    path("acente/uretim-raporu/", views.production_report, name="production_report"),
]
