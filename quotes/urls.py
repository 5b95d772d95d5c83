"""The agent's quote desk pages (Turkish paths, like giris/ and cikis/)."""

from django.urls import include, path

from quotes.views import comparison, issuance, policies, quote_requests, renewals

urlpatterns = [
    path("", quote_requests.quote_request_new, name="home"),
    path("teklif/yeni/<slug:product>/", quote_requests.quote_request_new, name="quote_request_new"),
    path("talepler/", quote_requests.quote_request_list, name="quote_request_list"),
    path("talepler/ara/", quote_requests.quote_request_search, name="quote_request_search"),
    path("talepler/<uuid:public_id>/", quote_requests.quote_request_detail, name="quote_request_detail"),
    path("talepler/<uuid:public_id>/yeniden/", quote_requests.quote_request_rerun, name="quote_request_rerun"),
    path("talepler/<uuid:public_id>/karsilastir/", comparison.comparison_page, name="comparison"),
    path("talepler/<uuid:public_id>/karsilastir.pdf", comparison.comparison_download, name="comparison_download"),
    path("talepler/<uuid:public_id>/sonuclar/", quote_requests.quote_request_results, name="quote_request_results"),
    path("talepler/<uuid:public_id>/akis/", quote_requests.quote_request_stream, name="quote_request_stream"),
    path("teklifler/<int:pk>/policelestir/", issuance.issuance_confirm, name="issuance_confirm"),
    path("policelestirme/<int:pk>/", issuance.issuance_detail, name="issuance_detail"),
    path("policelestirme/<int:pk>/durum/", issuance.issuance_status, name="issuance_status"),
    path("policelestirme/<int:pk>/akis/", issuance.issuance_stream, name="issuance_stream"),
    path("policeler/", policies.policy_list, name="policy_list"),
    path("policeler/ara/", policies.policy_search, name="policy_search"),
    path("policeler/disari-aktar/", policies.policy_export, name="policy_export"),
    path("policeler/<int:pk>/", policies.policy_detail, name="policy_detail"),
    path("yenilemeler/", renewals.renewal_list, name="renewal_list"),
    path("yenilemeler/<int:pk>/teklif/", renewals.renewal_quote, name="renewal_quote"),
    path(
        "talepler/<uuid:public_id>/sonra-baslat/<int:policy_pk>/",
        renewals.quote_request_after_policy_view,
        name="quote_request_after_policy",
    ),
    # The agency admin's page lives on the desk, beside the pages its agents use.
    path("acente/", include("agencies.urls")),
]
