from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from agencies.auth import RateLimitedLoginView

urlpatterns = [
    # /metrics and the health dashboard under /admin/integrations/health/: before admin's catch-all.
    path("", include("integrations.urls")),
    path("admin/", admin.site.urls),
    path("giris/", RateLimitedLoginView.as_view(), name="login"),
    path("cikis/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("quotes.api.urls")),
    path("", include("customers.urls")),
    path("", include("documents.urls")),
    path("", include("quotes.urls")),
]
