"""The agency admin's desk pages (included by quotes.urls under acente/)."""

from django.urls import path

from agencies import views

urlpatterns = [
    path("calisanlar/", views.agent_list, name="agency_agents"),
    path("calisanlar/<int:agent_id>/durum/", views.agent_toggle, name="agency_agent_toggle"),
]
