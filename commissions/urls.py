"""The agency admin's commission page, beside its agents page under acente/."""

from django.urls import path

from commissions import views

urlpatterns = [
    path("acente/komisyonlar/", views.agreement_list, name="commission_agreements"),
]
