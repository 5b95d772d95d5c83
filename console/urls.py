"""The operator console's URLs; included by the project *before* `admin/`.

The dashboard lives under /admin/ as an admin page (an admin login through `admin_view`, then
the `integrations.view_attempt` permission, checked in the view), and
must come before the admin's own patterns, whose catch-all would answer 404 for it.
"""

from django.contrib import admin
from django.urls import path

from console import views
from console.csp_reports import csp_report

urlpatterns = [
    path("metrics", views.metrics_view, name="metrics"),
    path("csp-rapor/", csp_report, name="csp_report"),
    path(
        "admin/integrations/health/",
        admin.site.admin_view(views.health_dashboard),
        name="integrations_health",
    ),
    path(
        "admin/integrations/health/classify/",
        admin.site.admin_view(views.unknown_code_classify),
        name="integrations_health_classify",
    ),
]
