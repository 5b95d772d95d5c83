"""The vehicle picker's answers on the desk (Turkish paths, like talepler/ and musteriler/)."""

from django.urls import path

from vehicles import views

urlpatterns = [
    path("araclar/markalar/", views.vehicle_brands, name="vehicle_brands"),
    path("araclar/tipler/", views.vehicle_types, name="vehicle_types"),
    path("araclar/yillar/", views.vehicle_years, name="vehicle_years"),
]
