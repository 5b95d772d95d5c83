"""customers API routes, included under /api/ in the api namespace. Ids are taken as text and
checked in the view, so a malformed id answers a JSON 404 like an unknown one."""

from django.urls import path

from customers.api import views

urlpatterns = [
    path("customers/", views.CustomersApi.as_view(), name="customers"),
    # Before the detail route: "search" is no customer id.
    path("customers/search/", views.CustomerSearchApi.as_view(), name="customer-search"),
    path("customers/<str:customer_id>/", views.CustomerDetailApi.as_view(), name="customer-detail"),
]
