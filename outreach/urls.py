"""Outreach pages: on the desk beside the customer and the request, and the public offer link."""

from django.urls import path

from outreach import views

urlpatterns = [
    path("musteriler/<int:pk>/iletisim-izni/", views.consent_record, name="consent_record"),
    path("talepler/<uuid:public_id>/musteriye-gonder/", views.offer_send_view, name="offer_send"),
    path("talepler/<uuid:public_id>/teklif.pdf", views.offer_download, name="offer_download"),
    # Public by design (like /csp-rapor/): the signed, expiring token is the key, not a login.
    path("teklif/<str:token>/", views.offer_public, name="offer_public"),
    path("teklif/<str:token>/indir/", views.offer_public_pdf, name="offer_public_pdf"),
]
