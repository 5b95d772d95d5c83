"""The customer pages of the desk (Turkish paths, like talepler/ and policeler/)."""

from django.urls import path

from customers import views

urlpatterns = [
    path("musteriler/", views.customer_list, name="customer_list"),
    path("musteriler/ara/", views.customer_search, name="customer_search"),
    path("musteriler/sec/", views.customer_pick, name="customer_pick"),
    path("musteriler/yeni/", views.customer_new, name="customer_new"),
    path("musteriler/<int:pk>/", views.customer_detail, name="customer_detail"),
    path("musteriler/<int:pk>/duzenle/", views.customer_edit, name="customer_edit"),
]
