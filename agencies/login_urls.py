"""Signing in and out, included by the root URLconf at the site's top (`/giris/`, `/cikis/`)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from agencies.auth import RateLimitedLoginView

urlpatterns = [
    path("giris/", RateLimitedLoginView.as_view(), name="login"),
    path("cikis/", auth_views.LogoutView.as_view(), name="logout"),
]
