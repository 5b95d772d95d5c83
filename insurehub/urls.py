from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic.base import RedirectView


class FaviconRedirect(RedirectView):
    """The static URL is looked up per request: in production it is the hashed name from
    collectstatic's manifest, which does not exist yet when this module is imported."""

    def get_redirect_url(self, *args: object, **kwargs: object) -> str:
        return static("favicon.svg")


# The admin's own titles, in Turkish (Django's are "Django site yöneticisi" / "Django yönetimi").
admin.site.site_header = "InsureHub yönetim paneli"
admin.site.site_title = "InsureHub yönetimi"
admin.site.index_title = "Yönetim"

urlpatterns = [
    # Browsers ask for /favicon.ico whatever the page says; answer with the real one, not a 404.
    path("favicon.ico", FaviconRedirect.as_view(permanent=True), name="favicon"),
    # /metrics and the console's health dashboard under /admin/integrations/health/: before admin's catch-all.
    path("", include("console.urls")),
    path("admin/", admin.site.urls),
    path("", include("agencies.login_urls")),
    path("api/", include("quotes.api.urls")),
    path("api/", include("commissions.api.urls")),
    path("", include("customers.urls")),
    path("", include("documents.urls")),
    path("", include("notifications.urls")),
    path("", include("quotes.urls")),
    path("", include("vehicles.urls")),
    path("", include("policies.urls")),
    path("", include("commissions.urls")),
    path("", include("outreach.urls")),
]
