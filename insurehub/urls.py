from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic.base import RedirectView

from agencies.auth import RateLimitedLoginView

urlpatterns = [
    # Browsers ask for /favicon.ico whatever the page says; answer with the real one, not a 404.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    # /metrics and the health dashboard under /admin/integrations/health/: before admin's catch-all.
    path("", include("integrations.urls")),
    path("admin/", admin.site.urls),
    path("giris/", RateLimitedLoginView.as_view(), name="login"),
    path("cikis/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("quotes.api.urls")),
    path("", include("customers.urls")),
    path("", include("documents.urls")),
    path("", include("notifications.urls")),
    path("", include("quotes.urls")),
]
